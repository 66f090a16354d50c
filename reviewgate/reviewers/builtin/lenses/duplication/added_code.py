"""The DRY search's changed side: the code each changed file adds, normalized, and the windows
of it that are looked up in the tree (tree_places.py)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.lenses.duplication.candidate_files import is_product_candidate
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized
from reviewgate.reviewers.builtin.lenses.duplication.hashes import Hashes
from reviewgate.reviewers.builtin.lenses.duplication.rules import rewrapped_lines
from reviewgate.reviewers.builtin.lenses.duplication.sizes import MIN_LINES


@dataclass
class Query:
    """The code one changed file adds, as the search compares it."""

    change: FileChange
    normalized: Normalized
    added: Collection[int]  # line numbers: a range when they follow each other (an appended file)
    source: str
    # The windows inside added lines, hashes beside offsets (once the tree is read, those it
    # shares): hashed only when some file of the change may repeat code (search.py).
    hashes: Hashes = field(init=False)
    offsets: Hashes = field(init=False)

    def hash_windows(self) -> None:
        self.hashes, self.offsets = self.normalized.windows_in(self.added)


def queries(request: ReviewRequest, split: set[str]) -> dict[str, Query]:
    """A query for each changed file of product code that adds lines, by path; all of a file split
    out of another the change shrank (`split`) is new at head."""
    found: dict[str, Query] = {}
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
        lines = range(1, len(normalized.lines) + 1) if change.path in split else compact(added)
        found[change.path] = Query(change, normalized, lines, text)
    return found


def may_report(query: Query) -> bool:
    """Whether the file has the MIN_LINES added lines of code every finding needs
    (duplicates.py: `worth_reporting`, `forked_from`)."""
    lines = query.normalized.lines
    return sum(1 for number in query.added if 1 <= number <= len(lines) and lines[number - 1]) >= MIN_LINES


def compact(numbers: set[int]) -> Collection[int]:
    """Line numbers as a range when they follow each other (what a file gains at its end): 48
    bytes where a set took about 45 a line (12 MB over the files of a +300k-line change)."""
    if numbers and max(numbers) - min(numbers) + 1 == len(numbers):
        return range(min(numbers), max(numbers) + 1)
    return numbers
