"""Whole definitions under MIN_CHARACTERS: which of the search's shorter runs may be one (dense
with logic: MIN_SUBSTANCE decisions, calls and arithmetic operators), a run grown past one cut back
to it, and whether a region is one whole definition on both sides. A fragment that short is an
idiom, and so is a short definition of plain assignments and returns."""

from __future__ import annotations

import bisect
from dataclasses import replace

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized
from reviewgate.reviewers.builtin.lenses.duplication.rules import starts_a_definition
from reviewgate.reviewers.builtin.lenses.duplication.runs import Region
from reviewgate.reviewers.builtin.lenses.duplication.sizes import (
    MIN_CHARACTERS,
    MIN_DEFINITION_CHARACTERS,
    MIN_SUBSTANCE,
)
from reviewgate.reviewers.builtin.lenses.duplication.substance import substance

Run = tuple[int, int, int, int]  # (length, start, other start, other file), as runs.py finds them


def first_short(found: list[Run]) -> int:
    """Where the runs under MIN_CHARACTERS start in `found` (the longest first)."""
    return bisect.bisect_right(found, -MIN_CHARACTERS, key=lambda run: -run[0])


def dense(regions: list[Region], text: str) -> list[Region]:
    """The regions under MIN_CHARACTERS whose normalized code (`text` is the changed file's) holds
    MIN_SUBSTANCE decisions, calls and operators."""
    return [region for region in regions if region.end - region.start < MIN_CHARACTERS
            and substance(text[region.start : region.end]) >= MIN_SUBSTANCE]


def outside(regions: list[Region], taken: list[Region]) -> list[Region]:
    """The regions of `regions` overlapping none of `taken` (which do not overlap each other)."""
    spans = sorted((region.start, region.end) for region in taken)
    kept = []
    for region in regions:
        index = bisect.bisect_left(spans, (region.end,))
        if not (index > 0 and spans[index - 1][1] > region.start):
            kept.append(region)
    return kept


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
    if not starts_a_definition([normalized.blanked_line(index) for index in range(first - 1, min(first + 1, len(normalized.lines)))],
                               1, language):
        return False
    return not any(normalized.blanked_line(index).strip() for index in range(last, _definition_end(normalized, first)))


def cut_to_definition(mine: Normalized, region: Region, language: Language) -> Region:
    """A region under MIN_CHARACTERS cut where the definition it starts ends (a run grown on past a
    short definition takes the header of the next one); unchanged where it starts none."""
    first = mine.line_at(region.start)
    if region.end - region.start >= MIN_CHARACTERS or not starts_a_definition(
            [mine.blanked_line(index) for index in range(first - 1, min(first + 1, len(mine.lines)))], 1, language):
        return region
    end = _definition_end(mine, first)
    cut = mine.line_starts[end] if end < len(mine.lines) else len(mine.text)
    return replace(region, end=cut) if region.start < cut < region.end else region


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
