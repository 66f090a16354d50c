"""The reviewer seam: every reviewer turns a ReviewRequest into a ReviewerOutcome."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding


class ReviewerStatus(str, enum.Enum):
    OK = "ok"
    BLOCKED = "blocked"  # could not review: unreachable, garbage, mutation; never approval
    SKIPPED = "skipped"  # deliberately not run (e.g. on-missing-key = skip), said in the report


@dataclass(frozen=True)
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
        }


@dataclass(frozen=True)
class ReviewerOutcome:
    reviewer: str
    status: ReviewerStatus
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    reason: str = ""
    product_questions: tuple[str, ...] = field(default_factory=tuple)
    summary: str = ""
    usage: Usage = Usage()
    duration_seconds: float = 0.0
    dropped: int = 0  # findings discarded because their path, line or class was invalid
    not_reviewed: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "reviewer": self.reviewer,
            "status": self.status.value,
            "reason": self.reason,
            "finding_count": len(self.findings),
            "product_questions": list(self.product_questions),
            "summary": self.summary,
            "usage": self.usage.to_json(),
            "duration_seconds": round(self.duration_seconds, 3),
            "dropped": self.dropped,
            "not_reviewed": list(self.not_reviewed),
            "notes": list(self.notes),
            "cached": self.cached,
        }


class Reviewer(Protocol):
    name: str

    def review(self, request: ReviewRequest) -> ReviewerOutcome: ...
