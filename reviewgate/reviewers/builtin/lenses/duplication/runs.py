"""The DRY search's inner loop, over arrays: every place a window of the added code shares with the
tree, and the shared run through each, found for all the places of a changed file at once.

A large change shares a window with millions of places (2 million at Django +304k appended): a
Python loop over them cost 1.5 s at +104k and 5 s at +304k, three quarters of the search. Here
each step is one numpy operation over all the places: the same runs as that loop (each place in
turn, passed over when the run through it cannot reach MIN_CHARACTERS, grown once per maximal run
of an alignment), in the same order, so the regions taken from them are the same.

numpy is imported with this module, only for a change that may repeat code (search.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import WINDOW, Normalized
from reviewgate.reviewers.builtin.lenses.duplication.hashes import Hashes, distinct

Integers = npt.NDArray[np.int64]
# `regions_found` and search._longest_disjoint compiled (_runs.c), where a C compiler built them.
_compiled_regions_found: Callable[..., list[tuple[int, int, int, int]]] | None = None
compiled_longest_disjoint: Callable[[list[tuple[int, int, int, int]], int], list[tuple[int, int, int, int]]] | None = None
try:
    from reviewgate.reviewers.builtin.lenses.duplication import _runs
except ImportError:
    pass
else:
    _compiled_regions_found, compiled_longest_disjoint = _runs.regions_found, _runs.longest_disjoint

_NO_HASHES: Hashes = np.zeros(0, dtype=np.uint32)
# 8-byte words read on each side of a place at once: a shared run reaches mostly under 16
# characters back and under 128 forward (93% and 99.9% at Django +104k appended).
_BACK_WORDS = 2
_FORWARD_WORDS = 8
# Places whose extents are computed at once: a block's matrices stay a few megabytes, where all
# the places of a +300k-line change at once would hold hundreds.
_PLACES_AT_ONCE = 16_384
# Values tested for membership by bisection alone, below which a table of hashes costs more.
_BISECTED_AT_MOST = 1 << 16


@dataclass(frozen=True)
class Texts:
    """The normalized texts of every file a run may involve, one after another in one array of
    code points (one byte each when they are all ASCII, as they almost always are), with PAD zeros
    before each and after the last, so that a block read past a file's start or end stays in the
    array (what it reads there is never counted: a run stops at a file's bounds). Texts are
    compared 8 bytes at a time, through `words`."""

    codes: npt.NDArray[np.unsignedinteger]
    starts: Integers  # where each file's text starts in `codes`, by file number
    ends: Integers  # and where it ends

    # In code points: at least the bytes a block reads past a bound (the forward block and a word).
    PAD = 8 * _FORWARD_WORDS + 8

    @classmethod
    def of(cls, texts: Sequence[str]) -> Texts:
        if not texts:
            return cls(np.zeros(cls.PAD, dtype=np.uint8), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        if all(text.isascii() for text in texts):
            pieces = [np.frombuffer(text.encode("ascii"), dtype=np.uint8) for text in texts]
            dtype: type[np.unsignedinteger] = np.uint8
        else:
            # surrogatepass: a lone surrogate is a code point like any other here, never an error.
            pieces = [np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4") for text in texts]
            widest = max((int(piece.max()) for piece in pieces if piece.size), default=0)
            dtype = np.uint16 if widest < 1 << 16 else np.uint32
        lengths = np.fromiter((len(text) for text in texts), dtype=np.int64, count=len(texts))
        starts = cls.PAD + np.concatenate(([0], np.cumsum(lengths + cls.PAD)[:-1])).astype(np.int64)
        ends = starts + lengths
        codes = np.zeros(int(ends[-1]) + cls.PAD, dtype=dtype)
        for piece, start in zip(pieces, starts.tolist(), strict=True):
            codes[start : start + piece.size] = piece
        return cls(codes, starts, ends)

    @property
    def width(self) -> int:
        """Bytes a code point."""
        return int(self.codes.itemsize)

    @functools.cached_property
    def words(self) -> npt.NDArray[np.uint64]:
        """The 8 bytes from every byte of `codes` as one number (a view, unaligned: no copy)."""
        raw = self.codes.view(np.uint8)
        # Native byte order: a word's bytes, viewed again as bytes, are in the order of the text.
        words: npt.NDArray[np.uint64] = np.ndarray(shape=(raw.size - 7,), dtype=np.uint64, buffer=raw, offset=0, strides=(1,))
        return words


@dataclass(frozen=True)
class PlaceTable:
    """Every place of the tree a shared window has (the line-start windows of the files sharing a
    hash with the added code), sorted by hash: the places of hash `hashes[i]` are
    `files[first[i]:first[i + 1]]` at `offsets[first[i]:first[i + 1]]`, in the order of the files
    and then of their offsets, as a dict of lists filled file by file had them."""

    hashes: npt.NDArray[np.uint32]
    first: Integers
    files: Integers
    offsets: Integers

    @classmethod
    def of(cls, anchors: Sequence[tuple[npt.NDArray[np.uint32], Hashes]], shared: Hashes) -> PlaceTable:
        """From each file's (offsets, hashes) of its line-start windows, file number by file number,
        keeping the windows whose hash is in `shared` (sorted, distinct)."""
        offsets = np.concatenate([starts for starts, _ in anchors]).astype(np.int64) if anchors else _NO_HASHES.astype(np.int64)
        hashes = np.concatenate([values for _, values in anchors]) if anchors else _NO_HASHES
        files = np.repeat(np.arange(len(anchors), dtype=np.int64), [len(starts) for starts, _ in anchors])
        kept = among(hashes, shared)
        hashes, files, offsets = hashes[kept], files[kept], offsets[kept]
        order = np.argsort(hashes, kind="stable")  # stable: the file order within one hash
        hashes, files, offsets = hashes[order], files[order], offsets[order]
        distinct, first = np.unique(hashes, return_index=True)
        return cls(distinct, np.append(first, hashes.size).astype(np.int64), files, offsets)


def among(values: npt.NDArray[np.uint32], distinct: Hashes) -> npt.NDArray[np.bool_]:
    """Whether each of `values` is in `distinct` (sorted). A table of the low 24 bits of
    `distinct` tells most values no with one read (a million hashes fill 6% of it), and only the
    rest are bisected: `np.isin` hashed all of `distinct` again at every call, and bisecting every
    value cost half a second at Django +304k appended (3.3 million windows, a cache miss a step)."""
    if not distinct.size:
        return np.zeros(values.size, dtype=bool)
    result = np.zeros(values.size, dtype=bool)
    if values.size > _BISECTED_AT_MOST:
        table = np.zeros(1 << 24, dtype=bool)
        table[distinct & 0xFFFFFF] = True
        candidates = np.flatnonzero(table[values & 0xFFFFFF])
    else:
        candidates = np.arange(values.size)
    position = np.searchsorted(distinct, values[candidates])
    position[position == distinct.size] = 0
    result[candidates] = distinct[position] == values[candidates]
    return result


def shared_of(
    added: Sequence[Hashes], indexed: Sequence[Hashes]
) -> tuple[Hashes, list[npt.NDArray[np.bool_]]]:
    """The distinct hashes both a window of the added code and a file's line-start windows have
    (sorted), and for each of `added` which of its windows have one of them."""
    if not added or not indexed:
        return _NO_HASHES, [np.zeros(len(values), dtype=bool) for values in added]
    tree = distinct(np.concatenate(indexed))
    mine = np.concatenate(added)
    kept = among(mine, tree)
    return distinct(mine[kept]), np.split(kept, np.cumsum([len(values) for values in added])[:-1])


def holding(values: Sequence[Hashes], shared: Hashes) -> list[int]:
    """The positions in `values` of the hash lists holding any of `shared`, in order."""
    if not values:
        return []
    lengths = [len(hashes) for hashes in values]
    every = np.concatenate(values)
    owners = np.repeat(np.arange(len(values), dtype=np.int64), lengths)
    numbers: list[int] = np.unique(owners[among(every, shared)]).tolist()
    return numbers


def regions_found(
    mine: int,
    normalized: Normalized,
    hashes: Hashes,
    offsets: npt.NDArray[np.uint32],
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
    their own twin.

    Compiled (`_runs.c`: one loop over the places, a third of the time) where it was built and the
    texts are one byte a character; these array operations are its definition."""
    if not hashes.size or not table.hashes.size:
        return []
    if _compiled_regions_found is not None and texts.width == 1:
        return _compiled_regions_found(
            mine, np.ascontiguousarray(hashes, dtype=np.uint32), np.ascontiguousarray(offsets, dtype=np.uint32),
            np.ascontiguousarray(table.hashes, dtype=np.uint32), np.ascontiguousarray(table.first, dtype=np.int64),
            np.ascontiguousarray(table.files, dtype=np.int64), np.ascontiguousarray(table.offsets, dtype=np.int64),
            texts.codes, np.ascontiguousarray(texts.starts, dtype=np.int64),
            np.ascontiguousarray(texts.ends, dtype=np.int64), normalized.line_starts, len(normalized.text),
            shortest, most_places,
        )
    window_offsets = offsets.astype(np.int64)
    position = np.searchsorted(table.hashes, hashes)
    position[position == table.hashes.size] = 0
    present = table.hashes[position] == hashes
    counts = np.where(present, table.first[position + 1] - table.first[position], 0)
    counts[counts > most_places] = 0
    total = int(counts.sum())
    if not total:
        return []
    # One row per place, in the order the places come: window by window, then table order.
    window = np.repeat(np.arange(hashes.size, dtype=np.int64), counts)
    run_starts = np.cumsum(counts) - counts
    place = np.repeat(table.first[position], counts) + np.arange(total, dtype=np.int64) - np.repeat(run_starts, counts)
    mine_offset = window_offsets[window]
    other, other_offset = table.files[place], table.offsets[place]
    not_itself = (other != mine) | (other_offset != mine_offset)
    order = np.flatnonzero(not_itself)
    mine_offset, other, other_offset = mine_offset[order], other[order], other_offset[order]

    width, words = texts.width, texts.words
    left = (texts.starts[mine] + mine_offset) * width  # byte positions in `texts.codes`
    right = (texts.starts[other] + other_offset) * width
    back_limit = np.minimum(mine_offset, other_offset)
    forward_limit = np.minimum(texts.ends[mine] * width - left, texts.ends[other] * width - right) // width
    codes = texts.codes
    behind = (back_limit > 0) & (codes[left // width - 1] == codes[right // width - 1])  # the character before
    # A cheap test first, passing every place the exact one passes: the character before agrees,
    # or the characters from WINDOW to `shortest` do (the window itself agrees but for a hash
    # collision, which the extents below read and reject).
    reaching = forward_limit >= shortest
    for at in [*range(WINDOW * width, shortest * width - 8, 8), shortest * width - 8]:
        reaching &= words[left + at] == words[right + at]
    maybe = np.flatnonzero(behind | reaching)
    order, mine_offset, other, other_offset = order[maybe], mine_offset[maybe], other[maybe], other_offset[maybe]
    left, right, behind, back_limit = left[maybe], right[maybe], behind[maybe], back_limit[maybe]
    forward = _agreeing(words, left, right, forward_limit[maybe] * width, _FORWARD_WORDS, backwards=False) // width
    passing = behind | (forward >= shortest)
    order, mine_offset, other, other_offset = order[passing], mine_offset[passing], other[passing], other_offset[passing]
    left, right, behind, back_limit, forward = left[passing], right[passing], behind[passing], back_limit[passing], forward[passing]
    # One run per maximal run of an alignment: the places inside it share its end.
    end = mine_offset + forward
    alignment = mine_offset - other_offset
    by_run = np.lexsort((order, end, alignment, other))
    first_of_run = np.ones(by_run.size, dtype=bool)
    first_of_run[1:] = (
        (other[by_run][1:] != other[by_run][:-1])
        | (alignment[by_run][1:] != alignment[by_run][:-1])
        | (end[by_run][1:] != end[by_run][:-1])
    )
    grown = np.sort(by_run[first_of_run])  # in the order the places come
    mine_offset, other, other_offset, forward = mine_offset[grown], other[grown], other_offset[grown], forward[grown]
    # Backwards only from the places grown, and of those only where the character before agrees:
    # most places inside a run (two in three at Django +104k appended) are never grown.
    back = np.zeros(grown.size, dtype=np.int64)
    before = grown[behind[grown]]
    back[behind[grown]] = _agreeing(words, left[before], right[before], back_limit[before] * width, _BACK_WORDS, backwards=True) // width
    long_enough = back + forward >= shortest
    mine_offset, other, other_offset = mine_offset[long_enough], other[long_enough], other_offset[long_enough]
    start, end = _whole_lines(normalized, mine_offset - back[long_enough], mine_offset + forward[long_enough])
    other_start = other_offset + start - mine_offset
    length = end - start
    overlapping = (other == mine) & (start < other_start + length) & (other_start < end)
    kept = (length >= shortest) & ~overlapping
    length, start, other_start, other = length[kept], start[kept], other_start[kept], other[kept]
    longest_first = np.argsort(-length, kind="stable")
    return list(
        zip(
            length[longest_first].tolist(),
            start[longest_first].tolist(),
            other_start[longest_first].tolist(),
            other[longest_first].tolist(),
            strict=True,
        )
    )


def _agreeing(
    words: npt.NDArray[np.uint64],
    left: Integers,
    right: Integers,
    limit: Integers,
    block: int,
    *,
    backwards: bool,
) -> Integers:
    """How many bytes agree from each pair of aligned byte positions (`left`, `right`) in one
    direction, at most `limit`: `block` words at a time for the pairs still agreeing, the first
    differing byte found among them in one pass."""
    done = np.zeros(left.size, dtype=np.int64)
    # The words read: from the position on, or (backwards) ending at it and before, nearest first.
    steps = -8 * np.arange(1, block + 1, dtype=np.int64) if backwards else 8 * np.arange(block, dtype=np.int64)
    sign = -1 if backwards else 1
    for first in range(0, left.size, _PLACES_AT_ONCE):
        active = np.arange(first, min(first + _PLACES_AT_ONCE, left.size), dtype=np.int64)
        while active.size:
            read = done[active]
            differing = words[(left[active] + sign * read)[:, None] + steps] ^ words[(right[active] + sign * read)[:, None] + steps]
            # Each word's bytes in the order they are read: a word read backwards ends nearest.
            in_order = differing.view(np.uint8).reshape(active.size, block, 8)
            if backwards:
                in_order = in_order[:, :, ::-1]
            unequal = in_order.reshape(active.size, 8 * block) != 0
            agreeing = np.where(unequal.any(axis=1), unequal.argmax(axis=1), 8 * block)
            reached = np.minimum(read + agreeing, limit[active])
            done[active] = reached
            active = active[(agreeing == 8 * block) & (reached < limit[active])]
    return done


def _whole_lines(normalized: Normalized, start: Integers, end: Integers) -> tuple[Integers, Integers]:
    """Each run of one file moved inwards to the nearest line boundaries. A run grown character by
    character reaches a token or two into the lines around a copy (`)` ends most lines): those
    belong to the code beside it, which may be another copy. The end stays where it is when it
    ends a line."""
    line_starts = np.frombuffer(normalized.line_starts, dtype=np.dtype(normalized.line_starts.typecode)).astype(np.int64)
    line_ends = line_starts + np.fromiter(map(len, normalized.lines), dtype=np.int64, count=len(normalized.lines))
    index = np.searchsorted(line_starts, start, side="left")
    inside = index < line_starts.size
    whole_start = np.where(inside, line_starts[np.minimum(index, line_starts.size - 1)], len(normalized.text))
    index = np.searchsorted(line_starts, end, side="right") - 1
    whole_end = np.where(end >= line_ends[index], end, line_starts[index])
    return whole_start, whole_end
