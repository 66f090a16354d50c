"""The verdict stage: what the verify and the reviewers found, decided into one verdict and
published through every sink. A run (run.py), `reviewgate verify` and the shards' merge
(sharding/merge.py) all end here."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO

from reviewgate.ci.context import CiContext
from reviewgate.config import Config
from reviewgate.context import Rejection
from reviewgate.findings import Finding, one_per_place, sort_key
from reviewgate.forge.steps import (
    abandon_check_run,
    builtin_sources,
    conversation_notes,
    decide_rounds_for,
    rounds_notes,
)
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.gate import decide
from reviewgate.policy.changes import PolicyReview
from reviewgate.policy.confidence import apply_min_confidence
from reviewgate.policy.suppressions import apply_suppression_policy
from reviewgate.report import publish
from reviewgate.result import GateResult
from reviewgate.reviewers.base import ReviewerOutcome
from reviewgate.verify.outcome import VerifyOutcome

if TYPE_CHECKING:
    from reviewgate.forge.conversation import Acceptance
    from reviewgate.forge.session import ForgeRun


class GateRun(NamedTuple):
    """What a run stands on once the change is frozen: the change, the policy in force, where the
    run is and where its outputs go."""

    target: FrozenTarget
    config: Config
    context: CiContext
    output_dir: Path
    started_at: str
    forge: ForgeRun | None = None  # None: a local run, which publishes to no forge
    policy: PolicyReview | None = None  # None: `reviewgate verify`, which reviews no change


class Reviewed(NamedTuple):
    """What the verify and the reviewers gave the verdict."""

    verify: VerifyOutcome
    outcomes: tuple[ReviewerOutcome, ...]
    timings: dict[str, float]
    notes: tuple[str, ...]
    rejections: tuple[Rejection, ...] = ()  # REVIEW-REJECTED: answers
    unread: tuple[str, ...] = ()  # files no reviewer could read: each blocks
    # Why the review is not whole (a merge's refused or missing shards): each one blocks.
    incomplete: tuple[str, ...] = ()


def merge_findings(outcomes: tuple[ReviewerOutcome, ...], verify: VerifyOutcome,
                   extra: tuple[Finding, ...] = ()) -> tuple[Finding, ...]:
    merged = one_per_place((*verify.findings, *(item for outcome in outcomes for item in outcome.findings), *extra))
    return tuple(sorted(merged, key=sort_key))


def run_notes(config: Config, forge: ForgeRun | None, policy: PolicyReview) -> list[str]:
    """What the summary says about the policy and the conversation, before any review."""
    notes: list[str] = [*policy.notes, *conversation_notes(forge)]
    if not config.review.fail_on:
        notes.append("Report-only (fail-on none): every finding is reported and none blocks; a review "
                     "that could not be done is still blocked.")
    return notes


@contextlib.contextmanager
def check_run_abandoned_on_error(forge: ForgeRun | None) -> Iterator[None]:
    """A run that fails after the check run went in_progress completes it with the error, so it is
    never left spinning."""
    try:
        yield
    except BaseException as error:
        abandon_check_run(forge, f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
        raise


def publish_result(run: GateRun, reviewed: Reviewed, stdout: TextIO) -> int:
    """Decide and publish through every sink; the exit code of the verdict."""
    config, forge, policy = run.config, run.forge, run.policy
    findings = merge_findings(reviewed.outcomes, reviewed.verify, policy.findings if policy else ())
    findings = apply_min_confidence(findings, config.review.min_confidence)
    # The forge's conversation is read only on a forge: a local run has no answers to apply.
    if reviewed.rejections:
        from reviewgate.forge.conversation import apply_rejections

        findings = apply_rejections(findings, reviewed.rejections, builtin_sources(config))
    findings, branch_suppressions = apply_suppression_policy(
        findings, config.review.branch_suppressions, config.review.fail_on)
    # A trusted person's ACCEPTED: is the last word on a finding, whichever reviewer found it.
    acceptances: tuple[Acceptance, ...] = ()
    if forge is not None:
        from reviewgate.forge.conversation import apply_acceptances, first_acceptances

        acceptances = first_acceptances(forge.conversation.acceptances)
        findings = apply_acceptances(findings, acceptances)
    verdict = decide(findings, reviewed.outcomes, reviewed.verify, config.review.fail_on,
                     nothing_to_review=run.target.is_empty, unread=(*reviewed.unread, *reviewed.incomplete))
    rounds = decide_rounds_for(forge, run.target, verdict, config.review.max_rounds)
    result = GateResult(
        target=run.target, config=config, ci=run.context, verify=reviewed.verify, outcomes=reviewed.outcomes,
        findings=findings, verdict=verdict, output_dir=run.output_dir, started_at=run.started_at,
        timings=reviewed.timings, notes=(*reviewed.notes, *rounds_notes(forge, rounds)), forge=forge, rounds=rounds,
        policy=policy, acceptances=acceptances, branch_suppressions=branch_suppressions,
    )
    publish(result, stdout)
    return verdict.exit_code
