"""Copies whose statements were put in another order: who copies a function often swaps two
independent steps (`b = g(y)` before `a = f(x)`). The shared run stops at the first line out of
order, and names compared in order align `a` with `b`. Here a region is grown over a block of
whole lines that holds the same normalized lines in another order on both sides (then over the
lines equal on both sides beyond it), and its names are compared line by line, each line paired
with a line of the same shape near it, the pairing that agrees best with the renaming so far."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace

from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import (
    IDENTIFIER_MARK,
    Normalized,
    agrees_with_the_definition,
    renaming_share,
)
from reviewgate.reviewers.builtin.lenses.duplication.runs import Region

# The most lines a block in another order holds, and how far a line's partner may be from its
# place: a few independent statements, not a shuffled function.
MAX_REORDERED_LINES = 4
PAIRING_REACH = 3

# The growth over reordered lines and the pairing compiled (`_runs.reordered_growth`,
# `_normalize.paired_renaming_share`, where a C compiler built them): the same steps as the Python
# here, which stays their definition and the path where they are missing (or were built with
# other constants than these: a stale build is left out, not trusted).
_compiled_growth: Callable[..., tuple[int, int] | None] | None = None
_compiled_pairing: Callable[..., object] | None = None
_compiled_judging: Callable[..., object] | None = None  # `renamed_consistently`, both checks in one call
# `duplicates.sized_and_renamed`: the region's size in added lines checked first, in the same call.
compiled_sized_and_renamed: Callable[..., object] | None = None
try:
    from reviewgate.reviewers.builtin.lenses.duplication import _normalize, _runs
except ImportError:
    pass
else:
    if getattr(_runs, "MAX_REORDERED_LINES", None) == MAX_REORDERED_LINES:
        _compiled_growth = _runs.reordered_growth
    if agrees_with_the_definition(_normalize) and getattr(_normalize, "PAIRING_REACH", None) == PAIRING_REACH:
        _compiled_pairing = _normalize.paired_renaming_share
        _compiled_judging = getattr(_normalize, "renamed_consistently", None)  # None in a build older than it
        compiled_sized_and_renamed = getattr(_normalize, "sized_and_renamed", None)


def _kept_lines(normalized: Normalized, start: int, end: int) -> list[int] | None:
    """The 0-based indexes of the lines holding normalized text in `text[start:end]`, or None when
    the span does not start and end at line boundaries."""
    starts, lines = normalized.line_starts, normalized.lines
    first = bisect.bisect_left(starts, start)
    if first == len(starts) or starts[first] != start:
        return None
    kept = [index for index in range(first, min(bisect.bisect_left(starts, end), len(lines))) if lines[index]]
    # Only the last line starting before `end` can reach past it.
    return None if kept and starts[kept[-1]] + len(lines[kept[-1]]) > end else kept


def _end_lines(normalized: Normalized, start: int, end: int) -> tuple[int, int] | None:
    """The first and last line holding normalized text in `text[start:end]` (0-based), or None when
    the span does not start and end at line boundaries (`_kept_lines` without the lines between)."""
    starts, lines = normalized.line_starts, normalized.lines
    first = bisect.bisect_left(starts, start)
    if first == len(starts) or starts[first] != start or start >= end:
        return None
    while not lines[first]:
        first += 1  # a line start at `start` < `end`: a line holding text follows before `end`
    last = bisect.bisect_left(starts, end) - 1
    while not lines[last]:
        last -= 1
    return (first, last) if starts[last] + len(lines[last]) == end else None


def _next_kept(normalized: Normalized, index: int, step: int) -> int:
    """The line holding normalized text after (`step` 1) or before (-1) line `index`, or -1."""
    index += step
    while 0 <= index < len(normalized.lines) and not normalized.lines[index]:
        index += step
    return index if 0 <= index < len(normalized.lines) else -1


def _block(normalized: Normalized, index: int, step: int, size: int) -> list[int]:
    """`size` lines holding normalized text from line `index` on in the direction of `step`
    (fewer where the file ends)."""
    block: list[int] = []
    while index >= 0 and len(block) < size:
        block.append(index)
        index = _next_kept(normalized, index, step)
    return block


def _grown(mine: Normalized, theirs: Normalized, mine_line: int, their_line: int, step: int) -> int:
    """How many normalized characters a region grows by in the direction of `step` from the lines
    just outside it (`mine_line`, `their_line`): over a block in another order, then over equal
    lines or another such block, while either holds."""
    grown = 0
    reordered = False
    while mine_line >= 0 and their_line >= 0:
        if reordered and mine.lines[mine_line] == theirs.lines[their_line]:
            size = 1
        else:
            # Most regions have no block beside them: my next line is none of their next few.
            their_block = [theirs.lines[index] for index in _block(theirs, their_line, step, MAX_REORDERED_LINES)]
            if mine.lines[mine_line] not in their_block[1:]:
                break
            mine_block = [mine.lines[index] for index in _block(mine, mine_line, step, MAX_REORDERED_LINES)]
            for size in range(2, min(len(mine_block), len(their_block)) + 1):
                if mine_block[:size] != their_block[:size] and sorted(mine_block[:size]) == sorted(their_block[:size]):
                    break
            else:
                break
            reordered = True
        for _ in range(size):
            grown += len(mine.lines[mine_line])
            mine_line, their_line = _next_kept(mine, mine_line, step), _next_kept(theirs, their_line, step)
    return grown


def across_reordered_lines(region: Region, mine: Normalized, theirs: Normalized) -> Region:
    """`region` grown over blocks of lines in another order just before and just after it (the
    same region where there is none). Compiled where built: it runs for every region judged."""
    grown = None if _compiled_growth is None else _compiled_growth(
        mine.lines, mine.line_starts, theirs.lines, theirs.line_starts, region.start, region.end, region.other_start)
    before, after = _growth(region, mine, theirs) if grown is None else grown
    if not before and not after:
        return region
    return replace(region, start=region.start - before, end=region.end + after, other_start=region.other_start - before)


def _growth(region: Region, mine: Normalized, theirs: Normalized) -> tuple[int, int]:
    """How many normalized characters `across_reordered_lines` grows the region by before and
    after it."""
    mine_ends = _end_lines(mine, region.start, region.end)
    their_ends = _end_lines(theirs, region.other_start, region.other_start + region.end - region.start)
    if mine_ends is None or their_ends is None:
        return 0, 0
    before = _grown(mine, theirs, _next_kept(mine, mine_ends[0], -1), _next_kept(theirs, their_ends[0], -1), -1)
    after = _grown(mine, theirs, _next_kept(mine, mine_ends[1], 1), _next_kept(theirs, their_ends[1], 1), 1)
    return before, after


def _agreeing(mine: list[str], theirs: list[str], forward: dict[str, str], backward: dict[str, str], *,
              keep: bool) -> int:
    """How many of the aligned pairs of names agree with the renaming `forward` (and its inverse
    `backward`) grown pair by pair, as `fingerprints.consistent_renaming` counts them; the maps
    keep what the pairs add only when `keep`."""
    added_forward: dict[str, str] = {}
    added_backward: dict[str, str] = {}
    agreeing = 0
    for left, right in zip(mine, theirs, strict=True):
        if left == right:
            agreeing += 1
            continue
        mapped = forward.get(left, added_forward.get(left))
        mapped_back = backward.get(right, added_backward.get(right))
        if (mapped is None or mapped == right) and (mapped_back is None or mapped_back == left):
            agreeing += 1
            added_forward.setdefault(left, right)
            added_backward.setdefault(right, left)
    if keep:
        forward.update(added_forward)
        backward.update(added_backward)
    return agreeing


def paired_renaming_share(mine: Normalized, mine_range: tuple[int, int], theirs: Normalized,
                          their_range: tuple[int, int], *, below: float) -> float | None:
    """The share of names agreeing with one renaming when each line of `mine_range` is compared
    with a line of the same normalized text at most PAIRING_REACH lines from its place in
    `their_range` (the one agreeing best with the renaming so far, the nearest of equals first).
    None when the lines do not pair so or no line has a partner but the one at its place (the
    names in order, `fingerprints.renaming_share`, already answered). Given up on, answering a
    share under `below`, once it cannot reach it. Compiled where built and both blanked texts are
    ASCII: it runs for every region whose names in order disagree."""
    if _compiled_pairing is not None:
        share = _compiled_pairing(*mine.pairing_side(*mine_range), *theirs.pairing_side(*their_range), below,
                                  mine.text.count(IDENTIFIER_MARK, *mine_range))
        if share is not NotImplemented:
            return share  # type: ignore[return-value]  # float | None, as here
    mine_lines, their_lines = _kept_lines(mine, *mine_range), _kept_lines(theirs, *their_range)
    if not mine_lines or their_lines is None or len(mine_lines) != len(their_lines):
        return None
    mine_texts = [mine.lines[index] for index in mine_lines]
    their_texts = [theirs.lines[index] for index in their_lines]
    if mine_texts == their_texts and not any(any(map(str.__eq__, mine_texts, mine_texts[distance:]))
                                             for distance in range(1, PAIRING_REACH + 1)):
        return None  # most regions: the same lines, none with a line of its text near it to pair with
    places: dict[str, list[int]] = {}
    for line, text in enumerate(their_texts):
        places.setdefault(text, []).append(line)
    # Each line's partners: their lines of its text at most PAIRING_REACH away, the nearest first
    # (the line at its place first of all, the earlier of two as near).
    nearby = [sorted((other for other in places.get(text, ()) if abs(other - line) <= PAIRING_REACH),
                     key=lambda other: (abs(other - line), other))  # noqa: B023 (sorted at once)
              for line, text in enumerate(mine_texts)]
    if all(partners == [line] for line, partners in enumerate(nearby)):
        return None
    names_total = mine.text.count(IDENTIFIER_MARK, *mine_range)
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    their_names: dict[int, list[str]] = {}
    used: set[int] = set()
    agreeing = disagreeing = 0
    for line, partners in enumerate(nearby):
        names = mine.line_names(mine_lines[line])
        best, best_agreeing = -1, -1
        for partner in partners:
            if partner in used:
                continue
            if partner not in their_names:
                their_names[partner] = theirs.line_names(their_lines[partner])
            agreed = _agreeing(names, their_names[partner], forward, backward, keep=False)
            if agreed > best_agreeing:
                best, best_agreeing = partner, agreed
        if best < 0:
            return None  # a line with no partner left near its place: not a reordering
        used.add(best)
        agreed = _agreeing(names, their_names[best], forward, backward, keep=True)
        agreeing += agreed
        disagreeing += len(names) - agreed
        if names_total and (names_total - disagreeing) / names_total < below:
            return (names_total - disagreeing) / names_total
    return agreeing / max(agreeing + disagreeing, 1)


def renamed_consistently(mine: Normalized, mine_range: tuple[int, int], theirs: Normalized,
                         their_range: tuple[int, int], *, below: float) -> bool:
    """Whether the names of `mine_range` agree with one renaming of those of `their_range` for at
    least the share `below`: in order (`fingerprints.renaming_share`), or else line by line with
    statements in another order paired (`paired_renaming_share`). Compiled in one call where built
    and the texts are ASCII (`_normalize.renamed_consistently`: each region judged asks it, and
    building the two checks' arguments here cost about as much as the checks)."""
    if _compiled_judging is not None:
        agreed = _compiled_judging(*mine.judging_side, *theirs.judging_side, *mine_range, *their_range, below)
        if agreed is not NotImplemented:
            return agreed  # type: ignore[return-value]  # a bool, as here
    at_most = mine.text.count(IDENTIFIER_MARK, *mine_range)
    if renaming_share(mine, mine_range, theirs, their_range, below=below, at_most=at_most) >= below:
        return True
    paired = paired_renaming_share(mine, mine_range, theirs, their_range, below=below)
    return paired is not None and paired >= below
