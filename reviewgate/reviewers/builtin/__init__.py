"""The embedded reviewer: deterministic lenses, no key, no network. This module is the reviewer as
the gate builds it; its review (lens_review.py) and the lenses are loaded when it first reviews."""

from __future__ import annotations

from reviewgate.config import ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.reviewers.base import ReviewerOutcome
from reviewgate.reviewers.builtin.workers import configured_workers

SOURCE = "builtin"


class BuiltinReviewer:
    name = SOURCE
    reviews_by_file = True

    def __init__(self, name: str = SOURCE) -> None:
        self.name = name

    @classmethod
    def from_settings(cls, settings: ReviewerSettings) -> BuiltinReviewer:
        configured_workers()  # a bad REVIEWGATE_WORKERS is a usage error before any work, not a failed review
        return cls(settings.name)

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        from reviewgate.reviewers.builtin.lens_review import review

        return review(self.name, request)
