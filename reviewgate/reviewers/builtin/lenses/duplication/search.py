"""The DRY lens's search (lens.py makes its findings): added code that repeats code the
repository already has (or that the change adds twice), the same tokens or the same shape under
new names and literals. Its stages, in order:

- candidate_files.py: which files are compared, on both sides;
- added_code.py: the code each changed file adds, normalized (fingerprints.py), and its windows;
- tree_places.py: the places of the tree at head sharing a window with it, through the stored
  index (index.py), read only for the files that share one;
- runs.py: the maximal shared runs through those places, and the regions taken from them;
- duplicates.py: which regions are duplicates worth a finding, which new file forks another, and
  each pair once.

The repository at head is indexed once per run, keeping only the fingerprints the added code has;
only added code is compared against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import ChangeStatus
from reviewgate.reviewers.builtin.lenses.duplication.added_code import may_report, queries
from reviewgate.reviewers.builtin.lenses.duplication.candidate_files import is_product_candidate
from reviewgate.reviewers.builtin.lenses.duplication.rules import split_out_copies

if TYPE_CHECKING:  # read only when the added code may repeat code
    from reviewgate.reviewers.builtin.lenses.duplication.duplicates import Candidate


@dataclass
class Copies:
    """What the search found: new files that fork an existing one, then duplicates, each pair of
    places once, with the text of every file a duplicate repeats."""

    forks: list[tuple[str, str]] = field(default_factory=list)  # (new file, the file it copies)
    duplicates: list[Candidate] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # by path


def copies_in(request: ReviewRequest) -> Copies:
    found = Copies()
    split = split_out_copies(request)
    # A file git itself detected as a copy is a fork at file level (unless split out of a file the
    # change shrank: that is compared with the source at head instead).
    for change in request.target.files:
        if (
            change.status is ChangeStatus.COPIED
            and change.path not in split
            and change.old_path
            and is_product_candidate(request, change.path)
            and is_product_candidate(request, change.old_path)
        ):
            found.forks.append((change.path, change.old_path))
    changed = queries(request, split)
    if not any(may_report(query) for query in changed.values()):
        return found  # no index is read nor built: a one-line change costs no more than its own file
    for query in changed.values():
        query.hash_windows()
    if not any(len(query.hashes) for query in changed.values()):
        return found
    # Only when added code may repeat: not at start.
    from reviewgate.reviewers.builtin.lenses.duplication.duplicates import file_copies, one_per_pair, regions_of
    from reviewgate.reviewers.builtin.lenses.duplication.tree_places import places_of

    places, normalized, found.sources = places_of(request, changed)
    changed_added = {path: query.added for path, query in changed.items()}
    candidates: list[Candidate] = []
    for path, query in changed.items():
        regions = regions_of(path, query, places)
        fork, duplicates = file_copies(path, query, regions, normalized, found.sources, changed_added)
        if fork is not None:
            found.forks.append((path, fork))
        candidates += duplicates
    found.duplicates = one_per_pair(candidates)
    return found
