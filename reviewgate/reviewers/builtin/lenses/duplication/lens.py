"""Reuse and DRY, the first weight: added code that repeats code the repository already has (or
that the change adds twice). The search (search.py: normalization, fingerprints, the
stored index) is imported only for a change that could repeat anything: a finding needs
MIN_LINES added lines of code in one file, or a file git itself saw copied. A change smaller
than that (most pushes of a review) loads none of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from reviewgate.context import ReviewRequest
from reviewgate.findings import ADVISORY, Finding, Severity
from reviewgate.freeze.diff import ChangeStatus

RULE_DUPLICATE = "reuse/duplicate-code"
RULE_NEAR_COPY = "reuse/near-copy-file"
# A duplicate worth a finding spans at least this many non-empty added lines.
MIN_LINES = 5
# Why a major duplicate does not block by default: on projects its rules were not tuned on, none
# of its blocks held (docs/lenses.md, "Duplicate code is advisory").
ADVISORY_REASON = (
    "duplicate code is advisory: on projects its rules were not tuned on, its blocks did not hold "
    "(set [lenses] block_on_duplicates = true to block on it)"
)


def could_repeat(request: ReviewRequest) -> bool:
    """Whether any file of the change could hold a finding: git saw it copied, or it adds
    MIN_LINES non-blank lines (every finding needs that many added lines of code)."""
    for change in request.target.files:
        if change.status is ChangeStatus.COPIED:
            return True
        if change.status is not ChangeStatus.DELETED and not change.is_binary:
            if sum(1 for line in change.added_lines().values() if line.strip()) >= MIN_LINES:
                return True
    return False


class DuplicationLens:
    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        if not could_repeat(request):
            return
        from reviewgate.reviewers.builtin.lenses.duplication.search import DuplicationSearch  # see the docstring

        yield from DuplicationSearch().check(request)


def advisory_duplicates(findings: Iterable[Finding], block: bool) -> list[Finding]:
    """The findings, a major `reuse/duplicate-code` one marked advisory (reported at major, not
    blocking) unless `block` ([lenses] block_on_duplicates) asks for it to block."""
    if block:
        return list(findings)
    return [
        finding.with_changes(
            body=finding.body + f"\n\nAdvisory: {ADVISORY_REASON}.", extra={**finding.extra, ADVISORY: ADVISORY_REASON}
        )
        if finding.rule == RULE_DUPLICATE and finding.severity in (Severity.BLOCKER, Severity.MAJOR)
        else finding
        for finding in findings
    ]
