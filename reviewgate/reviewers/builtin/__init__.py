"""The embedded reviewer: deterministic lenses, no key, no network."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Protocol

from reviewgate.config import ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, sort_key
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin.process import ReproductionFilesLens
from reviewgate.reviewers.builtin.swallowed import PythonSwallowedFailureLens

SOURCE = "builtin"


class Lens(Protocol):
    """One deterministic check. It looks only at what the branch added."""

    def check(self, request: ReviewRequest) -> Iterable[Finding]: ...


lenses: tuple[Lens, ...] = (
    ReproductionFilesLens(),
    PythonSwallowedFailureLens(),
)


class BuiltinReviewer:
    name = SOURCE

    def __init__(self, name: str = SOURCE) -> None:
        self.name = name

    @classmethod
    def from_settings(cls, settings: ReviewerSettings) -> BuiltinReviewer:
        return cls(settings.name)

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        started = time.monotonic()
        findings: dict[str, Finding] = {}
        for lens in lenses:
            for finding in lens.check(request):
                findings.setdefault(finding.id, finding)
        return ReviewerOutcome(
            reviewer=self.name,
            status=ReviewerStatus.OK,
            findings=tuple(sorted(findings.values(), key=sort_key)),
            duration_seconds=time.monotonic() - started,
        )
