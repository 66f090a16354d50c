"""The DRY lens's stored index (per blob, reused, robust to damage, skipped when no finding is
possible) and its recall on copies that keep some names and rename the rest."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from reviewgate.cache_trust import KEY_BYTES, ReviewCache
from reviewgate.context import ReviewRequest
from reviewgate.freeze.freeze import freeze
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.lenses.duplication.added_code import queries as changed_queries
from reviewgate.reviewers.builtin.lenses.duplication.candidate_files import MAX_FILE_BYTES, is_product_candidate
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import (
    FINGERPRINT_FORMAT,
    WINDOW,
    Normalized,
    consistent_renaming,
)
from reviewgate.reviewers.builtin.lenses.duplication.hashes import HASH_TYPECODE
from reviewgate.reviewers.builtin.lenses.duplication.index import BlobIndex
from reviewgate.reviewers.builtin.lenses.duplication.rules import rewrapped_lines, split_out_copies
from reviewgate.reviewers.builtin.lenses.duplication.tree_places import places_of
from reviewgate.text import decode_text
from testing.changes import DRY_COPY as COPY
from testing.changes import DRY_EXISTING as EXISTING
from testing.changes import DRY_JOBS as JOBS
from testing.lenses import gate_cache, review_change
from testing.repo import make_repo
from tests.test_dry_runs import plain_window_hash

OTHER = "def other(count):\n    total = 0\n    for step in range(count):\n        total += step * 3\n    return total\n"
Found = list[tuple[str, int | None, int | None, str]]


def _duplicates(root: Path, branch: dict[str, str], cache: Path | None = None) -> Found:
    sections = {"cache": {"dir": str(cache)}} if cache else None
    findings = review_change(root, {"app/settings.py": EXISTING, "app/jobs.py": JOBS, "app/other.py": OTHER},
                             branch, sections=sections)
    return [(item.path, item.line, item.end_line, item.title) for item in findings
            if item.rule == "reuse/duplicate-code"]


def _packs(cache: Path) -> list[Path]:
    return sorted((cache / "dry-index" / f"v{FINGERPRINT_FORMAT}").glob("*.pack"))


def _count_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """The blob ids BlobIndex.`name` is called with, the method still doing its work."""
    calls: list[str] = []
    real = getattr(BlobIndex, name)

    def counted(self: BlobIndex, blob: str, *rest: object) -> object:
        calls.append(blob)
        return real(self, blob, *rest)

    monkeypatch.setattr(BlobIndex, name, counted)
    return calls


def test_a_change_too_small_for_a_finding_reads_and_builds_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _count_calls(monkeypatch, "load")
    # Four new lines of code, where a finding needs five in one file.
    assert _duplicates(tmp_path, {"app/jobs.py": JOBS + "\n\ndef more(a):\n    b = a + 1\n    return b * 2\n"}) == []
    assert reads == []
    assert not (tmp_path / "repo" / ".reviewgate-cache" / "dry-index").exists()


def test_the_index_is_kept_by_blob_and_reused_with_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cold = _duplicates(tmp_path / "cold", {"app/jobs.py": JOBS + COPY}, cache)
    assert [(path, line) for path, line, _, _ in cold] == [("app/jobs.py", 8)]
    assert len(_packs(cache)) == 1
    assert "\n*\n" in (cache / ".gitignore").read_text()  # the cache directory ignores itself
    # Another repository with the same contents: every blob is known, none is computed again.
    computed = _count_calls(monkeypatch, "add")
    assert _duplicates(tmp_path / "warm", {"app/jobs.py": JOBS + COPY}, cache) == cold
    assert computed == []
    assert len(_packs(cache)) == 1
    # A new content of a file is a new blob: only it is computed.
    assert _duplicates(tmp_path / "edited", {"app/jobs.py": JOBS + COPY + "\nLIMIT = 3\n"}, cache) == cold
    assert len(computed) == 1


def test_a_damaged_pack_is_computed_again_never_a_crash(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    expected = _duplicates(tmp_path / "first", {"app/jobs.py": JOBS + COPY}, cache)
    (pack,) = _packs(cache)
    whole = pack.read_bytes()
    damaged = bytearray(whole)
    damaged[-3] ^= 0xFF  # one hash changed: the checksum no longer agrees
    pack.write_bytes(bytes(damaged))
    assert _duplicates(tmp_path / "second", {"app/jobs.py": JOBS + COPY}, cache) == expected
    # Computed again from the same blobs, the pack is the same bytes under the same name.
    assert _packs(cache) == [pack] and pack.read_bytes() == whole
    pack.write_bytes(whole[:7])  # cut short
    assert _duplicates(tmp_path / "third", {"app/jobs.py": JOBS + COPY}, cache) == expected
    assert _packs(cache) == [pack] and pack.read_bytes() == whole


def _listed(values: array[int] | None) -> list[int]:
    return [] if values is None else values.tolist()


def test_packs_of_another_format_or_from_past_trees_are_not_read_and_do_not_pile_up(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    keyed = ReviewCache(cache, key=os.urandom(KEY_BYTES))
    stored = BlobIndex(keyed)
    stored.add("a" * 40, array(HASH_TYPECODE, [3, 1, 2, 3]))
    stored.save()
    (pack,) = _packs(cache)
    data = bytearray(pack.read_bytes()[:-65])  # without its seal
    data[4] += 1  # the format field
    pack.write_bytes(keyed.seal("dry-pack", f"dry-index/v{FINGERPRINT_FORMAT}/{pack.name}", bytes(data)))
    assert BlobIndex(keyed).load("a" * 40) is None
    for number in range(9):
        extra = BlobIndex(keyed)
        extra.add(f"{number:040x}", array(HASH_TYPECODE, [number]))
        extra.save()
    compacting = BlobIndex(keyed)
    assert _listed(compacting.load(f"{3:040x}")) == [3]
    compacting.add("b" * 40, array(HASH_TYPECODE, [7, 5]))
    compacting.save()
    remaining = _packs(cache)
    assert len(remaining) == 1  # only the entries this run's tree used are kept
    fresh = BlobIndex(keyed)
    assert _listed(fresh.load("b" * 40)) == [5, 7]
    assert _listed(fresh.load(f"{3:040x}")) == [3]
    assert fresh.load(f"{4:040x}") is None


def test_a_cache_that_is_turned_off_keeps_nothing(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"app/settings.py": EXISTING, "app/jobs.py": JOBS},
                             {"app/jobs.py": JOBS + COPY}, sections={"cache": {"enabled": False}})
    assert [item.line for item in findings if item.rule == "reuse/duplicate-code"] == [8]
    assert not (tmp_path / "repo" / ".reviewgate-cache").exists()


def test_a_name_kept_as_it_is_agrees_with_any_renaming() -> None:
    # `self.value = value` copied as `self.value = amount`: the attribute keeps its name.
    assert consistent_renaming(["self", "value", "value"], ["self", "value", "amount"]) == 1.0
    assert consistent_renaming(["a", "b"], ["x", "x"]) == 0.5


FIRST_READY = '''

def first_ready(items, limit):
    """Return the first ready item."""
    for entry in items:
        if entry.ready and entry.size < limit:
            entry.touch()
            return entry
    return None
'''
DESCRIBE = '''

def describe(record, prefix="- "):
    parts = [prefix, record.name]
    if record.owner:
        parts.append(record.owner.upper())
    parts.append(str(record.size))
    return " ".join(parts)
'''


def test_two_copies_side_by_side_are_both_found(tmp_path: Path) -> None:
    # Copied one after the other from two files, each run also matches a token or two of its neighbour.
    copies = '''

def pick(rows, most):
    """Return the first ready item."""
    for row in rows:
        if row.ready and row.size < most:
            row.touch()
            return row
    return None


def render(thing, lead="- "):
    pieces = [lead, thing.name]
    if thing.owner:
        pieces.append(thing.owner.upper())
    pieces.append(str(thing.size))
    return " ".join(pieces)
'''
    findings = review_change(tmp_path, {"app/ready.py": FIRST_READY, "app/describe.py": DESCRIBE, "app/jobs.py": JOBS},
                             {"app/jobs.py": JOBS + copies})
    found = sorted((item.line, item.end_line, item.body) for item in findings if item.rule == "reuse/duplicate-code")
    assert [(first, last) for first, last, _ in found] == [(8, 14), (17, 22)]
    assert "at app/ready.py:3-9" in found[0][2] and "at app/describe.py:3-8" in found[1][2]


LIMITS = '''

def build_limits(config):
    limits = {"upload": 1048576, "download": 5242880, "parts": 16}
    limits["timeout"] = 30
    if config.get("strict"):
        limits["retries"] = 0
    else:
        limits["retries"] = 5
    limits["regions"] = ["eu-west-1", "us-east-1", "ap-south-1"]
    return limits
'''


@pytest.mark.parametrize(
    ("copy", "expected"),
    [
        # The same data under new names is the same table.
        (LIMITS.replace("build_limits", "make_quota").replace("config", "settings").replace("limits", "quota"),
         [(8, 16)]),
        # The same shape with other data is another table.
        (LIMITS.replace("1048576", "2097152").replace("eu-west-1", "eu-north-1"), []),
    ],
)
def test_a_table_is_a_copy_when_its_data_is_the_same_whatever_its_names(
    tmp_path: Path, copy: str, expected: list[tuple[int, int]]
) -> None:
    findings = review_change(tmp_path, {"app/limits.py": LIMITS, "app/jobs.py": JOBS}, {"app/jobs.py": JOBS + copy})
    assert [(item.line, item.end_line) for item in findings if item.rule == "reuse/duplicate-code"] == expected


def _plain_places(request: ReviewRequest, wanted: set[int]) -> dict[int, list[tuple[str, int]]]:
    """Every line-start window of every file the lens indexes at head whose hash the added code has,
    computed the plain way: each file normalized and each window hashed on its own."""
    places: dict[int, list[tuple[str, int]]] = {}
    for path, data in request.head.read_blob_ids(request.head.blob_ids(None, max_bytes=MAX_FILE_BYTES)).items():
        if not is_product_candidate(request, path):
            continue
        normalized = Normalized.of(decode_text(data), language_of(path))
        data_bytes = normalized.text.encode("ascii", "replace")
        for start, line in zip(normalized.line_starts, normalized.lines, strict=True):
            digest = plain_window_hash(data_bytes[start : start + WINDOW])
            if line and start + WINDOW <= len(normalized.text) and digest in wanted:
                places.setdefault(digest, []).append((path, start))
    return places


def test_cold_and_warm_indexes_hold_every_place_the_plain_computation_finds(tmp_path: Path) -> None:
    """The index a run builds, with no stored entry (cold) and with every entry stored (warm), has
    exactly the places of the plain computation over the whole tree: real modules of this
    repository (not touched by the change), a non-ASCII one, JavaScript with import lines and an
    over-long line, and a change that copies one of them under new names."""
    lenses = Path(__file__).resolve().parent.parent / "reviewgate" / "reviewers" / "builtin" / "lenses"
    base = {f"pkg/{path.relative_to(lenses).as_posix()}": path.read_text(encoding="utf-8")
            for path in sorted(lenses.rglob("*.py"))}
    base["pkg/unicode_names.py"] = "def déjà(naïve, größe):\n    total = naïve + größe\n    return total * 2\n" * 3
    base["web/app.js"] = ("import a from 'b'\nconst c = require('d')\n" + "const x = [" + "1, " * 200 + "]\n"
                          + "function f(a, b) {\n  if (a > b) {\n    return a - b\n  }\n  return b - a\n}\n")
    copied = base["pkg/duplication/index.py"].replace("entries", "records").replace("values", "numbers")
    branch = {
        "pkg/stored.py": copied,
        "pkg/more_names.py": base["pkg/unicode_names.py"].replace("größe", "taille"),
        "web/more.js": base["web/app.js"].replace("function f(a, b)", "function g(left, right)"),
    }
    repo = make_repo(tmp_path, base, branch)
    cache = tmp_path / "cache"
    for state in ("cold", "warm"):
        target = freeze(repo.path, base="main")
        request = ReviewRequest(target=target, head=TreeReader(repo.path, target.head_sha),
                                cache=gate_cache(repo.path, {"cache": {"dir": str(cache)}}))
        queries = changed_queries(request, split_out_copies(request))
        for query in queries.values():
            query.hash_windows()
        wanted = {digest for query in queries.values() for digest in query.hashes.tolist()}
        places, _, _ = places_of(request, queries)
        table = places.table
        index = {
            digest: sorted(
                (places.paths[number], offset)
                for number, offset in zip(
                    table.files[table.first[position] : table.first[position + 1]].tolist(),
                    table.offsets[table.first[position] : table.first[position + 1]].tolist(),
                    strict=True,
                )
            )
            for position, digest in enumerate(table.hashes.tolist())
        }
        assert index == {digest: sorted(found) for digest, found in _plain_places(request, wanted).items()}, state
        indexed = {path for found in index.values() for path, _ in found}
        assert {"pkg/duplication/index.py", "pkg/unicode_names.py", "web/app.js"} <= indexed
    assert _packs(cache)


def test_a_cold_index_reads_the_repository_a_batch_at_a_time_with_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory: a cold run reads every file of the repository, never all of their bytes at once."""
    whole = _duplicates(tmp_path / "whole", {"app/jobs.py": JOBS + COPY})
    from reviewgate.reviewers.builtin.lenses.duplication import tree_places

    monkeypatch.setattr(tree_places, "READ_BATCH_FILES", 1)
    asked: list[int] = []
    real = TreeReader.read_blob_ids

    def counted(self: TreeReader, blobs: dict[str, str]) -> dict[str, bytes]:
        asked.append(len(blobs))
        return real(self, blobs)

    monkeypatch.setattr(TreeReader, "read_blob_ids", counted)
    assert _duplicates(tmp_path / "batched", {"app/jobs.py": JOBS + COPY}) == whole
    # settings.py and other.py hashed one at a time, then the one the copy shares read for its places
    assert asked and max(asked) == 1 and len(asked) >= 3


def test_the_index_holds_the_commit_whatever_the_checkout_holds(tmp_path: Path) -> None:
    """The cold index reads the checkout's files only where they hold the commit's blobs
    (freeze/checkout.py): a file rewritten there after the commit, here into a renamed copy of
    the added code, is read from git, and so is found to repeat nothing."""
    def rewrite(repo: Path) -> None:
        (repo / "app/settings.py").write_text(EXISTING, encoding="utf-8")

    base = {"app/settings.py": OTHER, "app/jobs.py": JOBS}
    branch = {"app/jobs.py": JOBS + COPY}
    assert [item for item in review_change(tmp_path / "rewritten", base, branch, before_review=rewrite)
            if item.rule == "reuse/duplicate-code"] == []
    # Committed, the same file is a copy: the rewrite alone would have been reported.
    committed = review_change(tmp_path / "committed", {**base, "app/settings.py": EXISTING}, branch)
    assert [item.path for item in committed if item.rule == "reuse/duplicate-code"] == ["app/jobs.py"]


def test_a_changed_file_is_decoded_once_for_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory: the index takes a changed file's text from its query, not a second copy of it."""
    from reviewgate.reviewers.builtin.lenses.duplication import tree_places

    decoded: list[str] = []

    def recorded(data: bytes, *, starts_file: bool = True) -> str:
        decoded.append(decode_text(data, starts_file=starts_file))
        return decoded[-1]

    monkeypatch.setattr(tree_places, "decode_text", recorded)
    assert [(path, line) for path, line, _, _ in _duplicates(tmp_path, {"app/jobs.py": JOBS + COPY})] == [
        ("app/jobs.py", 8)
    ]
    assert EXISTING in decoded  # a file the added code repeats is read for its places
    assert JOBS + COPY not in decoded


def test_line_starts_cost_four_bytes_a_line() -> None:
    """Memory: a file's line starts are one machine array (a tuple of numbers took 36 bytes a line,
    13 MB over the files of a +300k-line change), with the same offsets."""
    text = "def a(b):\n    return b\n\n# note\nc = a(1)\n"
    normalized = Normalized.of(text, Language.PYTHON)
    assert normalized.line_starts.itemsize == 4
    assert list(normalized.line_starts) == [0, 8, 15, 15, 15, 21]


def test_an_appended_file_has_no_diff_line_read_for_rewrapped_or_split_out_code(tmp_path: Path) -> None:
    """Memory: the DRY lens runs in a worker forked from the gate, and reading a diff line (a
    reference counted) copies the page it shares with the gate: at +300k lines appended, 62 MB
    copied before the lens had computed anything. What a change only appends to is not re-wrapped
    code and not a source that code was split out of; its diff's lines are left unread."""
    repo = make_repo(tmp_path, {"app/jobs.py": JOBS}, {"app/jobs.py": JOBS + COPY})
    target = freeze(repo.path, base="main")
    (change,) = target.files
    request = ReviewRequest(target=target, head=TreeReader(repo.path, target.head_sha))
    assert split_out_copies(request) == set() and rewrapped_lines(change) == set()
    assert change.__dict__["_hunks_value"] == ()  # never parsed into lines
    assert change.added_line_numbers() == set(change.added_lines())


def test_the_added_lines_of_an_appended_file_are_held_as_one_range(tmp_path: Path) -> None:
    """Memory: a set of line numbers took about 45 bytes a line (12 MB at +300k lines appended);
    lines that follow each other are one range, the same numbers."""
    repo = make_repo(tmp_path, {"app/jobs.py": JOBS, "app/other.py": OTHER},
                     {"app/jobs.py": JOBS + COPY, "app/other.py": "# head\n" + OTHER + "\n" + COPY})
    target = freeze(repo.path, base="main")
    request = ReviewRequest(target=target, head=TreeReader(repo.path, target.head_sha))
    queries = changed_queries(request, set())
    appended, edited = queries["app/jobs.py"], queries["app/other.py"]
    assert isinstance(appended.added, range) and set(appended.added) == set(appended.change.added_lines())
    assert not isinstance(edited.added, range) and set(edited.added) == set(edited.change.added_lines())
