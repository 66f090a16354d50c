"""The DRY lens's search (duplication.py decides whether it runs): added code that repeats code
the repository already has (or that the change adds twice), the same tokens or the same shape
under new names and literals.

The repository at head is indexed once per run, keeping only the fingerprints the added code has;
only added code is compared against it. Each file's fingerprints are stored by its blob id
(index.py): a run reads and normalizes only files it has not seen and files sharing a
fingerprint with the added code. Test files are left on
both sides: test helpers are meant to look alike, and a copy in a test is not two places to fix.
"""

from __future__ import annotations

import bisect
from array import array
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import BY_DESIGN, Finding, FindingClass, Severity
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.reviewers.builtin.file_kinds import (
    SUPPORT_DIRECTORIES,
    is_configuration_file,
    is_stub_file,
    is_test_file,
    is_test_input,
    is_translation_file,
)
from reviewgate.reviewers.builtin.language_table import CODE_LANGUAGES, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import (
    IDENTIFIER_MARK,
    Normalized,
    anchor_hashes_of,
    literals,
    renaming_share,
)
from reviewgate.reviewers.builtin.lenses.duplication.lens import MIN_LINES, RULE_DUPLICATE, RULE_NEAR_COPY
from reviewgate.reviewers.builtin.lenses.duplication.rules import (
    CONTINUATION,
    FAMILY_MIN_MEMBERS,
    Families,
    Side,
    definition_name,
    evidence,
    mirrored_directories,
    module_system_twins,
    mostly_literals,
    rewrapped_lines,
    same_text,
    sibling_classes,
    sibling_implementations,
    split_out_copies,
    starts_a_definition,
    weak_evidence,
)
from reviewgate.text import decode_text

if TYPE_CHECKING:  # imported only when the added code may repeat code
    from reviewgate.reviewers.builtin.lenses.duplication import runs
    from reviewgate.reviewers.builtin.lenses.duplication.hashes import Hashes

# A duplicate worth a finding: at least MIN_LINES non-empty lines (duplication.py) of which this
# many differ from each other (six `self.a = a` lines are a shape, not a copy) and this many
# normalized characters.
MIN_DISTINCT_LINES = 4
MIN_CHARACTERS = 50
# Small blocks of a common shape (`a = a.a(a)` / `if a is None: return`) recur in any large
# repository; below LARGE_BLOCK_LINES a match must also share this part of its names (called
# functions, attributes, keys), which a renamed copy keeps and an unrelated block does not.
LARGE_BLOCK_LINES = 12
MIN_SHARED_NAMES = 0.25
# A copy renames consistently (`total -> amount` everywhere); blocks that only share a shape do not.
# Below this share of aligned names agreeing with one renaming, the match is a coincidence of shape.
MIN_CONSISTENT_RENAMING = 0.85
# Repetition inside the change blocks from this many lines: shorter runs are parallel variants
# written side by side, which real merged PRs are full of (calibrated on the development set).
IN_BRANCH_MAJOR_LINES = 25
# A copy of existing code blocks from this many lines, or when it copies a whole definition:
# shorter fragments (a nested callback, a guard and its message) were fair remarks on real merged
# PRs, rarely worth sending work back for.
EXISTING_MAJOR_LINES = 20
# A new file whose lines are this share of one existing file is a fork of it.
NEAR_COPY_SHARE = 0.8
# A fingerprint found in more places than this is an idiom of the language, not a copy; skipping it
# keeps matching linear in the added code (clone detectors drop such "stop" fingerprints likewise).
MAX_FINGERPRINT_PLACES = 50
# Files larger than this are generated or vendored, not code anyone keeps in step by hand.
MAX_FILE_BYTES = 1_000_000
# Files whose bytes are read from git at once for the index: a git process costs a few
# milliseconds, 200 files of a repository a few megabytes.
READ_BATCH_FILES = 200
_NOT_INDEXED = frozenset({"node_modules", "vendor", "third_party", "dist", "build", ".git", "site-packages"})
# Examples and benchmarks are standalone by design (each readable and runnable alone), so their
# copies are not two places to fix, and nothing calls into them.
# Scripts are support code too, but one script copying another's helper is still two places to fix.
_STANDALONE = SUPPORT_DIRECTORIES - {"scripts"}


def is_candidate(path: str) -> bool:
    parts = path.split("/")  # paths from git: no empty or `.` parts to normalize
    return (
        language_of(path) in CODE_LANGUAGES
        and not is_test_file(path)
        and not is_stub_file(path)
        and ".min." not in parts[-1]
        and not any(part in _NOT_INDEXED or part in _STANDALONE for part in parts[:-1])
        and not is_translation_file(path)
    )


def is_product_candidate(request: ReviewRequest, path: str) -> bool:
    """A candidate the repository's tooling does not run or type-check as a test: type-checker
    example files repeat each other (one copy per checker) by design."""
    return is_candidate(path) and not is_test_input(request, path)


@dataclass(frozen=True)
class _Places:
    """Every place of the tree a window of the added code shares, and the texts of the files they
    are in, by file number (runs.py)."""

    table: runs.PlaceTable
    texts: runs.Texts
    paths: list[str]  # by file number
    numbers: dict[str, int]


@dataclass(frozen=True)
class Region:
    other: str
    start: int  # offsets in the changed file's normalized text
    end: int
    other_start: int


@dataclass
class _Query:
    change: FileChange
    normalized: Normalized
    added: Collection[int]  # line numbers: a range when they follow each other (an appended file)
    source: str
    # The windows inside added lines, hashes beside offsets (once the tree is read, those it
    # shares): hashed only when some file of the change may repeat code (`check`).
    hashes: Hashes = field(init=False)
    offsets: Hashes = field(init=False)

    def hash_windows(self) -> None:
        self.hashes, self.offsets = self.normalized.windows_in(self.added)


@dataclass(frozen=True)
class _Candidate:
    """A duplicate worth reporting, before each pair is reduced to one finding."""

    query: _Query
    region: Region
    mine: Side
    theirs: Side
    in_branch: bool


def _longest_disjoint(runs: list[tuple[int, int, int, int]], paths: Sequence[str]) -> list[Region]:
    """Each run (length, start, other start, other file's number in `paths`) in turn (longest
    first), less what runs already
    taken cover: two copies side by side are found as runs that share a character or two at their
    seam, and the shorter run is still a copy. What is left is the longest free stretch, kept when
    it is still MIN_CHARACTERS long. The taken regions do not overlap, so ordered by start they are
    ordered by end too: the ones a run meets are found by bisection, not by looking at all of them.

    Compiled (`_runs.c`: 0.09 s where this loop took 0.34 s over Django +304k appended's runs) where
    it was built; this loop is its definition."""
    from reviewgate.reviewers.builtin.lenses.duplication.runs import compiled_longest_disjoint  # imported by `_index`

    if compiled_longest_disjoint is not None:
        return [Region(paths[other], start, end, other_start)
                for other, start, end, other_start in compiled_longest_disjoint(runs, MIN_CHARACTERS)]
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
            if end - free_start < MIN_CHARACTERS:
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


def _joined(candidates: list[_Candidate]) -> list[_Candidate]:
    """One copy broken by a small edit (`and isinstance` for `and not isinstance`) is found as two
    runs of whole lines with at most the edited line between them, on both sides: it is one finding,
    over both."""
    joined: list[_Candidate] = []
    for candidate in sorted(candidates, key=lambda item: (item.theirs.path, item.mine.first)):
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and previous.theirs.path == candidate.theirs.path
            and candidate.mine.first <= previous.mine.last + 2
            and previous.theirs.first <= candidate.theirs.first <= previous.theirs.last + 2
        ):
            joined[-1] = replace(
                previous,
                mine=replace(previous.mine, last=max(previous.mine.last, candidate.mine.last)),
                theirs=replace(previous.theirs, last=max(previous.theirs.last, candidate.theirs.last)),
            )
        else:
            joined.append(candidate)
    return joined


def _one_per_pair(candidates: list[_Candidate]) -> list[_Candidate]:
    """A pair found from both sides is reported once, at the later place (path, then line)."""
    kept = []
    for candidate in candidates:
        mirrored = any(
            other.mine.overlaps(candidate.theirs) and other.theirs.overlaps(candidate.mine)
            for other in candidates
            if other is not candidate
        )
        if not mirrored or (candidate.mine.path, candidate.mine.first) > (candidate.theirs.path, candidate.theirs.first):
            kept.append(candidate)
    return kept


def _may_report(query: _Query) -> bool:
    """Whether the file has the MIN_LINES added lines of code every finding needs
    (`_worth_reporting`, `_forked_from`)."""
    lines = query.normalized.lines
    return sum(1 for number in query.added if 1 <= number <= len(lines) and lines[number - 1]) >= MIN_LINES


def _compact(numbers: set[int]) -> Collection[int]:
    """Line numbers as a range when they follow each other (what a file gains at its end): 48
    bytes where a set took about 45 a line (12 MB over the files of a +300k-line change)."""
    if numbers and max(numbers) - min(numbers) + 1 == len(numbers):
        return range(min(numbers), max(numbers) + 1)
    return numbers


def _anchors(normalized: Normalized) -> tuple[Hashes, Hashes]:
    """A file's line-start windows, offsets and hashes: 4 bytes each while the tree is read."""
    from reviewgate.reviewers.builtin.lenses.duplication.hashes import HASH_TYPECODE  # imported by `_index`

    offsets = normalized.anchor_offsets()
    return array(HASH_TYPECODE, offsets), normalized.anchor_hashes(offsets)


def _read_in_batches(request: ReviewRequest, blobs: dict[str, str]) -> Iterator[tuple[str, bytes]]:
    """Each blob's path and bytes, in order, read READ_BATCH_FILES at a time: a cold run reads
    every file of the repository, and all of their bytes at once (twice over while git's output is
    split) were the largest allocation of a large change's search."""
    paths = list(blobs)
    for first in range(0, len(paths), READ_BATCH_FILES):
        yield from request.head.read_blob_ids({path: blobs[path] for path in paths[first : first + READ_BATCH_FILES]}).items()


class DuplicationSearch:
    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        split = split_out_copies(request)
        yield from self._git_copies(request, split)
        queries = self._queries(request, split)
        if not any(_may_report(query) for query in queries.values()):
            return  # no index is read nor built: a one-line change costs no more than its own file
        for query in queries.values():
            query.hash_windows()
        if not any(len(query.hashes) for query in queries.values()):
            return
        places, normalized, sources = self._index(request, queries)
        changed_added = {path: query.added for path, query in queries.items()}
        candidates: list[_Candidate] = []
        for path, query in queries.items():
            regions = self._regions(path, query, places)
            yield from self._findings(path, query, regions, normalized, sources, changed_added, candidates)
        pairs = _one_per_pair(candidates)
        files = request.head.list_files() if pairs else []
        families: dict[str, Families] = {}  # by changed file: found once for all its copies
        for candidate in pairs:
            mirrored = mirrored_directories(files, candidate.mine.path, candidate.theirs.path)
            yield self._duplicate(candidate, sources[candidate.theirs.path], mirrored, families)

    def _git_copies(self, request: ReviewRequest, split: set[str]) -> Iterator[Finding]:
        """A file git itself detected as a copy is a fork at file level (unless split out of a
        file the change shrank: that is compared with the source at head instead)."""
        for change in request.target.files:
            if (
                change.status is ChangeStatus.COPIED
                and change.path not in split
                and change.old_path
                and is_product_candidate(request, change.path)
                and is_product_candidate(request, change.old_path)
            ):
                yield self._near_copy(change.path, change.old_path)

    def _queries(self, request: ReviewRequest, split: set[str]) -> dict[str, _Query]:
        queries: dict[str, _Query] = {}
        for change in request.target.files:
            if change.status is ChangeStatus.DELETED or change.is_binary:
                continue
            if change.status is ChangeStatus.COPIED and change.path not in split:
                continue
            # A formatter's re-wrapping is not added code; all of a split-out file is new at head.
            added = change.added_line_numbers() - rewrapped_lines(change)
            if (not added and change.path not in split) or not is_product_candidate(request, change.path):
                continue
            text = request.head.read_text(change.path)
            if text is None:
                continue
            normalized = Normalized.of(text, language_of(change.path))
            lines = range(1, len(normalized.lines) + 1) if change.path in split else _compact(added)
            queries[change.path] = _Query(change, normalized, lines, text)
        return queries

    def _index(
        self, request: ReviewRequest, queries: dict[str, _Query]
    ) -> tuple[_Places, dict[str, Normalized], dict[str, str]]:
        """Fingerprints of the whole head tree, keeping only those the added code has. A file whose
        content an earlier run indexed (the stored hashes of its blob) is read only when it shares
        a hash with the added code.

        Two passes: every file's distinct hashes first (stored, or computed and then let go of
        with the file), then only the files sharing one of them with the added code are read for
        their places. What the added code and the tree share is known before any place is kept,
        so no set of every hash of the added code (a Python number each: 53 MB for 2.4 million
        windows at +300k lines, where 50,000 are shared) is built when the tree holds fewer."""
        # Only when added code may repeat: not at start.
        from reviewgate.reviewers.builtin.lenses.duplication import runs
        from reviewgate.reviewers.builtin.lenses.duplication.index import BlobIndex
        stored = BlobIndex.for_request(request)
        blobs = {path: blob for path, blob in request.head.blob_ids(None, max_bytes=MAX_FILE_BYTES).items()
                 if is_product_candidate(request, path)}
        digests = {path: stored.load(blob) for path, blob in blobs.items()}  # None: not stored
        unseen = {path: blob for path, blob in blobs.items() if digests[path] is None}
        # A changed file's line-start windows, computed once: 4-byte arrays while the tree is read.
        anchors: dict[str, tuple[Hashes, Hashes]] = {}
        for path in unseen.keys() & queries.keys():
            anchors[path] = _anchors(queries[path].normalized)
            digests[path] = stored.add(unseen[path], anchors[path][1])
        for path, data in _read_in_batches(request, {path: unseen[path] for path in unseen if path not in queries}):
            digests[path] = stored.add(unseen[path], anchor_hashes_of(data, language_of(path)))
        stored.save()
        known = {path: values for path, values in digests.items() if values is not None}
        shared, kept = runs.shared_of([query.hashes for query in queries.values()], list(known.values()))
        known_paths = list(known)
        matching = [known_paths[number] for number in runs.holding(list(known.values()), shared)]
        del digests, known, known_paths
        for changed, changed_kept in zip(queries.values(), kept, strict=True):
            # Only a window the tree shares has places: the others (nine in ten at +300k lines,
            # 17 MB of the two arrays) would only be looked up and passed over.
            changed.hashes = array(changed.hashes.typecode, compress(changed.hashes, changed_kept))
            changed.offsets = array(changed.offsets.typecode, compress(changed.offsets, changed_kept))
        normalized: dict[str, Normalized] = {}
        sources: dict[str, str] = {}  # whole texts: split into lines only for the few findings
        matching_anchors: list[tuple[Hashes, Hashes]] = []
        read = _read_in_batches(request, {path: blobs[path] for path in matching if path not in queries})
        for path in matching:
            query = queries.get(path)
            if query is not None:
                # A changed file's text is the one its query holds (its normalized offsets are of
                # that text), not read nor decoded a second time.
                text, file_normalized = query.source, query.normalized
            else:
                read_path, data = next(read)
                assert read_path == path, "the matching files are read in the order asked"
                text = decode_text(data)
                file_normalized = Normalized.of(text, language_of(path))
            matching_anchors.append(anchors.pop(path) if path in anchors else _anchors(file_normalized))
            normalized[path] = file_normalized
            sources[path] = text
        table = runs.PlaceTable.of(matching_anchors, shared)
        del matching_anchors
        # File numbers: the matching files in the table's order, then the changed files that have
        # no place in the tree (too large to index) but may still repeat one.
        paths = matching + [path for path in queries if path not in normalized]
        texts = runs.Texts.of([normalized[path].text if path in normalized else queries[path].normalized.text for path in paths])
        return _Places(table, texts, paths, {path: number for number, path in enumerate(paths)}), normalized, sources

    def _regions(self, path: str, query: _Query, places: _Places) -> list[Region]:
        """Maximal shared runs between the added code and the tree, the longest first, not
        overlapping (runs.py finds them, for all the places of the file's windows at once)."""
        from reviewgate.reviewers.builtin.lenses.duplication import runs  # imported by `_index`

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
        return _longest_disjoint(found, places.paths)

    def _worth_reporting(self, query: _Query, region: Region, other: Normalized, other_source: str) -> bool:
        normalized = query.normalized
        first, last = normalized.line_at(region.start), normalized.line_at(region.end - 1)
        lines = [number for number in range(first, last + 1) if normalized.lines[number - 1]]
        added = [number for number in lines if number in query.added]
        if not (region.end - region.start >= MIN_CHARACTERS and len(added) >= MIN_LINES and len(added) * 2 >= len(lines)):
            return False
        # Most regions of a common shape fail here, about half way through their names: read a
        # line at a time and given up on as soon as the renaming cannot agree enough (before the
        # distinct lines, a pattern's search a line, which few regions fail).
        their_range = (region.other_start, region.other_start + region.end - region.start)
        if renaming_share(
            normalized,
            (region.start, region.end),
            other,
            their_range,
            below=MIN_CONSISTENT_RENAMING,
            at_most=normalized.text.count(IDENTIFIER_MARK, region.start, region.end),
        ) < MIN_CONSISTENT_RENAMING:
            return False
        distinct = {
            normalized.lines[number - 1]
            for number in lines
            if not CONTINUATION.search(normalized.lines[number - 1])
        }
        if len(distinct) < MIN_DISTINCT_LINES:
            return False
        mine, theirs = normalized.names_between(region.start, region.end), other.names_between(*their_range)
        if mostly_literals(normalized.text[region.start : region.end]):
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

    def _findings(
        self,
        path: str,
        query: _Query,
        regions: list[Region],
        normalized: dict[str, Normalized],
        sources: dict[str, str],
        changed_added: dict[str, Collection[int]],
        candidates: list[_Candidate],
    ) -> Iterator[Finding]:
        """Near-copy findings now; duplicates go to `candidates`, reported once per pair."""
        # A copy inside the change is reported once, at its second occurrence: a region whose other
        # side is that occurrence is left before it is judged (judging is most of this stage's
        # time, and such a region counts neither for a finding here nor for a fork, which is of
        # existing code).
        reportable = [
            region
            for region in regions
            if not self._reported_at_the_other(path, query, region, normalized[region.other], changed_added)
            and self._worth_reporting(query, region, normalized[region.other], sources[region.other])
        ]
        if query.change.status is ChangeStatus.ADDED:
            # A fork is of a file that existed before; two new look-alike files are in-branch repetition.
            existing = [region for region in reportable if region.other not in changed_added]
            fork = self._forked_from(query, existing)
            if fork is not None:
                yield self._near_copy(path, fork)
                return
        found: list[_Candidate] = []
        for region in reportable:
            other = normalized[region.other]
            mine = Side(path, query.normalized.line_at(region.start), query.normalized.line_at(region.end - 1))
            theirs = Side(
                region.other,
                other.line_at(region.other_start),
                other.line_at(region.other_start + region.end - region.start - 1),
            )
            in_branch = theirs.first in changed_added.get(region.other, ())
            found.append(_Candidate(query, region, mine, theirs, in_branch))
        candidates += _joined(found)

    def _reported_at_the_other(
        self, path: str, query: _Query, region: Region, other: Normalized, changed_added: dict[str, Collection[int]]
    ) -> bool:
        """Whether the region's other side is added by the change too and comes later (by path,
        then line): the pair is then reported there."""
        theirs_first = other.line_at(region.other_start)
        return theirs_first in changed_added.get(region.other, ()) and (region.other, theirs_first) > (
            path,
            query.normalized.line_at(region.start),
        )

    def _forked_from(self, query: _Query, regions: list[Region]) -> str | None:
        code_lines = sum(1 for line in query.normalized.lines if line)
        shares: dict[str, int] = defaultdict(int)
        for region in regions:
            shares[region.other] += region.end - region.start
        total = len(query.normalized.text)
        for other, size in shares.items():
            if code_lines >= MIN_LINES and total and size >= NEAR_COPY_SHARE * total:
                return other
        return None

    def _duplicate(
        self,
        candidate: _Candidate,
        other_source: str,
        mirrored: tuple[str, str, int] | None,
        families: dict[str, Families],
    ) -> Finding:
        query, mine, theirs = candidate.query, candidate.mine, candidate.theirs
        other_lines = other_source.split("\n")
        name = definition_name(other_lines, theirs.first, theirs.last, language_of(theirs.path))
        what = f"`{name}`" if name else "the code"
        count = mine.last - mine.first + 1
        quoted = evidence(other_lines, theirs)
        repeated = (
            f"Lines {mine.first}-{mine.last} of {mine.path} ({count} lines) repeat {what} at "
            f"{theirs.path}:{theirs.first}-{theirs.last}"
        )
        if candidate.in_branch:
            title = f"Repeats code this change adds at {theirs}"
            body = (
                f"{repeated}, which this change also adds:\n\n{quoted}\n\nRepetition inside the "
                "branch counts; keep one and call it from both places."
            )
        else:
            title = f"Duplicates existing code: use {what} at {theirs}"
            body = (
                f"{repeated} (same tokens, up to names and literals):\n\n{quoted}\n\nA working "
                f"duplicate is still a finding, two places to fix the next bug. Use {what} at {theirs}, "
                "extending it if it needs a parameter."
            )
        weak = weak_evidence(query.normalized, mine)
        mine_lines = query.source.split("\n")
        language = language_of(mine.path)
        file_families = families.get(mine.path)
        if file_families is None:
            file_families = families[mine.path] = Families(mine_lines, query.normalized.lines, query.added, language)
        # Sizes are judged in lines of code the change adds: a docstring, a comment block or an
        # `@overload` stub repeats no logic, and an unchanged neighbour in the window is not new.
        code_lines = file_families.sized_lines(mine.first, mine.last)
        family = file_families.family_of(mine.first, mine.last)
        siblings = sibling_implementations(mine_lines, mine.first, other_lines, theirs.first)
        classes = sibling_classes(mine_lines, mine.first, other_lines, theirs.first)
        by_design = False  # a demotion for a repetition kept on purpose, not for its size
        if weak:
            body += "\n\nReported at minor: the repeated run is short or mostly boilerplate."
        elif module_system_twins(mine.path, theirs.path):
            weak = by_design = True
            body += (f"\n\nReported at minor: `{mine.path}` and `{theirs.path}` are one module for two module "
                     "systems (ESM and CommonJS), which repeat each other by design.")
        elif family:
            weak = by_design = True
            shown = ", ".join(f"`{name}`" for name in family[:4]) + (" …" if len(family) > 4 else "")
            body += (f"\n\nReported at minor: the repeated lines are short members ({shown}) of a family of "
                     f"{FAMILY_MIN_MEMBERS} or more of one shape in this file, which the change extends: parallel "
                     "boilerplate (a property and its setter per field, one wrapper per method) that repeats by design.")
        elif mirrored:
            weak = by_design = True
            mine_directory, theirs_directory, shared = mirrored
            body += (f"\n\nReported at minor: `{mine_directory}/` and `{theirs_directory}/` mirror each other "
                     f"({shared} other files of the same names): variants of one module kept side by side, "
                     "which repeat each other by design.")
        elif siblings:
            weak = by_design = True
            body += (f"\n\nReported at minor: both runs are in subclasses of `{siblings}`, two "
                     "implementations of one interface, which look alike by design.")
        elif classes and code_lines < EXISTING_MAJOR_LINES:
            weak = by_design = True
            body += (f"\n\nReported at minor: both runs open a class (`{classes[0]}`, `{classes[1]}`) with "
                     f"the same bases and under {EXISTING_MAJOR_LINES} lines of code alike: two implementations of "
                     "one protocol, whose headers look alike by design.")
        elif not candidate.in_branch and code_lines < EXISTING_MAJOR_LINES and not (
            starts_a_definition(mine_lines, mine.first, language_of(mine.path))
            and starts_a_definition(other_lines, theirs.first, language_of(theirs.path))
        ):
            weak = True
            body += (f"\n\nReported at minor: a fragment under {EXISTING_MAJOR_LINES} lines of code; a copied "
                     "definition or a longer copy of existing code blocks.")
        elif candidate.in_branch and code_lines < IN_BRANCH_MAJOR_LINES:
            # Both copies are in front of the author and the reviewer at once (parallel variants
            # such as parse/safeParse, one switch arm beside another): worth a look, not a block.
            weak = True
            body += (f"\n\nReported at minor: both copies are new in this change and the run is under "
                     f"{IN_BRANCH_MAJOR_LINES} lines of code.")
        return lens_finding(
            rule=RULE_DUPLICATE,
            category="reuse",
            finding_class=FindingClass.SYSTEMATIC,
            severity=Severity.MINOR if weak else Severity.MAJOR,
            title=title,
            body=body,
            path=mine.path,
            line=mine.first,
            end_line=mine.last,
            code=query.normalized.lines[mine.first - 1] + theirs.path + (name or ""),
            stable_title="duplicate",
            demoted=BY_DESIGN if by_design else None,
        )

    def _near_copy(self, path: str, other: str) -> Finding:
        # A second configuration file (`vitest.compile.config.ts` beside `vitest.config.ts`) is a
        # variant by design: worth a look, not a block.
        configuration = is_configuration_file(path)
        return lens_finding(
            rule=RULE_NEAR_COPY,
            category="reuse",
            finding_class=FindingClass.SYSTEMATIC,
            severity=Severity.MINOR if configuration else Severity.MAJOR,
            title=f"New file is a near copy of {other}",
            body=(
                f"`{path}` repeats most of `{other}`. A fork of a shared module instead of an "
                f"extension is two places to fix the next bug; extend or parameterize `{other}` instead."
                + ("\n\nReported at minor: it is a configuration file." if configuration else "")
            ),
            path=path,
            code=other,
        )
