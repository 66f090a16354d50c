"""The DRY search's inner loop: every place a window of the added code shares with the tree, and
the shared run through each, for all the places of a changed file at once; then the regions taken
from those runs, longest first, not overlapping.

Compiled (`_runs.c`: one loop over the places, 2 million at Django +304k appended) where it was
built and the texts are one byte a character, as they almost always are; the loop here is its
definition and the path elsewhere: each place in turn, passed over when the run through it cannot
reach the shortest length reported, grown once per maximal run of an alignment, in the same order,
so the regions taken from them are the same.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, compress
from operator import itemgetter

from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized
from reviewgate.reviewers.builtin.lenses.duplication.hashes import Hashes, distinct, no_hashes

# `regions_found`, `longest_disjoint`, `shared_of`, `shared_windows` and `PlaceTable.of` compiled
# (_runs.c), where a C compiler built them.
_compiled_regions_found: Callable[..., list[tuple[int, int, int, int]]] | None = None
compiled_longest_disjoint: Callable[[list[tuple[int, int, int, int]], int], list[tuple[int, int, int, int]]] | None = None
_compiled_shared_hashes: Callable[..., bytes] | None = None
_compiled_place_table: Callable[..., tuple[bytes, bytes, bytes, bytes]] | None = None
_compiled_windows_kept: Callable[..., tuple[bytes, bytes, bytes]] | None = None
try:
    from reviewgate.reviewers.builtin.lenses.duplication import _runs
except ImportError:
    pass
else:
    _compiled_regions_found, compiled_longest_disjoint = _runs.regions_found, _runs.longest_disjoint
    # None in a build older than them.
    _compiled_shared_hashes = getattr(_runs, "shared_hashes", None)
    _compiled_place_table = getattr(_runs, "place_table", None)
    _compiled_windows_kept = getattr(_runs, "windows_kept", None)

_INTEGER = "q"  # 8-byte positions, as _runs.c reads them
# Characters compared at once while a run is grown in Python (a slice comparison is one C call).
_STRIDE = 64


def _integers(values: Iterable[int] = ()) -> array[int]:
    return array(_INTEGER, values)


@dataclass(frozen=True)
class Texts:
    """The normalized texts of every file a run may involve, by file number; and, when they are
    all ASCII (as they almost always are), the same texts one byte a character, one after another
    in `codes` with PAD zeros before each and after the last, as the compiled loop reads them."""

    texts: list[str]
    codes: bytes | None
    starts: array[int]  # where each file's text starts in `codes`, by file number
    ends: array[int]  # and where it ends

    PAD = 8

    @classmethod
    def of(cls, texts: Sequence[str]) -> Texts:
        if not all(text.isascii() for text in texts):
            return cls(list(texts), None, _integers(), _integers())
        pad = "\0" * cls.PAD
        starts, at = _integers(), cls.PAD
        for text in texts:
            starts.append(at)
            at += len(text) + cls.PAD
        ends = _integers(start + len(text) for start, text in zip(starts, texts, strict=True))
        codes = (pad + pad.join(texts) + pad).encode("ascii")
        return cls(list(texts), codes, starts, ends)


@dataclass(frozen=True)
class PlaceTable:
    """Every place of the tree a shared window has (the line-start windows of the files sharing a
    hash with the added code), sorted by hash: the places of hash `hashes[i]` are
    `files[first[i]:first[i + 1]]` at `offsets[first[i]:first[i + 1]]`, in the order of the files
    and then of their offsets, as a dict of lists filled file by file had them."""

    hashes: Hashes
    first: array[int]
    files: array[int]
    offsets: array[int]

    @classmethod
    def of(cls, anchors: Sequence[tuple[Hashes, Hashes]], shared: Hashes) -> PlaceTable:
        """From each file's (offsets, hashes) of its line-start windows, file number by file number,
        keeping the windows whose hash is in `shared`. Compiled (`_runs.place_table`: one pass
        and a sort in C, where this loop made a tuple a place, 0.4 s at +304k appended) where built."""
        if _compiled_place_table is not None:
            counts = _integers(len(values) for _, values in anchors)
            parts = _compiled_place_table(
                b"".join(values for _, values in anchors), b"".join(offsets for offsets, _ in anchors), counts, shared)
            table = cls(no_hashes(), _integers(), _integers(), _integers())
            for values, data in zip((table.hashes, table.first, table.files, table.offsets), parts, strict=True):
                values.frombytes(data)
            return table
        wanted = set(shared)
        places = sorted(  # stable: the file order within one hash
            (
                place
                for file, (offsets, values) in enumerate(anchors)
                for place in compress(zip(values, [file] * len(values), offsets, strict=True), map(wanted.__contains__, values))
            ),
            key=itemgetter(0),
        )
        hashes, first = no_hashes(), _integers()
        for index, (value, _, _) in enumerate(places):
            if not hashes or hashes[-1] != value:
                hashes.append(value)
                first.append(index)
        first.append(len(places))
        return cls(hashes, first, _integers(map(itemgetter(1), places)), _integers(map(itemgetter(2), places)))


def shared_of(added: Sequence[Hashes], indexed: Sequence[Hashes]) -> Hashes:
    """The distinct hashes both a window of the added code and a file's line-start windows have
    (sorted). Only the smaller side's hashes are held as a set (at +300k added lines the added
    code has 2.4 million windows, a repository of 10,000 files about as many line-start windows),
    and the other side is intersected with it. Compiled (`_runs.shared_hashes`: the smaller side in
    an open-addressing table, the other's hashes looked up in it, 0.06 s where the set took 0.3-0.5
    s at +304k appended) where built."""
    if not added or not indexed:
        return no_hashes()
    if _compiled_shared_hashes is not None:
        shared = no_hashes()
        shared.frombytes(_compiled_shared_hashes(b"".join(added), b"".join(indexed)))
        return shared
    if sum(map(len, indexed)) <= sum(map(len, added)):
        return distinct(set(chain.from_iterable(indexed)).intersection(chain.from_iterable(added)))
    return distinct(set(chain.from_iterable(added)).intersection(chain.from_iterable(indexed)))


def shared_windows(hashes: Sequence[Hashes], offsets: Sequence[Hashes], shared: Hashes) -> list[tuple[Hashes, Hashes]]:
    """Of each file's windows (`hashes` beside `offsets`), the hashes and offsets of those whose
    hash is in `shared`, in order: only they have places (nine in ten at +300k lines do not, and
    the search looked each of those up in the table in vain, 0.35 s at +304k appended). Compiled
    (`_runs.windows_kept`, one call for every file) where built."""
    if _compiled_windows_kept is not None:
        counts = _integers(map(len, hashes))
        kept_hashes, kept_offsets, kept_counts = _compiled_windows_kept(b"".join(hashes), b"".join(offsets), counts, shared)
        all_hashes, all_offsets, sizes = no_hashes(), no_hashes(), _integers()
        all_hashes.frombytes(kept_hashes)
        all_offsets.frombytes(kept_offsets)
        sizes.frombytes(kept_counts)
        found, at = [], 0
        for size in sizes:
            found.append((all_hashes[at : at + size], all_offsets[at : at + size]))
            at += size
        return found
    wanted = set(shared)
    found = []
    for values, places in zip(hashes, offsets, strict=True):
        kept = list(map(wanted.__contains__, values))
        found.append((array(values.typecode, compress(values, kept)), array(places.typecode, compress(places, kept))))
    return found


def holding(values: Sequence[Hashes], shared: Hashes) -> list[int]:
    """The positions in `values` of the hash lists holding any of `shared`, in order."""
    wanted = set(shared)
    return [number for number, hashes in enumerate(values) if not wanted.isdisjoint(hashes)]


def regions_found(
    mine: int,
    normalized: Normalized,
    hashes: Hashes,
    offsets: Hashes,
    table: PlaceTable,
    texts: Texts,
    *,
    shortest: int,
    most_places: int,
) -> list[tuple[int, int, int, int]]:
    """The maximal shared runs, as whole lines of file `mine` (its `normalized` text, number
    `mine` in `texts` and `table`), through every place of the windows at `offsets` (their
    `hashes`), each (length, start, other start, other file), the longest first and runs of one
    length in the order their places come (window by window, each window's places in table order).

    A window whose hash has more than `most_places` places is an idiom and passed over. A place
    is passed over when the run through it neither starts before it nor reaches `shortest`
    characters from it (it could only be shorter than `shortest`, never reported), and when it is
    inside a run an earlier place of the same alignment found. A run is kept when its whole
    lines still span `shortest` characters and, between two places of one file, do not overlap
    their own twin."""
    if not hashes or not table.hashes:
        return []
    if _compiled_regions_found is not None and texts.codes is not None:
        return _compiled_regions_found(
            mine, hashes, offsets, table.hashes, table.first, table.files, table.offsets, texts.codes,
            texts.starts, texts.ends, normalized.line_starts, len(normalized.text), shortest, most_places,
        )
    found: list[tuple[int, int, int, int]] = []
    covered: dict[tuple[int, int], int] = {}  # by (other file, alignment): where its last run grown ends
    text = texts.texts[mine]
    for digest, offset in zip(hashes, offsets, strict=True):
        index = bisect.bisect_left(table.hashes, digest)
        if index == len(table.hashes) or table.hashes[index] != digest:
            continue
        low, high = table.first[index], table.first[index + 1]
        if high - low > most_places:
            continue
        for other, other_offset in zip(table.files[low:high], table.offsets[low:high], strict=True):
            if other == mine and other_offset == offset:
                continue
            back, forward = _extent(text, offset, texts.texts[other], other_offset)
            if not back and forward < shortest:
                continue
            key = (other, offset - other_offset)
            if covered.get(key, -1) > offset:
                continue
            covered[key] = offset + forward
            if back + forward < shortest:
                continue
            start, end = _whole_lines(normalized, offset - back, offset + forward)
            if end - start < shortest:
                continue
            other_start = other_offset + start - offset
            if other == mine and start < other_start + end - start and other_start < end:
                continue
            found.append((end - start, start, other_start, other))
    found.sort(key=itemgetter(0), reverse=True)  # stable, reversed or not
    return found


def _extent(left: str, left_start: int, right: str, right_start: int) -> tuple[int, int]:
    """How many characters agree before the two places, and from them on."""
    back = 0
    limit = min(left_start, right_start)
    while back < limit and left[left_start - back - 1] == right[right_start - back - 1]:
        back += 1
    forward = 0
    limit = min(len(left) - left_start, len(right) - right_start)
    while forward + _STRIDE <= limit and (
        left[left_start + forward : left_start + forward + _STRIDE] == right[right_start + forward : right_start + forward + _STRIDE]
    ):
        forward += _STRIDE
    while forward < limit and left[left_start + forward] == right[right_start + forward]:
        forward += 1
    return back, forward


def _whole_lines(normalized: Normalized, start: int, end: int) -> tuple[int, int]:
    """A run moved inwards to the nearest line boundaries. A run grown character by character
    reaches a token or two into the lines around a copy (`)` ends most lines): those belong to the
    code beside it, which may be another copy. The end stays where it is when it ends a line."""
    line_starts = normalized.line_starts
    index = bisect.bisect_left(line_starts, start)
    whole_start = line_starts[index] if index < len(line_starts) else len(normalized.text)
    index = bisect.bisect_right(line_starts, end) - 1
    whole_end = end if end >= line_starts[index] + len(normalized.lines[index]) else line_starts[index]
    return whole_start, whole_end


@dataclass(frozen=True)
class Region:
    """A shared run taken for judging: its span in the changed file's normalized text, and where it
    starts in the other file's."""

    other: str
    start: int
    end: int
    other_start: int


def longest_disjoint(runs: list[tuple[int, int, int, int]], paths: Sequence[str], shortest: int) -> list[Region]:
    """Each run (length, start, other start, other file's number in `paths`) in turn (longest
    first), less what runs already taken cover: two copies side by side are found as runs that
    share a character or two at their seam, and the shorter run is still a copy. What is left is
    the longest free stretch, kept when it is still `shortest` characters long. The taken regions
    do not overlap, so ordered by start they are ordered by end too: the ones a run meets are found
    by bisection, not by looking at all of them.

    Compiled (`_runs.c`: 0.09 s where this loop took 0.34 s over Django +304k appended's runs) where
    it was built; this loop is its definition."""
    if compiled_longest_disjoint is not None:
        return [Region(paths[other], start, end, other_start)
                for other, start, end, other_start in compiled_longest_disjoint(runs, shortest)]
    chosen: list[Region] = []  # in the order taken, longest first
    starts: list[int] = []  # the taken regions' starts and ends, in order
    ends: list[int] = []
    # Spans no later run of the same extent can take anything of: one inside a taken region or
    # with no free stretch long enough stays so (the taken ones only grow), and one taken whole
    # is then inside it. Only a span taken in part may leave a second stretch to its twin. A copy
    # repeated in many places is found as one span from each of them: asked once, not each time.
    settled: set[tuple[int, int]] = set()
    for length, start, other_start, other in runs:
        if (start, length) in settled:
            continue
        end = start + length
        first = bisect.bisect_right(ends, start)  # taken[first:last] overlap the run
        last = bisect.bisect_left(starts, end)
        if last == first + 1 and starts[first] <= start and end <= ends[first]:
            settled.add((start, length))
            continue  # inside one taken region (the same run found from another place): nothing free
        if first < last:
            bounds = [start, *(edge for index in range(first, last) for edge in (starts[index], ends[index])), end]
            gaps = [(bounds[index], bounds[index + 1]) for index in range(0, len(bounds), 2)]
            free_start, end = max(gaps, key=lambda gap: gap[1] - gap[0])
            if end - free_start < shortest:
                settled.add((start, length))
                continue
            other_start += free_start - start
            start = free_start
        else:
            settled.add((start, length))
        chosen.append(Region(paths[other], start, end, other_start))
        position = bisect.bisect_left(starts, start)
        starts.insert(position, start)
        ends.insert(position, end)
    return chosen
