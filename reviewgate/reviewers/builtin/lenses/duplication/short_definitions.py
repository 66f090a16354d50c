"""Whole definitions under MIN_CHARACTERS: a short definition copied whole is a copy when it is
dense with logic (MIN_SUBSTANCE decisions, calls and arithmetic operators); a fragment that short
is an idiom, and so is a short definition of plain assignments and returns. Looked up apart from
the runs of MIN_CHARACTERS, through the window at each such definition's first line: the few
definitions MIN_LINES lines of which fit in MIN_CHARACTERS characters."""

from __future__ import annotations

import bisect
import re
from array import array

from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.lenses.duplication import runs
from reviewgate.reviewers.builtin.lenses.duplication.added_code import Query
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import IDENTIFIER_MARK, Normalized
from reviewgate.reviewers.builtin.lenses.duplication.hashes import HASH_TYPECODE
from reviewgate.reviewers.builtin.lenses.duplication.rules import starts_a_definition
from reviewgate.reviewers.builtin.lenses.duplication.runs import Region
from reviewgate.reviewers.builtin.lenses.duplication.sizes import (
    MIN_CHARACTERS,
    MIN_DEFINITION_CHARACTERS,
    MIN_LINES,
    MIN_SUBSTANCE,
)
from reviewgate.reviewers.builtin.lenses.duplication.substance import substance
from reviewgate.reviewers.builtin.lenses.duplication.tree_places import Places

# A definition's keyword before its name and `(` in the normalized text (names are one mark, no
# space is left): `def`, `func` (a Go method's receiver between), `function`, `fun`, `fn`, or a
# method's modifier (`public`, `static`...) before its type and name. A test of what may be one.
_DEFINITION_KEYWORD = re.compile(
    r"(?:def|function|fun|fn|func(?:\([^)]*\))?)" + IDENTIFIER_MARK + r"\("
    r"|(?:public|private|protected|static|final|override|internal|suspend)[^(=;{}]{0,40}?" + IDENTIFIER_MARK + r"\("
)


def regions(path: str, query: Query, places: Places, taken: list[Region], most_places: int) -> list[Region]:
    """The short whole definitions dense with logic the added code shares with the tree, where the
    regions `taken` (the runs of MIN_CHARACTERS) leave room: one region a definition, from its
    first line to its end, at the longest run through that line."""
    normalized = query.normalized
    starts, text = normalized.line_starts, normalized.text
    language = language_of(path)
    hashes, offsets = array(HASH_TYPECODE), array(HASH_TYPECODE)
    spans = sorted((region.start, region.end) for region in taken)  # not overlapping: ends in order too
    taken_starts, taken_ends = [start for start, _ in spans], [end for _, end in spans]
    # Definitions found by their keyword in the normalized text (in C; the exact test per language
    # after), then only the few whose first MIN_LINES lines hold under MIN_CHARACTERS characters.
    added = query.added
    within = (starts[added.start - 1], len(text) if added.stop > len(starts) else starts[added.stop - 1]) if (
        isinstance(added, range) and added and added.start <= len(starts)) else (0, len(text))
    for match in _DEFINITION_KEYWORD.finditer(text, *within):
        number = bisect.bisect_right(starts, match.start())  # the 1-based line it is on
        offset = starts[number - 1]
        if (number + MIN_LINES - 1 >= len(starts) and len(text) - offset >= MIN_CHARACTERS) or (
                number + MIN_LINES - 1 < len(starts) and starts[number + MIN_LINES - 1] - offset >= MIN_CHARACTERS):
            continue
        # Its first MIN_DEFINITION_CHARACTERS free of the regions taken (most definitions the
        # generated code of a large change repeats start just before one), then its window shared.
        if _overlaps(taken_starts, taken_ends, offset, offset + MIN_DEFINITION_CHARACTERS):
            continue
        index = bisect.bisect_left(query.offsets, offset)
        if index == len(query.offsets) or query.offsets[index] != offset or number not in query.added:
            continue
        if (substance(text[offset : offset + MIN_CHARACTERS - 1]) >= MIN_SUBSTANCE
                and _starts_a_definition(normalized, number, language)):
            hashes.append(query.hashes[index])
            offsets.append(offset)
    if not offsets:
        return []
    found = runs.regions_found(places.numbers[path], normalized, hashes, offsets, places.table, places.texts,
                               shortest=MIN_DEFINITION_CHARACTERS, most_places=most_places)
    chosen: dict[int, Region] = {}
    for length, start, other_start, other in found:  # the longest first
        index = bisect.bisect_left(offsets, start)
        if index == len(offsets) or offsets[index] in chosen or offsets[index] >= start + length:
            continue
        first = offsets[index]
        region = _cut_to_definition(normalized, Region(places.paths[other], first, start + length,
                                                       other_start + first - start))
        if MIN_DEFINITION_CHARACTERS <= region.end - region.start < MIN_CHARACTERS:
            chosen[first] = region
    return [region for region in chosen.values()
            if not _overlaps(taken_starts, taken_ends, region.start, region.end)]


def copied_whole(mine: Normalized, region: Region, other: Normalized, languages: tuple[Language, Language]) -> bool:
    """Whether a region under MIN_CHARACTERS is a copy: a whole definition on both sides, of at
    least MIN_DEFINITION_CHARACTERS, dense with logic."""
    size = region.end - region.start
    if size < MIN_DEFINITION_CHARACTERS or substance(mine.text[region.start : region.end]) < MIN_SUBSTANCE:
        return False
    first, last = mine.line_at(region.start), mine.line_at(region.end - 1)
    other_first, other_last = other.line_at(region.other_start), other.line_at(region.other_start + size - 1)
    return whole_definition(mine, first, last, languages[0]) and whole_definition(other, other_first, other_last, languages[1])


def whole_definition(normalized: Normalized, first: int, last: int, language: Language) -> bool:
    """Whether source lines `first`..`last` hold one whole definition: they start one (a decorator
    before it allowed) and end where it ends (`_definition_end`)."""
    if not _starts_a_definition(normalized, first, language):
        return False
    return not any(normalized.blanked_line(index).strip() for index in range(last, _definition_end(normalized, first)))


def _starts_a_definition(normalized: Normalized, number: int, language: Language) -> bool:
    return starts_a_definition(
        [normalized.blanked_line(index) for index in range(number - 1, min(number + 1, len(normalized.lines)))], 1, language)


def _cut_to_definition(mine: Normalized, region: Region) -> Region:
    """A region starting a definition cut where the definition ends (a run grown on past a short
    definition takes the header of the next one)."""
    end = _definition_end(mine, mine.line_at(region.start))
    cut = mine.line_starts[end] if end < len(mine.lines) else len(mine.text)
    return Region(region.other, region.start, cut, region.other_start) if region.start < cut < region.end else region


def _definition_end(normalized: Normalized, first: int) -> int:
    """The 0-based index of the first line after the definition that starts at source line `first`:
    the next line of code indented no deeper than it, less a closing bracket (`):` ending its
    parameters, the `}` ending its body), or the end of the file."""
    indent = _indentation(normalized.blanked_line(first - 1))
    for index in range(first, len(normalized.lines)):
        line = normalized.blanked_line(index)
        text = line.lstrip()
        if text and len(line) - len(text) <= indent and text[0] not in ")]}":
            return index
    return len(normalized.lines)


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def _overlaps(starts: list[int], ends: list[int], start: int, end: int) -> bool:
    """Whether `start`..`end` overlaps a region of `starts`/`ends` (in order, not overlapping)."""
    following = bisect.bisect_right(ends, start)
    return following < len(starts) and starts[following] < end
