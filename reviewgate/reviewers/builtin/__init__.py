"""The embedded reviewer: deterministic lenses, no key, no network."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Protocol

from reviewgate.config import ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, one_per_place, sort_key
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin.behaviour import prefetch_both_sides
from reviewgate.reviewers.builtin.common import CODE_LANGUAGES, language_of, reviewable_changes
from reviewgate.reviewers.builtin.duplication import DuplicationLens
from reviewgate.reviewers.builtin.oversized import oversized_findings
from reviewgate.reviewers.builtin.process import ReproductionFilesLens, ReproductionPolicyLens
from reviewgate.reviewers.builtin.readability import ReadabilityLens
from reviewgate.reviewers.builtin.secrets import SecretsLens
from reviewgate.reviewers.builtin.security import SecurityLens
from reviewgate.reviewers.builtin.security_fallback import SecurityFallbackLens
from reviewgate.reviewers.builtin.settings import SECTION, parse_lens_settings
from reviewgate.reviewers.builtin.suppression_names import unknown_rule_names
from reviewgate.reviewers.builtin.suppressions import apply_suppressions, missing_reasons
from reviewgate.reviewers.builtin.swallowed import PythonSwallowedFailureLens
from reviewgate.reviewers.builtin.swallowed_text import OtherLanguagesSwallowedFailureLens
from reviewgate.reviewers.builtin.tests_lens import TestsLens
from reviewgate.reviewers.builtin.unhandled_rejection import UnhandledRejectionLens

SOURCE = "builtin"


class Lens(Protocol):
    """One deterministic check. It looks only at what the branch added."""

    def check(self, request: ReviewRequest) -> Iterable[Finding]: ...


# In seed 000's order of weight: reuse, readability, tests, swallowed failures, security, process.
lenses: tuple[Lens, ...] = (
    DuplicationLens(),
    ReadabilityLens(),
    TestsLens(),
    PythonSwallowedFailureLens(),
    OtherLanguagesSwallowedFailureLens(),
    UnhandledRejectionLens(),
    SecurityFallbackLens(),
    SecretsLens(),
    SecurityLens(),
    ReproductionFilesLens(),
    ReproductionPolicyLens(),
)


# Lenses that read the change as a whole (DRY across files, tests for the change, the process
# and its reproduction evidence from the verify): in a shard they run only where the whole-change
# work is done; every other lens reads one file at a time and runs on the shard's files.
WHOLE_CHANGE_LENSES = (DuplicationLens, TestsLens, ReproductionFilesLens, ReproductionPolicyLens)


class BuiltinReviewer:
    name = SOURCE
    reviews_by_file = True

    def __init__(self, name: str = SOURCE) -> None:
        self.name = name

    @classmethod
    def from_settings(cls, settings: ReviewerSettings) -> BuiltinReviewer:
        return cls(settings.name)

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        started = time.monotonic()
        settings = parse_lens_settings(request.sections.get(SECTION, {}), warn=False)
        # The tests lens reads source files at the merge base, the process lens the reproduction
        # files: read with the head files below in one batch, which then finds them all cached.
        # In a shard, the per-file lenses read `part` (the shard's files) and the whole-change
        # lenses run only in the shard that owns them, over the whole change.
        part = request.part()
        whole = request.whole_change
        read = request if whole else part
        prefetch_both_sides(read, ReproductionPolicyLens.reads)
        # Every changed code file is read at head by some lens: in one batch, not a process each.
        request.head.prefetch(
            [change.path for change in reviewable_changes(read) if language_of(change.path) in CODE_LANGUAGES]
        )
        found = [finding for lens in lenses if whole or not isinstance(lens, WHOLE_CHANGE_LENSES)
                 for finding in lens.check(request if isinstance(lens, WHOLE_CHANGE_LENSES) else part)]
        found += missing_reasons(part)
        found += unknown_rule_names(part)
        found += oversized_findings(part)
        # One finding per place: 120 identical handlers are 120 findings, each with its own id.
        findings = one_per_place(finding for finding in found if settings.enabled(finding.rule))
        kept = apply_suppressions(request, findings)
        return ReviewerOutcome(
            reviewer=self.name,
            status=ReviewerStatus.OK,
            findings=tuple(sorted(kept, key=sort_key)),
            duration_seconds=time.monotonic() - started,
            notes=tuple(f"{change.path}: over the per-file size cap, read by the line lenses only"
                        for change in part.target.oversized),
        )
