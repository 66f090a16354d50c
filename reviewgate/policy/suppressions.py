"""What a suppression comment the change itself adds may do to a blocking finding.

A `reviewgate: ignore[rule] reason` comment on the branch is the branch talking about its own
review. The target side's `[review] branch_suppressions` decides: `allow` (it counts, silently),
`list` (the default: it counts, and summary.md and the PR comment list it under "Suppressed by
this change", so a person sees every one) or `refuse` (it does not dismiss the finding, which
blocks, and is listed as refused). A suppression already present at the target side always
counts. Only suppressions on findings that would otherwise block are listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from reviewgate.config import FailRule
from reviewgate.findings import Finding
from reviewgate.gate import blocks

ALLOW, LIST, REFUSE = "allow", "list", "refuse"


class BranchSuppression(NamedTuple):
    """A suppression comment the branch added on a blocking finding, and whether the policy refused it."""

    finding: Finding  # as it stands after the policy (dismissed unless refused)
    reason: str
    refused: bool

    def to_json(self) -> dict[str, Any]:
        return {"finding_id": self.finding.id, "path": self.finding.path, "line": self.finding.line,
                "rule": self.finding.rule, "reason": self.reason, "refused": self.refused}


def _added_by_change(finding: Finding) -> Mapping[str, Any] | None:
    record = finding.extra.get("suppression")
    if finding.dismissed is None or not isinstance(record, Mapping) or not record.get("added_by_change"):
        return None
    return record


def apply_suppression_policy(
    findings: Iterable[Finding], mode: str, fail_on: Iterable[FailRule]
) -> tuple[tuple[Finding, ...], tuple[BranchSuppression, ...]]:
    """The findings with the policy applied, and the branch's suppressions to list."""
    rules = tuple(fail_on)
    result: list[Finding] = []
    listed: list[BranchSuppression] = []
    for finding in findings:
        record = _added_by_change(finding)
        if record is None or not blocks(finding.with_changes(dismissed=None), rules):
            result.append(finding)
            continue
        reason = str(record.get("reason") or "")
        if mode == REFUSE:
            finding = finding.with_changes(dismissed=None)
        if mode != ALLOW:
            listed.append(BranchSuppression(finding, reason, refused=mode == REFUSE))
        result.append(finding)
    return tuple(result), tuple(listed)
