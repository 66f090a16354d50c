"""The DRY search (runs.py, hashes.py), compiled and in Python, answers exactly what the plain
computations answer: each window hashed on its own, each place of each window visited in turn and
its run walked character by character."""

from __future__ import annotations

import random
from array import array
from collections.abc import Sequence
from itertools import compress

import pytest

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication import fingerprints, runs
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import WINDOW, Normalized
from reviewgate.reviewers.builtin.lenses.duplication.hashes import (
    BASE,
    HASH_TYPECODE,
    CompiledWindowHashes,
    Hashes,
    window_hashes,
)
from reviewgate.reviewers.builtin.lenses.duplication.sizes import MIN_CHARACTERS

MODULUS = 1 << 64


def plain_window_hash(window: bytes) -> int:
    """A window's hash as hashes.py defines it: the polynomial in its bytes, its high 32 bits."""
    return (sum(byte * pow(BASE, power, MODULUS) for power, byte in enumerate(window)) % MODULUS) >> 32


BUILT_ONLY_WITH_A_COMPILER = "built only where a C compiler is at hand (.ci/run checks that it was)"
needs_compiled = pytest.mark.skipif(runs._compiled_regions_found is None, reason=BUILT_ONLY_WITH_A_COMPILER)


@pytest.fixture(params=["compiled", "python"])
def hashing_path(request: pytest.FixtureRequest) -> CompiledWindowHashes | None:
    """What `hashes.window_hashes` hashes by: compiled (`_normalize.window_hashes`), or the prefix
    sums (None)."""
    if request.param == "compiled" and fingerprints.compiled_window_hashes is None:
        pytest.skip(BUILT_ONLY_WITH_A_COMPILER)
    return fingerprints.compiled_window_hashes if request.param == "compiled" else None


def test_window_hashes_are_the_polynomial_of_each_window_on_its_own(hashing_path: CompiledWindowHashes | None) -> None:
    rng = random.Random(3)
    for size in (WINDOW, WINDOW + 1, 97, 1000, 5000):
        data = bytes(rng.randrange(256) for _ in range(size))
        offsets = sorted(rng.sample(range(size - WINDOW + 1), min(60, size - WINDOW + 1)))
        assert window_hashes(data, offsets, WINDOW, hashing_path).tolist() == [
            plain_window_hash(data[offset : offset + WINDOW]) for offset in offsets]
    # Longer files than any before grow the tables of powers, and shorter ones still read them.
    long_data = bytes(rng.randrange(256) for _ in range(70_000))
    assert window_hashes(long_data, [69_000], WINDOW, hashing_path)[0] == plain_window_hash(
        long_data[69_000 : 69_000 + WINDOW])
    assert len(window_hashes(b"", [], WINDOW, hashing_path)) == 0


@needs_compiled
def test_the_compiled_hashes_refuse_an_offset_with_no_whole_window() -> None:
    assert fingerprints.compiled_window_hashes is not None
    with pytest.raises(ValueError, match="offset 2 has no whole window in 41 bytes"):
        fingerprints.compiled_window_hashes(b"x" * (WINDOW + 1), array(HASH_TYPECODE, [1, 2]))
    with pytest.raises(ValueError, match="not 4-byte items"):
        fingerprints.compiled_window_hashes(b"x" * WINDOW, array("B", [0]))


def _kept(values: Hashes, kept: Sequence[bool]) -> Hashes:
    return array(values.typecode, compress(values, kept))


def _anchors(files: Sequence[Normalized]) -> list[tuple[Hashes, Hashes]]:
    return [(array(HASH_TYPECODE, starts := file.anchor_offsets()), file.anchor_hashes(starts)) for file in files]


def plain_extent(left: str, left_start: int, right: str, right_start: int) -> tuple[int, int]:
    back = 0
    while left_start - back > 0 and right_start - back > 0 and left[left_start - back - 1] == right[right_start - back - 1]:
        back += 1
    forward = 0
    while (
        left_start + forward < len(left)
        and right_start + forward < len(right)
        and left[left_start + forward] == right[right_start + forward]
    ):
        forward += 1
    return back, forward


def plain_whole_lines(normalized: Normalized, start: int, end: int) -> tuple[int, int]:
    """A run moved inwards to the nearest line boundaries, line by line."""
    starts, lines = list(normalized.line_starts), normalized.lines
    whole_start = next((line_start for line_start in starts if line_start >= start), len(normalized.text))
    index = max(number for number, line_start in enumerate(starts) if line_start <= end)
    return whole_start, end if end >= starts[index] + len(lines[index]) else starts[index]


def plain_runs(
    mine: int,
    files: Sequence[Normalized],
    windows: Sequence[tuple[int, int]],
    places: dict[int, list[tuple[int, int]]],
    shortest: int,
    most_places: int,
) -> list[tuple[int, int, int, int]]:
    """The search's loop as first written: each place of each window in turn, passed over when its
    run can neither start earlier nor reach `shortest`, or lies inside a run of its alignment
    already grown; the runs cut to whole lines, the longest first (stable)."""
    found: list[tuple[int, int, int, int]] = []
    covered: dict[tuple[int, int], int] = {}
    text = files[mine].text
    for digest, offset in windows:
        spots = places.get(digest, [])
        if len(spots) > most_places:
            continue
        for other, other_offset in spots:
            if other == mine and other_offset == offset:
                continue
            back, forward = plain_extent(text, offset, files[other].text, other_offset)
            if not back and forward < shortest:
                continue
            key = (other, offset - other_offset)
            if covered.get(key, -1) > offset:
                continue
            covered[key] = offset + forward
            if back + forward < shortest:
                continue
            start, end = plain_whole_lines(files[mine], offset - back, offset + forward)
            if end - start < shortest:
                continue
            other_start = other_offset + start - offset
            if other == mine and start < other_start + end - start and other_start < end:
                continue
            found.append((end - start, start, other_start, other))
    found.sort(key=lambda run: run[0], reverse=True)
    return found


# Lines of few shapes, so that files share many runs of every length; a few keep characters other
# than ASCII (two bytes, and four) in the normalized text.
SHAPES = [
    "a = f(b)", "if a:", "    return b", "x = [1, 2]", "for a in b:", "    a += 1", "c = a.b(c, 'd')",
    "while a < b:", "    b = g(a, b, c)", "d = {a: b}", "e = a or b", "del a", "pass",
]
WIDE = ["a = b → c", "a = b ≥ c"]
ASTRAL = ["a = b 😀 c"]


def _file(rng: random.Random, extra: list[str]) -> str:
    shapes = SHAPES + extra
    return "\n".join(rng.choice(shapes) for _ in range(rng.randint(3, 60))) + "\n"


@pytest.fixture(params=["compiled", "python"])
def search_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`runs.regions_found` compiled (`_runs.c`, for texts of one byte a character) and its Python
    loop: each must give the plain loop's runs."""
    if request.param == "python":
        monkeypatch.setattr(runs, "_compiled_regions_found", None)
    elif runs._compiled_regions_found is None:
        pytest.skip(BUILT_ONLY_WITH_A_COMPILER)
    return str(request.param)


@needs_compiled
def test_the_compiled_loop_is_the_one_taken_for_one_byte_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    compiled = runs._compiled_regions_found

    def counted(*arguments: object) -> list[tuple[int, int, int, int]]:
        calls.append(1)
        return compiled(*arguments)

    monkeypatch.setattr(runs, "_compiled_regions_found", counted)
    body = "a = f(b, c, d)\nif a:\n    return b + c * d\n" * 6
    files = [Normalized.of(text, Language.PYTHON) for text in (body, body)]
    hashes, offsets = files[0].windows_in(range(1, 19))
    anchors = _anchors(files)
    shared = runs.shared_of([hashes], [values for _, values in anchors])
    for texts, taken in ((runs.Texts.of([file.text for file in files]), 1), (runs.Texts.of([file.text + "é" for file in files]), 0)):
        calls.clear()
        found = runs.regions_found(0, files[0], hashes, offsets, runs.PlaceTable.of(anchors, shared), texts,
                                   shortest=50, most_places=50)
        assert found and len(calls) == taken


@needs_compiled
def test_the_compiled_loop_refuses_arrays_that_do_not_agree() -> None:
    four, eight = array("I", [0] * 3), array("q", [0] * 3)
    with pytest.raises(ValueError, match="do not agree in length"):
        runs._compiled_regions_found(0, four, four, four, eight, eight, eight, b"abc", eight, eight, four, 3, 50, 50)
    with pytest.raises(ValueError, match="whole number of 8-byte items"):
        runs._compiled_regions_found(0, four, four, four, four, eight, eight, b"abc", eight, eight, four, 3, 50, 50)
    table_first = array("q", [0, 9])  # a place past the table's end
    with pytest.raises(ValueError, match="out of range"):
        runs._compiled_regions_found(0, array("I", [7]), array("I", [0]), array("I", [7]), table_first, array("q", [0]),
                                     array("q", [0]), b"abc", array("q", [0]), array("q", [3]), array("I", [0]), 3, 50, 50)


@pytest.mark.parametrize("extra", [[], WIDE, WIDE + ASTRAL], ids=["ascii", "two-bytes", "four-bytes"])
def test_runs_are_those_of_the_plain_loop(extra: list[str], search_path: str) -> None:
    rng = random.Random(len(extra))
    for case in range(200):
        count = rng.randint(1, 5)
        sources = [_file(rng, extra if number == 0 or rng.random() < 0.3 else []) for number in range(count)]
        if case % 3 == 0:  # a copy of part of another file, under a new name
            sources[0] += sources[-1].replace("a", "z")
        elif case % 3 == 1:  # a copy with one operator changed: two runs of one alignment
            sources[0] += sources[-1].replace("a", "z").replace("+=", "-=", 1)
        if case % 4 == 1:  # the last line with no newline: a run may end the text
            sources = [source.rstrip("\n") for source in sources]
        files = [Normalized.of(source, Language.PYTHON) for source in sources]
        mine = 0
        lines = len(files[mine].lines)
        first = rng.randint(1, lines)
        added = range(first, rng.randint(first, lines) + 1) if case % 2 else set(rng.sample(range(1, lines + 1), lines // 2))
        hashes, offsets = files[mine].windows_in(added)
        anchors = []
        places: dict[int, list[tuple[int, int]]] = {}
        for number, normalized in enumerate(files):
            starts = normalized.anchor_offsets()
            values = normalized.anchor_hashes(starts)
            anchors.append((array(HASH_TYPECODE, starts), values))
            for start, value in zip(starts, values, strict=True):
                places.setdefault(value, []).append((number, start))
        shared = runs.shared_of([hashes], [values for _, values in anchors])
        assert shared.tolist() == sorted(places.keys() & set(hashes))
        [(kept_hashes, kept_offsets)] = runs.shared_windows([hashes], [offsets], shared)
        kept = [value in places for value in hashes]
        assert (kept_hashes, kept_offsets) == (_kept(hashes, kept), _kept(offsets, kept))
        table = runs.PlaceTable.of(anchors, shared)
        texts = runs.Texts.of([normalized.text for normalized in files])
        windows = list(zip(hashes, offsets, strict=True))
        for shortest, most_places in ((50, 50), (42, 3), (90, 1000), (50, 2), (42, 1)):
            expected = plain_runs(mine, files, windows, places, shortest, most_places)
            # The shared windows, as the gate passes them, and every window: those the tree lacks
            # are passed over.
            found = runs.regions_found(
                mine, files[mine], kept_hashes, kept_offsets, table, texts, shortest=shortest, most_places=most_places
            )
            assert found == expected, (case, shortest)
            assert runs.regions_found(
                mine, files[mine], hashes, offsets, table, texts, shortest=shortest, most_places=most_places
            ) == expected


def test_extents_stop_at_the_bounds_of_each_file_and_at_the_first_difference() -> None:
    """Runs reaching a file's first or last character, runs longer than a stride, and texts of
    wide characters differing in one character."""
    rng = random.Random(9)
    for _ in range(200):
        width = rng.choice(["ab", "aβ", "a😀"])
        body = "".join(rng.choice(width) for _ in range(rng.randint(0, 300)))
        left = "".join(rng.choice("xy") for _ in range(rng.randint(0, 20))) + body
        right = "".join(rng.choice("xz") for _ in range(rng.randint(0, 20))) + body + rng.choice(["", "q", "ć"])
        left_start = rng.randint(0, len(left))
        right_start = min(len(right), max(0, left_start - len(left) + len(right)))
        assert runs._extent(left, left_start, right, right_start) == plain_extent(left, left_start, right, right_start)


def test_runs_are_cut_to_whole_lines_as_line_by_line() -> None:
    normalized = Normalized.of("a = 1\n\nb = f(a)\n# note\nreturn b\n", Language.PYTHON)
    size = len(normalized.text)
    for span in [(start, end) for start in range(size + 1) for end in range(start, size + 1)]:
        assert runs._whole_lines(normalized, *span) == plain_whole_lines(normalized, *span)


def test_shared_hashes_are_the_same_whichever_side_is_held() -> None:
    """`shared_of` holds the smaller side as a set: either way the same hashes."""
    rng = random.Random(4)
    tree = [array(HASH_TYPECODE, sorted({rng.randrange(1 << 32) for _ in range(rng.randint(0, 300))})) for _ in range(20)]
    common = [value for values in tree[:5] for value in values[:3]]
    for size in (10, 100_000):  # fewer windows of added code than hashes of the tree, and more
        added = [array(HASH_TYPECODE, [rng.choice(common) if rng.random() < 0.3 else rng.randrange(1 << 32) for _ in range(size)])]
        everything = {value for values in tree for value in values}
        shared = runs.shared_of(added, tree)
        assert shared.tolist() == sorted(everything & set(added[0]))
        assert runs.holding(tree, shared) == [number for number, values in enumerate(tree) if set(values) & set(shared)]


@needs_compiled
@pytest.mark.parametrize("seed", range(3))
def test_shared_hashes_windows_and_places_compiled_are_those_of_python(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`shared_of`, `shared_windows` and `PlaceTable.of` compiled (`_runs.shared_hashes`,
    `_runs.windows_kept`, `_runs.place_table`) give what their Python definitions give: hashes
    repeated within and across files, hashes of one slot's low bits, files with no window, either
    side the smaller, nothing shared."""
    assert runs._compiled_shared_hashes is not None and runs._compiled_place_table is not None
    assert runs._compiled_windows_kept is not None
    rng = random.Random(seed)
    pool = [rng.randrange(1 << 32) for _ in range(40)] + [value << 20 for value in range(1, 30)] + [0, (1 << 32) - 1]
    for case in range(150):
        files = rng.randint(0, 8)
        anchors = []
        for _ in range(files):
            size = 0 if rng.random() < 0.2 else rng.randint(1, 60)
            offsets = array(HASH_TYPECODE, sorted(rng.sample(range(10_000), size)))
            anchors.append((offsets, array(HASH_TYPECODE, [rng.choice(pool) for _ in range(size)])))
        added = [array(HASH_TYPECODE, [rng.choice(pool) if rng.random() < 0.5 else rng.randrange(1 << 32)
                                       for _ in range(rng.choice([0, 5, 300]))]) for _ in range(rng.randint(0, 3))]
        indexed = [values for _, values in anchors]
        added_offsets = [array(HASH_TYPECODE, range(len(values))) for values in added]
        compiled_shared = runs.shared_of(added, indexed)
        compiled_table = runs.PlaceTable.of(anchors, compiled_shared)
        compiled_windows = runs.shared_windows(added, added_offsets, compiled_shared)
        everything = array(HASH_TYPECODE, sorted({rng.choice(pool) for _ in range(rng.randint(0, 20))}))
        compiled_everything = runs.PlaceTable.of(anchors, everything)
        compiled_all_windows = runs.shared_windows(added, added_offsets, everything)
        with monkeypatch.context() as patched:
            patched.setattr(runs, "_compiled_shared_hashes", None)
            patched.setattr(runs, "_compiled_place_table", None)
            patched.setattr(runs, "_compiled_windows_kept", None)
            shared = runs.shared_of(added, indexed)
            assert compiled_shared == shared, case
            assert compiled_table == runs.PlaceTable.of(anchors, shared), case
            assert compiled_windows == runs.shared_windows(added, added_offsets, shared), case
            assert compiled_everything == runs.PlaceTable.of(anchors, everything), case
            assert compiled_all_windows == runs.shared_windows(added, added_offsets, everything), case


@needs_compiled
def test_the_compiled_table_and_windows_refuse_counts_that_do_not_add_up() -> None:
    assert runs._compiled_place_table is not None and runs._compiled_windows_kept is not None
    hashes, offsets = array("I", [1, 2, 3]), array("I", [0, 4, 8])
    for compiled in (runs._compiled_place_table, runs._compiled_windows_kept):
        for counts in ([2], [2, 2], [4, -1], [3, 1]):
            with pytest.raises(ValueError, match="do not agree in length"):
                compiled(hashes, offsets, array("q", counts), array("I", [2]))
        with pytest.raises(ValueError, match="do not agree in length"):
            compiled(hashes, offsets[:2], array("q", [3]), array("I", [2]))
        with pytest.raises(ValueError, match="whole number of 8-byte items"):
            compiled(hashes, offsets, array("I", [3]), array("I", [2]))


def test_runs_of_degenerate_inputs_are_none_or_those_of_the_plain_loop(search_path: str) -> None:
    """No shared window, no window at all, texts shorter than a window or empty beside the others,
    and a file repeating its own lines (runs between its stretches that do not overlap, and its
    twin)."""
    lines = ["a = f(b, c, d)", "if a:", "    return b + c * d"]
    body = "\n".join(lines * 6) + "\n"
    files = [Normalized.of(text, Language.PYTHON) for text in (body, "", "x = 1\n", body)]
    hashes, offsets = files[0].windows_in(range(1, 19))
    anchors = _anchors(files)
    texts = runs.Texts.of([file.text for file in files])
    nothing_shared = runs.PlaceTable.of(anchors, array(HASH_TYPECODE))
    assert runs.regions_found(0, files[0], hashes, offsets, nothing_shared, texts, shortest=50, most_places=50) == []
    empty = array(HASH_TYPECODE)
    shared = runs.shared_of([hashes], [values for _, values in anchors])
    table = runs.PlaceTable.of(anchors, shared)
    assert runs.regions_found(0, files[0], empty, empty, table, texts, shortest=50, most_places=50) == []
    places: dict[int, list[tuple[int, int]]] = {}
    for number, (starts, values) in enumerate(anchors):
        for start, value in zip(starts, values, strict=True):
            places.setdefault(value, []).append((number, start))
    windows = list(zip(hashes, offsets, strict=True))
    found = runs.regions_found(0, files[0], hashes, offsets, table, texts, shortest=50, most_places=50)
    assert found == plain_runs(0, files, windows, places, 50, 50) and found  # the twin in file 3
    assert 3 in {run[3] for run in found}
    assert len(runs.Texts.of([]).starts) == 0
    assert len(runs.shared_of([], [])) == 0


@needs_compiled
@pytest.mark.parametrize("seed", range(4))
def test_longest_disjoint_compiled_takes_what_the_loop_takes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """runs.longest_disjoint compiled and as the loop: runs side by side, overlapping at a seam,
    inside one another, repeated from many places, and free stretches of equal length."""
    rng = random.Random(seed)
    paths = ["a.py", "b.py", "c.py"]
    for _ in range(100):
        found = [(rng.choice([50, 60, 80, 120, 200, 400]), rng.randrange(0, 600, rng.choice([1, 10, 50])),
                  rng.randrange(0, 1000), rng.randrange(len(paths))) for _ in range(rng.randint(0, 40))]
        found += found[: rng.randint(0, len(found))]  # the same span found from other places
        found.sort(key=lambda run: run[0], reverse=True)
        compiled = runs.longest_disjoint(found, paths, MIN_CHARACTERS)
        monkeypatch.setattr(runs, "compiled_longest_disjoint", None)
        assert compiled == runs.longest_disjoint(found, paths, MIN_CHARACTERS), found
        monkeypatch.undo()
    # Two free stretches of the longest length: the first is taken.
    tied = [(100, 100, 0, 0), (100, 300, 0, 1), (400, 0, 7, 2)]
    assert runs.longest_disjoint(tied, paths, MIN_CHARACTERS)[-1] == runs.Region("c.py", 0, 100, 7)
    monkeypatch.setattr(runs, "compiled_longest_disjoint", None)
    assert runs.longest_disjoint(tied, paths, MIN_CHARACTERS)[-1] == runs.Region("c.py", 0, 100, 7)
    monkeypatch.undo()
    with pytest.raises(TypeError, match="a run is a"):
        runs.compiled_longest_disjoint([[50, 0, 0, 0]], 50)  # type: ignore[list-item]


def test_the_names_of_a_whole_line_are_those_names_between_reads() -> None:
    """`Normalized.line_names` (one search of the blanked line) gives what `names_between` gives
    over the line's span, for every line holding normalized text: real modules (keywords, strings
    and comments beside names, decorators, dropped import lines) and text of wider characters."""
    import sysconfig
    from pathlib import Path

    library = Path(sysconfig.get_paths()["stdlib"])
    sources = [(library / name).read_text(encoding="utf-8") for name in ("argparse.py", "dataclasses.py", "textwrap.py")]
    sources.append("def größe(ß, n):\n    # ok\n    return ß.über(n) + 'x'\nimport os\nλ = lambda: größe(1, 2)\n" * 3)
    checked = 0
    for source in sources:
        normalized = Normalized.of(source, Language.PYTHON)
        for index, line in enumerate(normalized.lines):
            if line:
                start = normalized.line_starts[index]
                assert normalized.line_names(index) == normalized.names_between(start, start + len(line)), (index, line)
                checked += 1
    assert checked > 1000
