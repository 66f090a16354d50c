"""Everything one gate run decided, handed to every sink."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from reviewgate.ci.context import CiContext
from reviewgate.config import Config
from reviewgate.findings import Finding
from reviewgate.forge.rounds import Rounds
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.gate import Verdict
from reviewgate.policy.changes import PolicyReview
from reviewgate.policy.suppressions import BranchSuppression
from reviewgate.reviewers.base import ReviewerOutcome
from reviewgate.verify.outcome import VerifyOutcome

if TYPE_CHECKING:
    from reviewgate.forge.conversation import Acceptance
    from reviewgate.forge.session import ForgeRun


@dataclass(frozen=True)
class GateResult:
    """One run's whole result, as every sink publishes it."""

    target: FrozenTarget
    config: Config
    ci: CiContext
    verify: VerifyOutcome
    outcomes: tuple[ReviewerOutcome, ...]
    findings: tuple[Finding, ...]
    verdict: Verdict
    output_dir: Path
    started_at: str
    timings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = field(default_factory=tuple)
    # The forge this run publishes to: None on a local run.
    forge: ForgeRun | None = None
    # Review rounds on this PR/MR and whether the loop gave up at the cap (forge/rounds.py).
    rounds: Rounds | None = None
    # Where the policy was read and what the change would change in it (policy/changes.py).
    policy: PolicyReview | None = None
    # Trusted people's ACCEPTED: answers (forge/conversation.py), one per finding id.
    acceptances: tuple[Acceptance, ...] = field(default_factory=tuple)
    # Suppression comments the change adds on blocking findings (policy/suppressions.py).
    branch_suppressions: tuple[BranchSuppression, ...] = field(default_factory=tuple)

    def accepted_ids(self) -> set[str]:
        """The acceptances that matched a finding of this run."""
        present = {item.id for item in self.findings}
        return {item.finding_id for item in self.acceptances if item.finding_id in present}

    @cached_property
    def _blocking_ids(self) -> frozenset[str]:
        return frozenset(item.id for item in self.verdict.blocking)

    def is_blocking(self, finding: Finding) -> bool:
        # Asked once a finding by every sink: a set, not a scan of the blocking ones each time.
        return finding.id in self._blocking_ids
