"""The DRY search over arrays (runs.py, hashes.py) answers exactly what the plain computations
answer: each window hashed on its own, each place of each window visited in turn and its run walked
character by character."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from reviewgate.reviewers.builtin.common import Language
from reviewgate.reviewers.builtin.lenses.duplication import runs
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import BASE, WINDOW, Normalized
from reviewgate.reviewers.builtin.lenses.duplication.hashes import distinct, window_hashes

MODULUS = 1 << 64


def plain_window_hash(window: bytes) -> int:
    """A window's hash as hashes.py defines it: the polynomial in its bytes, its high 32 bits."""
    return (sum(byte * pow(BASE, power, MODULUS) for power, byte in enumerate(window)) % MODULUS) >> 32


def test_window_hashes_are_the_polynomial_of_each_window_on_its_own() -> None:
    rng = random.Random(3)
    for size in (WINDOW, WINDOW + 1, 97, 1000, 5000):
        data = bytes(rng.randrange(256) for _ in range(size))
        offsets = sorted(rng.sample(range(size - WINDOW + 1), min(60, size - WINDOW + 1)))
        assert window_hashes(data, np.array(offsets)).tolist() == [
            plain_window_hash(data[offset : offset + WINDOW]) for offset in offsets
        ]
    # Longer files than any before grow the tables of powers, and shorter ones still read them.
    long_data = bytes(rng.randrange(256) for _ in range(70_000))
    assert int(window_hashes(long_data, np.array([69_000]))[0]) == plain_window_hash(long_data[69_000 : 69_000 + WINDOW])
    assert window_hashes(b"", np.array([], dtype=np.int64)).size == 0


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


BUILT_ONLY_WITH_A_COMPILER = "built only where a C compiler is at hand (.ci/run checks that it was)"
needs_compiled = pytest.mark.skipif(runs._compiled_regions_found is None, reason=BUILT_ONLY_WITH_A_COMPILER)


@pytest.fixture(params=["compiled", "arrays"])
def search_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`runs.regions_found` compiled (`_runs.c`, for texts of one byte a character) and over arrays:
    each must give the plain loop's runs."""
    if request.param == "arrays":
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
    anchors = [(np.asarray(starts := file.anchor_offsets(), dtype=np.uint32), file.anchor_hashes(starts)) for file in files]
    shared, kept = runs.shared_of([hashes], [values for _, values in anchors])
    for texts, taken in ((runs.Texts.of([file.text for file in files]), 1), (runs.Texts.of([file.text + "é" for file in files]), 0)):
        calls.clear()
        found = runs.regions_found(0, files[0], hashes[kept[0]], offsets[kept[0]], runs.PlaceTable.of(anchors, shared), texts,
                                   shortest=50, most_places=50)
        assert found and len(calls) == taken


@needs_compiled
def test_the_compiled_loop_refuses_arrays_that_do_not_agree() -> None:
    four, eight = np.zeros(3, dtype=np.uint32), np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="do not agree in length"):
        runs._compiled_regions_found(0, four, four, four, eight, eight, eight, b"abc", eight, eight, four, 3, 50, 50)
    with pytest.raises(ValueError, match="whole number of 8-byte items"):
        runs._compiled_regions_found(0, four, four, four, four, eight, eight, b"abc", eight, eight, four, 3, 50, 50)
    table_first = np.array([0, 9], dtype=np.int64)  # a place past the table's end
    with pytest.raises(ValueError, match="out of range"):
        runs._compiled_regions_found(0, np.array([7], dtype=np.uint32), np.zeros(1, dtype=np.uint32), np.array([7], dtype=np.uint32),
                                     table_first, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), b"abc",
                                     np.zeros(1, dtype=np.int64), np.full(1, 3, dtype=np.int64), np.zeros(1, dtype=np.uint32),
                                     3, 50, 50)


@pytest.mark.parametrize("extra", [[], WIDE, WIDE + ASTRAL], ids=["ascii", "two-bytes", "four-bytes"])
def test_runs_over_arrays_are_those_of_the_plain_loop(extra: list[str], search_path: str) -> None:
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
            anchors.append((np.asarray(starts, dtype=np.uint32), values))
            for start, value in zip(starts, values.tolist(), strict=True):
                places.setdefault(value, []).append((number, start))
        shared, kept = runs.shared_of([hashes], [values for _, values in anchors])
        assert kept[0].tolist() == [value in places for value in hashes.tolist()]
        table = runs.PlaceTable.of(anchors, shared)
        texts = runs.Texts.of([normalized.text for normalized in files])
        windows = list(zip(hashes.tolist(), offsets.tolist(), strict=True))
        for shortest, most_places in ((50, 50), (42, 3), (90, 1000), (50, 2), (42, 1)):
            expected = plain_runs(mine, files, windows, places, shortest, most_places)
            found = runs.regions_found(
                mine, files[mine], hashes[kept[0]], offsets[kept[0]], table, texts, shortest=shortest, most_places=most_places
            )
            assert found == expected, (case, shortest)


def test_extents_stop_at_the_bounds_of_each_file_and_at_the_first_difference() -> None:
    """Runs reaching a file's first or last character, texts longer than a block, and texts of
    wide characters differing in one byte of one character."""
    rng = random.Random(9)
    for _ in range(200):
        width = rng.choice(["ab", "aβ", "a😀"])
        body = "".join(rng.choice(width) for _ in range(rng.randint(0, 300)))
        left = "".join(rng.choice("xy") for _ in range(rng.randint(0, 20))) + body
        right = "".join(rng.choice("xz") for _ in range(rng.randint(0, 20))) + body + rng.choice(["", "q", "ć"])
        texts = runs.Texts.of([left, right])
        left_start = rng.randint(0, len(left))
        right_start = min(len(right), max(0, left_start - len(left) + len(right)))
        back_limit, forward_limit = min(left_start, right_start), min(len(left) - left_start, len(right) - right_start)
        here = np.array([(texts.starts[0] + left_start) * texts.width])
        there = np.array([(texts.starts[1] + right_start) * texts.width])
        back = runs._agreeing(texts.words, here, there, np.array([back_limit * texts.width]), 2, backwards=True)
        forward = runs._agreeing(texts.words, here, there, np.array([forward_limit * texts.width]), 8, backwards=False)
        assert (int(back[0]) // texts.width, int(forward[0]) // texts.width) == plain_extent(left, left_start, right, right_start)


def test_runs_are_cut_to_whole_lines_as_line_by_line() -> None:
    normalized = Normalized.of("a = 1\n\nb = f(a)\n# note\nreturn b\n", Language.PYTHON)
    size = len(normalized.text)
    spans = [(start, end) for start in range(size + 1) for end in range(start, size + 1)]
    starts, ends = runs._whole_lines(normalized, np.array([span[0] for span in spans]), np.array([span[1] for span in spans]))
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [plain_whole_lines(normalized, *span) for span in spans]


def test_membership_by_table_and_by_bisection_agree() -> None:
    rng = np.random.default_rng(4)
    distinct = np.unique(rng.integers(0, 1 << 32, 50_000, dtype=np.uint64).astype(np.uint32))
    values = np.concatenate([rng.choice(distinct, 100_000), rng.integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32)])
    expected = np.isin(values, distinct)
    assert (runs.among(values, distinct) == expected).all()  # over the table's threshold
    assert (runs.among(values[:1000], distinct) == expected[:1000]).all()
    assert not runs.among(values, distinct[:0]).any()


def test_runs_of_degenerate_inputs_are_none_or_those_of_the_plain_loop(search_path: str) -> None:
    """No shared window, no window at all, texts shorter than a window or empty beside the others,
    and a file repeating its own lines (runs between its stretches that do not overlap, and its
    twin)."""
    lines = ["a = f(b, c, d)", "if a:", "    return b + c * d"]
    body = "\n".join(lines * 6) + "\n"
    files = [Normalized.of(text, Language.PYTHON) for text in (body, "", "x = 1\n", body)]
    hashes, offsets = files[0].windows_in(range(1, 19))
    anchors = [(np.asarray(starts := file.anchor_offsets(), dtype=np.uint32), file.anchor_hashes(starts)) for file in files]
    texts = runs.Texts.of([file.text for file in files])
    nothing_shared = runs.PlaceTable.of(anchors, np.zeros(0, dtype=np.uint32))
    assert runs.regions_found(0, files[0], hashes, offsets, nothing_shared, texts, shortest=50, most_places=50) == []
    empty = np.zeros(0, dtype=np.uint32)
    shared, kept = runs.shared_of([hashes], [values for _, values in anchors])
    table = runs.PlaceTable.of(anchors, shared)
    assert runs.regions_found(0, files[0], empty, empty, table, texts, shortest=50, most_places=50) == []
    places: dict[int, list[tuple[int, int]]] = {}
    for number, (starts, values) in enumerate(anchors):
        for start, value in zip(starts.tolist(), values.tolist(), strict=True):
            places.setdefault(value, []).append((number, start))
    windows = list(zip(hashes.tolist(), offsets.tolist(), strict=True))
    found = runs.regions_found(0, files[0], hashes[kept[0]], offsets[kept[0]], table, texts, shortest=50, most_places=50)
    assert found == plain_runs(0, files, windows, places, 50, 50) and found  # the twin in file 3
    assert 3 in {run[3] for run in found}
    assert runs.Texts.of([]).starts.size == 0
    assert runs.shared_of([], [])[0].size == 0


def test_distinct_hashes_by_sorting_are_those_of_unique() -> None:
    rng = np.random.default_rng(6)
    for size in (0, 1, 2, 250, 100_000):
        values = rng.integers(0, 1 << 32, size, dtype=np.uint64).astype(np.uint32)
        values = np.concatenate([values, values[: size // 3]])
        assert distinct(values).tolist() == np.unique(values).tolist()


@needs_compiled
@pytest.mark.parametrize("seed", range(4))
def test_longest_disjoint_compiled_takes_what_the_loop_takes(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """search._longest_disjoint compiled and as the loop: runs side by side, overlapping at a seam,
    inside one another, repeated from many places, and free stretches of equal length."""
    from reviewgate.reviewers.builtin.lenses.duplication import search

    rng = random.Random(seed)
    paths = ["a.py", "b.py", "c.py"]
    for _ in range(100):
        found = [(rng.choice([50, 60, 80, 120, 200, 400]), rng.randrange(0, 600, rng.choice([1, 10, 50])),
                  rng.randrange(0, 1000), rng.randrange(len(paths))) for _ in range(rng.randint(0, 40))]
        found += found[: rng.randint(0, len(found))]  # the same span found from other places
        found.sort(key=lambda run: run[0], reverse=True)
        compiled = search._longest_disjoint(found, paths)
        monkeypatch.setattr(runs, "compiled_longest_disjoint", None)
        assert compiled == search._longest_disjoint(found, paths), found
        monkeypatch.undo()
    # Two free stretches of the longest length: the first is taken.
    tied = [(100, 100, 0, 0), (100, 300, 0, 1), (400, 0, 7, 2)]
    assert search._longest_disjoint(tied, paths)[-1] == search.Region("c.py", 0, 100, 7)
    monkeypatch.setattr(runs, "compiled_longest_disjoint", None)
    assert search._longest_disjoint(tied, paths)[-1] == search.Region("c.py", 0, 100, 7)
    monkeypatch.undo()
    with pytest.raises(TypeError, match="a run is a"):
        runs.compiled_longest_disjoint([[50, 0, 0, 0]], 50)  # type: ignore[list-item]
