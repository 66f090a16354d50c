"""The verdict: a pure function of the findings, the reviewers' outcomes and the verify."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NamedTuple

from reviewgate.config import DEFAULT_FAIL_ON, FailRule
from reviewgate.errors import EXIT_APPROVED, EXIT_BLOCKED, EXIT_CHANGES_REQUESTED
from reviewgate.findings import ADVISORY, Finding, FindingClass
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.verify.outcome import VerifyOutcome, VerifyStatus


class Decision(str, enum.Enum):
    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    BLOCKED = "blocked"

    @property
    def exit_code(self) -> int:
        return {
            Decision.APPROVE: EXIT_APPROVED,
            Decision.REQUEST_CHANGES: EXIT_CHANGES_REQUESTED,
            Decision.BLOCKED: EXIT_BLOCKED,
        }[self]


class Route(str, enum.Enum):
    """The routing precedence, for whoever acts on the verdict next."""

    DEBUGGING = "debugging"  # the verify failed: runtime evidence first
    IMPLEMENTATION = "implementation"  # blocking findings to fix
    DEBT = "debt"  # only non-blocking systematic findings remain
    CLOSEOUT = "closeout"  # nothing left to do


class Verdict(NamedTuple):
    """The decision, where it sends the work next, and the findings and reasons behind it."""

    decision: Decision
    route: Route | None
    blocking: tuple[Finding, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.decision.exit_code


def blocks(finding: Finding, fail_on: Iterable[FailRule] = DEFAULT_FAIL_ON) -> bool:
    """Only systematic or correctness findings at blocker or major send work back by
    default; a dismissed finding (answered, suppressed) never does, nor a product question."""
    if finding.dismissed is not None or finding.finding_class is FindingClass.PRODUCT_QUESTION:
        return False
    if finding.extra.get(ADVISORY):  # reported at its severity, never blocking (findings.ADVISORY)
        return False
    return any(
        finding.finding_class is rule.finding_class and finding.severity.rank >= rule.severity.rank
        for rule in fail_on
    )


def unread_files(paths: Iterable[str], outcomes: Iterable[ReviewerOutcome], readers: Iterable[str]) -> tuple[str, ...]:
    """Why the review is incomplete when files only `readers` can read (the builtin reviewer, for
    files over the size cap) were read by none of them: one reason per file."""
    wanted = set(readers)
    if any(item.reviewer in wanted and item.status is ReviewerStatus.OK for item in outcomes):
        return ()
    return tuple(f"{path}: over the per-file size cap, only the builtin reviewer's line lenses can read it, "
                 "and none ran" for path in paths)


def decide(
    findings: Iterable[Finding],
    outcomes: Iterable[ReviewerOutcome],
    verify: VerifyOutcome,
    fail_on: Iterable[FailRule] = DEFAULT_FAIL_ON,
    *,
    nothing_to_review: bool = False,
    unread: Iterable[str] = (),
) -> Verdict:
    """Never turn a failure into approval: any blocked reviewer or a setup-side verify failure
    blocks the whole gate, whatever the other reviewers found. So does a change no reviewer
    reviewed (every one skipped, e.g. a model without its key on a fork PR), and a file no
    reviewer read (`unread`, from `unread_files`); an empty change (`nothing_to_review`) is not
    unreviewed, and a verify-only run has no reviewers at all."""
    rules = tuple(fail_on)
    all_findings = tuple(findings)
    outcomes = tuple(outcomes)
    reasons = [f"reviewer {item.reviewer}: {item.reason}" for item in outcomes if item.status is ReviewerStatus.BLOCKED]
    if outcomes and not nothing_to_review and all(item.status is ReviewerStatus.SKIPPED for item in outcomes):
        skipped = "; ".join(f"{item.reviewer}: {item.reason or 'skipped'}" for item in outcomes)
        reasons.append(f"no reviewer reviewed this change (every one was skipped: {skipped}); "
                       "nothing unreviewed is approved")
    reasons += list(unread)
    if verify.status is VerifyStatus.BLOCKED:
        reasons.insert(0, f"verify: {verify.reason}")
    blocking = tuple(item for item in all_findings if blocks(item, rules))
    if reasons:
        return Verdict(Decision.BLOCKED, None, blocking, tuple(reasons))
    if verify.status is VerifyStatus.FAILED:
        return Verdict(Decision.REQUEST_CHANGES, Route.DEBUGGING, blocking, (f"verify: {verify.reason}",))
    if blocking:
        return Verdict(Decision.REQUEST_CHANGES, Route.IMPLEMENTATION, blocking)
    if any(item.finding_class is FindingClass.SYSTEMATIC and item.dismissed is None for item in all_findings):
        return Verdict(Decision.APPROVE, Route.DEBT)
    return Verdict(Decision.APPROVE, Route.CLOSEOUT)
