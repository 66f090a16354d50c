"""The verdict as a pure function: policy, failures that must never approve, routes."""

from __future__ import annotations

from reviewgate.config import FailRule
from reviewgate.findings import FindingClass, Severity
from reviewgate.gate import Decision, Route, blocks, decide
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.verify.outcome import ABSENT, VerifyOutcome, VerifyStatus
from testing.results import sample_finding

OK = (ReviewerOutcome("builtin", ReviewerStatus.OK),)


def test_default_policy_blocks_systematic_and_correctness_at_major_and_above() -> None:
    for finding_class in FindingClass:
        for severity in Severity:
            expected = finding_class in (FindingClass.SYSTEMATIC, FindingClass.CORRECTNESS) and severity in (
                Severity.BLOCKER, Severity.MAJOR)
            assert blocks(sample_finding(finding_class=finding_class, severity=severity)) is expected


def test_naming_and_product_questions_never_block_even_when_configured() -> None:
    rules = (FailRule(FindingClass.PRODUCT_QUESTION, Severity.NIT),)
    assert not blocks(sample_finding(finding_class=FindingClass.PRODUCT_QUESTION, severity=Severity.BLOCKER), rules)
    assert blocks(sample_finding(finding_class=FindingClass.READABILITY, severity=Severity.MAJOR),
                  (FailRule(FindingClass.READABILITY, Severity.MAJOR),))


def test_a_dismissed_finding_does_not_block() -> None:
    assert not blocks(sample_finding(dismissed="rejected: handled upstream"))


def test_a_blocked_reviewer_blocks_even_beside_an_approving_one() -> None:
    outcomes = (*OK, ReviewerOutcome("llm", ReviewerStatus.BLOCKED, reason="HTTP 500 after 3 tries"))
    verdict = decide([], outcomes, ABSENT)
    assert verdict.decision is Decision.BLOCKED and verdict.exit_code == 3
    assert verdict.reasons == ("reviewer llm: HTTP 500 after 3 tries",)


def test_a_blocked_reviewer_wins_over_blocking_findings() -> None:
    outcomes = (*OK, ReviewerOutcome("llm", ReviewerStatus.BLOCKED, reason="timeout"))
    assert decide([sample_finding()], outcomes, ABSENT).decision is Decision.BLOCKED


def test_setup_side_verify_failure_blocks_and_branch_side_requests_changes() -> None:
    setup = VerifyOutcome(VerifyStatus.BLOCKED, reason="secret DATABASE_URL is not set")
    assert decide([], OK, setup).decision is Decision.BLOCKED
    branch = VerifyOutcome(VerifyStatus.FAILED, reason="test exited 1")
    verdict = decide([], OK, branch)
    assert (verdict.decision, verdict.route, verdict.exit_code) == (Decision.REQUEST_CHANGES, Route.DEBUGGING, 1)


def test_routes() -> None:
    assert decide([sample_finding()], OK, ABSENT).route is Route.IMPLEMENTATION
    minor_systematic = sample_finding(finding_class=FindingClass.SYSTEMATIC, severity=Severity.MINOR)
    assert decide([minor_systematic], OK, ABSENT).route is Route.DEBT
    assert decide([], OK, ABSENT).route is Route.CLOSEOUT


def test_a_skipped_reviewer_beside_one_that_reviewed_does_not_block() -> None:
    outcomes = (*OK, ReviewerOutcome("llm", ReviewerStatus.SKIPPED, reason="on-missing-key = skip"))
    assert decide([], outcomes, ABSENT).decision is Decision.APPROVE


def test_a_change_no_reviewer_reviewed_is_blocked_never_approved() -> None:
    skipped = (ReviewerOutcome("llm", ReviewerStatus.SKIPPED, reason="$OPENAI_API_KEY is not set"),)
    verdict = decide([], skipped, ABSENT)
    assert verdict.decision is Decision.BLOCKED and verdict.exit_code == 3
    assert verdict.reasons[0].startswith("no reviewer reviewed this change")
    assert "llm: $OPENAI_API_KEY is not set" in verdict.reasons[0]
    assert decide([], (*OK, *skipped), ABSENT).decision is Decision.APPROVE


def test_an_empty_change_and_a_verify_only_run_are_not_unreviewed() -> None:
    empty = (ReviewerOutcome("builtin", ReviewerStatus.SKIPPED, reason="empty change"),)
    assert decide([], empty, ABSENT, nothing_to_review=True).decision is Decision.APPROVE
    assert decide([], (), ABSENT).decision is Decision.APPROVE
