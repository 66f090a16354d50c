"""Which shared regions of the added code are duplicates worth a finding (the same tokens or
the same shape under one consistent renaming, large and distinct enough), which new file forks an
existing one, and each pair of places once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, replace

from reviewgate.freeze.diff import ChangeStatus
from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.lenses.duplication import runs, short_definitions
from reviewgate.reviewers.builtin.lenses.duplication.added_code import Query
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized, literals
from reviewgate.reviewers.builtin.lenses.duplication.reordering import (
    across_reordered_lines,
    compiled_sized_and_renamed,
    renamed_consistently,
)
from reviewgate.reviewers.builtin.lenses.duplication.rules import CONTINUATION, Side, mostly_literals, same_text
from reviewgate.reviewers.builtin.lenses.duplication.runs import Region
from reviewgate.reviewers.builtin.lenses.duplication.sizes import (
    LARGE_BLOCK_LINES,
    MIN_CHARACTERS,
    MIN_DISTINCT_LINES,
    MIN_LINES,
    NEAR_COPY_SHARE,
)
from reviewgate.reviewers.builtin.lenses.duplication.tree_places import Places

# Below LARGE_BLOCK_LINES a match must also share this part of its names (called functions,
# attributes, keys), which a renamed copy keeps and an unrelated block of a common shape does not.
MIN_SHARED_NAMES = 0.25
# A copy renames consistently (`total -> amount` everywhere); blocks that only share a shape do not.
# Below this share of aligned names agreeing with one renaming, the match is a coincidence of shape.
MIN_CONSISTENT_RENAMING = 0.85
# A fingerprint found in more places than this is an idiom of the language, not a copy; skipping it
# keeps matching linear in the added code (clone detectors drop such "stop" fingerprints likewise).
MAX_FINGERPRINT_PLACES = 50


@dataclass(frozen=True)
class Candidate:
    """A duplicate worth reporting, before each pair is reduced to one finding."""

    query: Query
    region: Region
    mine: Side
    theirs: Side
    in_branch: bool


def joined(candidates: list[Candidate]) -> list[Candidate]:
    """One copy broken by a small edit (`and isinstance` for `and not isinstance`) is found as two
    runs of whole lines with at most the edited line between them, on both sides: it is one finding,
    over both."""
    merged: list[Candidate] = []
    for candidate in sorted(candidates, key=lambda item: (item.theirs.path, item.mine.first)):
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and previous.theirs.path == candidate.theirs.path
            and candidate.mine.first <= previous.mine.last + 2
            and previous.theirs.first <= candidate.theirs.first <= previous.theirs.last + 2
        ):
            merged[-1] = replace(
                previous,
                mine=replace(previous.mine, last=max(previous.mine.last, candidate.mine.last)),
                theirs=replace(previous.theirs, last=max(previous.theirs.last, candidate.theirs.last)),
            )
        else:
            merged.append(candidate)
    return merged


def one_per_pair(candidates: list[Candidate]) -> list[Candidate]:
    """A pair found from both sides is reported once, at the later place (path, then line)."""
    # Only a candidate in the file this one copies can mirror it (`Side.overlaps` needs one path):
    # each compared with all is quadratic in the change's copies.
    by_path: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_path[candidate.mine.path].append(candidate)
    kept = []
    for candidate in candidates:
        mirrored = any(
            other.mine.overlaps(candidate.theirs) and other.theirs.overlaps(candidate.mine)
            for other in by_path.get(candidate.theirs.path, ())
            if other is not candidate
        )
        if not mirrored or (candidate.mine.path, candidate.mine.first) > (candidate.theirs.path, candidate.theirs.first):
            kept.append(candidate)
    return kept


def regions_of(path: str, query: Query, places: Places) -> list[Region]:
    """Maximal shared runs between the added code and the tree, the longest first, not
    overlapping (runs.py finds them, for all the places of the file's windows at once); then the
    whole definitions under MIN_CHARACTERS dense with logic where those leave room
    (short_definitions.py)."""
    found = runs.regions_found(
        places.numbers[path],
        query.normalized,
        query.hashes,
        query.offsets,
        places.table,
        places.texts,
        shortest=MIN_CHARACTERS,
        most_places=MAX_FINGERPRINT_PLACES,
    )
    taken = runs.longest_disjoint(found, places.paths, MIN_CHARACTERS)
    return taken + short_definitions.regions(path, query, places, taken, MAX_FINGERPRINT_PLACES)


def sized_and_renamed(normalized: Normalized, region: Region, added: Collection[int], other: Normalized) -> bool:
    """The checks most regions judged fail: at least MIN_LINES of the region's lines of code added
    by the change, and at least half of them; then names agreeing with one renaming
    (`reordering.renamed_consistently`). Compiled in one call where built (`_normalize.
    sized_and_renamed`: the line numbers, the lines counted and the renaming read from the offsets,
    where Python made two line numbers and two lists a region)."""
    their_range = (region.other_start, region.other_start + region.end - region.start)
    if compiled_sized_and_renamed is not None:
        judged = compiled_sized_and_renamed(*normalized.judging_side, *other.judging_side, region.start, region.end,
                                             *their_range, MIN_CONSISTENT_RENAMING, added, MIN_LINES)
        if judged is not NotImplemented:
            return judged  # type: ignore[return-value]  # a bool, as here
    first, last = normalized.line_at(region.start), normalized.line_at(region.end - 1)
    lines = [number for number in range(first, last + 1) if normalized.lines[number - 1]]
    added_lines = [number for number in lines if number in added]
    if not (len(added_lines) >= MIN_LINES and len(added_lines) * 2 >= len(lines)):
        return False
    # Most regions of a common shape fail here, about half way through their names: read a
    # line at a time and given up on as soon as the renaming cannot agree enough (before the
    # distinct lines, a pattern's search a line, which few regions fail). Names in order align a
    # statement with the one it changed places with: then compared line by line, paired with a
    # line of the same shape near each (reordering.py).
    return renamed_consistently(normalized, (region.start, region.end), other, their_range,
                                below=MIN_CONSISTENT_RENAMING)


def worth_reporting(query: Query, region: Region, other: Normalized, other_source: str) -> bool:
    normalized = query.normalized
    if not sized_and_renamed(normalized, region, query.added, other):
        return False
    # Under MIN_CHARACTERS only a whole definition dense with logic is a copy: a fragment that short
    # is an idiom, a short body of plain assignments and returns no logic to share.
    if region.end - region.start < MIN_CHARACTERS and not short_definitions.copied_whole(
            normalized, region, other, (language_of(query.change.path), language_of(region.other))):
        return False
    first, last = normalized.line_at(region.start), normalized.line_at(region.end - 1)
    lines = [number for number in range(first, last + 1) if normalized.lines[number - 1]]
    their_range = (region.other_start, region.other_start + region.end - region.start)
    distinct = {
        normalized.lines[number - 1]
        for number in lines
        if not CONTINUATION.search(normalized.lines[number - 1])
    }
    table = mostly_literals(normalized.text[region.start : region.end])
    # The rows of a table are argument lines, not distinct ones; the same table copied counts as
    # one distinct line more (its data), a table alone (`__all__ = [...]`) as none.
    rows = table and len(distinct) + 1 == MIN_DISTINCT_LINES and any(
        CONTINUATION.search(normalized.lines[number - 1]) for number in lines)
    if len(distinct) < MIN_DISTINCT_LINES and not rows:
        return False
    mine, theirs = normalized.names_between(region.start, region.end), other.names_between(*their_range)
    if table:
        # Two tables of one shape differ in their data; only the same table twice is a copy,
        # under new names or not (the names already follow one renaming).
        other_first = other.line_at(region.other_start)
        other_last = other.line_at(region.other_start + region.end - region.start - 1)
        own = query.source.split("\n")[first - 1 : last]
        theirs_text = other_source.split("\n")[other_first - 1 : other_last]
        language = language_of(query.change.path)
        return same_text(own, theirs_text) or literals("\n".join(own), language) == literals(
            "\n".join(theirs_text), language_of(region.other))
    if len(lines) >= LARGE_BLOCK_LINES:
        return True
    smaller = min(len(set(mine)), len(set(theirs)))
    return smaller > 0 and len(set(mine) & set(theirs)) >= MIN_SHARED_NAMES * smaller


def file_copies(
    path: str,
    query: Query,
    regions: list[Region],
    normalized: dict[str, Normalized],
    sources: dict[str, str],
    changed_added: dict[str, Collection[int]],
) -> tuple[str | None, list[Candidate]]:
    """The file a new file forks (then no duplicates), or the file's duplicates, one pair of
    places each (they are reported once per pair across the change: `one_per_pair`)."""
    # A copy inside the change is reported once, at its second occurrence: a region whose other
    # side is that occurrence is left before it is judged (judging is most of this stage's
    # time, and such a region counts neither for a finding here nor for a fork, which is of
    # existing code).
    regions = _across_reordered_lines(query.normalized, regions, normalized)
    reportable = [
        region
        for region in regions
        if not reported_at_the_other(path, query, region, normalized[region.other], changed_added)
        and worth_reporting(query, region, normalized[region.other], sources[region.other])
    ]
    if query.change.status is ChangeStatus.ADDED:
        # A fork is of a file that existed before; two new look-alike files are in-branch repetition.
        existing = [region for region in reportable if region.other not in changed_added]
        fork = forked_from(query, existing)
        if fork is not None:
            return fork, []
    found: list[Candidate] = []
    for region in reportable:
        other = normalized[region.other]
        mine = Side(path, query.normalized.line_at(region.start), query.normalized.line_at(region.end - 1))
        theirs = Side(
            region.other,
            other.line_at(region.other_start),
            other.line_at(region.other_start + region.end - region.start - 1),
        )
        in_branch = theirs.first in changed_added.get(region.other, ())
        found.append(Candidate(query, region, mine, theirs, in_branch))
    return None, joined(found)


def _across_reordered_lines(mine: Normalized, regions: list[Region], normalized: dict[str, Normalized]) -> list[Region]:
    """The regions grown over lines in another order beside them (reordering.py), less those that
    then lie inside another on both sides (the parts of one copy either side of the reordered
    lines, both grown over them: kept once)."""
    grown = [across_reordered_lines(region, mine, normalized[region.other]) for region in regions]
    changed = [after for before, after in zip(regions, grown, strict=True) if after is not before]
    if not changed:
        return regions
    # Only a grown region can hold another: the regions taken from the runs do not overlap.
    kept: list[Region] = []
    for region in sorted(changed, key=lambda region: region.start - region.end):  # stable: the longest first
        if not any(_inside(region, other) for other in kept):
            kept.append(region)
    kept_ids = {id(region) for region in kept}
    return [region for before, region in zip(regions, grown, strict=True)
            if id(region) in kept_ids or (region is before and not any(_inside(region, other) for other in kept))]


def _inside(region: Region, other: Region) -> bool:
    """Whether `region` lies inside `other` on both sides, at the same alignment."""
    return (other.other == region.other and other.start <= region.start and region.end <= other.end
            and other.start - other.other_start == region.start - region.other_start)


def reported_at_the_other(
    path: str, query: Query, region: Region, other: Normalized, changed_added: dict[str, Collection[int]]
) -> bool:
    """Whether the region's other side is added by the change too and comes later (by path,
    then line): the pair is then reported there."""
    # Line numbers only where they decide: most regions are of a file the change adds nothing to,
    # or of another file, which the paths order.
    added = changed_added.get(region.other)
    if not added or region.other < path:
        return False
    theirs_first = other.line_at(region.other_start)
    return theirs_first in added and (region.other > path or theirs_first > query.normalized.line_at(region.start))


def forked_from(query: Query, regions: list[Region]) -> str | None:
    code_lines = sum(1 for line in query.normalized.lines if line)
    shares: dict[str, int] = defaultdict(int)
    for region in regions:
        shares[region.other] += region.end - region.start
    total = len(query.normalized.text)
    for other, size in shares.items():
        if code_lines >= MIN_LINES and total and size >= NEAR_COPY_SHARE * total:
            return other
    return None
