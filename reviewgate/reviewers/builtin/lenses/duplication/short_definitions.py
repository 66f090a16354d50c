"""Whole definitions under MIN_CHARACTERS: a short definition copied whole is a copy when it is
dense with logic (MIN_SUBSTANCE decisions, calls and arithmetic operators); a fragment that short
is an idiom, and so is a short definition of plain assignments and returns. Looked up apart from
the runs of MIN_CHARACTERS, through the window at each such definition's first line: the few
definitions MIN_LINES lines of which fit in MIN_CHARACTERS characters."""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
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
# space is left), by language: `def`, `func` (a Go method's receiver between), `function`, `fun`,
# or a method's modifier (`public`, `static`...) before its type and name. The languages whose
# definitions `rules.starts_a_definition` knows; one literal pattern for Python, searched in C.
_MODIFIED_METHOD = r"(?:public|private|protected|static|internal|override)[^(=;{}]{0,40}?" + IDENTIFIER_MARK + r"\("
_DEFINITION_KEYWORD: dict[Language, re.Pattern[str]] = {
    Language.PYTHON: re.compile("def" + IDENTIFIER_MARK + r"\("),
    Language.GO: re.compile(r"func(?:\([^)]*\))?" + IDENTIFIER_MARK + r"\("),
    Language.JAVASCRIPT: re.compile("function" + IDENTIFIER_MARK + r"\("),
    Language.TYPESCRIPT: re.compile("function" + IDENTIFIER_MARK + r"\("),
    Language.KOTLIN: re.compile("fun" + IDENTIFIER_MARK + r"\(|" + _MODIFIED_METHOD),
    Language.JAVA: re.compile(_MODIFIED_METHOD),
    Language.CSHARP: re.compile(_MODIFIED_METHOD),
}


_START, _END = operator.attrgetter("start"), operator.attrgetter("end")


def regions(path: str, query: Query, places: Places, taken: list[Region], most_places: int) -> list[Region]:
    """The short whole definitions dense with logic the added code shares with the tree, where the
    regions `taken` (the runs of MIN_CHARACTERS) leave room: one region a definition, from its
    first line to its end, at the longest run through that line."""
    language = language_of(path)
    keyword = _DEFINITION_KEYWORD.get(language)
    if keyword is None:
        return []
    normalized = query.normalized
    starts, text = normalized.line_starts, normalized.text
    hashes, offsets = array(HASH_TYPECODE), array(HASH_TYPECODE)
    # The regions taken do not overlap: their starts and their ends sort alike.
    taken_starts, taken_ends = sorted(map(_START, taken)), sorted(map(_END, taken))
    added = query.added
    within = (starts[added.start - 1], len(text) if added.stop > len(starts) else starts[added.stop - 1]) if (
        isinstance(added, range) and added and added.start <= len(starts)) else (0, len(text))
    # Each keyword's line, where the line starts, and where the MIN_LINES lines from it end, in C
    # (map over arrays): a large change's generated code has tens of thousands of definitions.
    numbers = list(map(functools.partial(bisect.bisect_right, starts), map(re.Match.start, keyword.finditer(text, *within))))
    line_offsets = list(map(starts.__getitem__, map((-1).__add__, numbers)))
    padded = starts + array(starts.typecode, [len(text)] * MIN_LINES)
    short = itertools.compress(zip(numbers, line_offsets, strict=True), map(
        MIN_CHARACTERS.__gt__, map(operator.sub, map(padded.__getitem__, map((MIN_LINES - 1).__add__, numbers)), line_offsets)))
    for number, offset in short:
        # Its first MIN_DEFINITION_CHARACTERS free of the regions taken (most definitions of a large
        # change's generated code start just before one), its window shared, and dense with logic.
        following = bisect.bisect_right(taken_ends, offset)  # _overlaps, inline: the loop's most common exit
        if following < len(taken_starts) and taken_starts[following] < offset + MIN_DEFINITION_CHARACTERS:
            continue
        index = bisect.bisect_left(query.offsets, offset)
        if index == len(query.offsets) or query.offsets[index] != offset or number not in added:
            continue
        if substance(text[offset : offset + MIN_CHARACTERS - 1]) >= MIN_SUBSTANCE:
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
        region = _cut_before_next(normalized, Region(places.paths[other], first, start + length,
                                                     other_start + first - start), keyword)
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


def _cut_before_next(mine: Normalized, region: Region, keyword: re.Pattern[str]) -> Region:
    """A region starting a definition cut before the next definition or decorator it reaches (a
    run grown on past a short definition takes the header of the next one); `copied_whole` then
    asks whether it is the whole definition."""
    first, last = mine.line_at(region.start), mine.line_at(region.end - 1)
    for number in range(first + 1, last + 1):
        line = mine.lines[number - 1]
        if line.startswith("@") or keyword.match(line):
            return Region(region.other, region.start, mine.line_starts[number - 1], region.other_start)
    return region


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
