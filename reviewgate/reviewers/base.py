"""The reviewer seam: every reviewer turns a ReviewRequest into a ReviewerOutcome."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Protocol

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding


class ReviewerStatus(str, enum.Enum):
    OK = "ok"
    BLOCKED = "blocked"  # could not review: unreachable, garbage, mutation; never approval
    SKIPPED = "skipped"  # deliberately not run (e.g. on-missing-key = skip), said in the report


class Usage(NamedTuple):
    """What a reviewer's model requests took: requests, tokens and their cost."""

    requests: int = 0
    input_tokens: int = 0  # all of them, the prompt cache's reads and writes included
    output_tokens: int = 0
    cost: float | None = None
    cached_input_tokens: int = 0  # of input_tokens: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens: written to it
    cost_partial: bool = False  # the cost leaves out requests of a model without prices

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
        }
        # Only when there is something to say: most servers report no cache use.
        if self.cached_input_tokens:
            data["cached_input_tokens"] = self.cached_input_tokens
        if self.cache_write_tokens:
            data["cache_write_tokens"] = self.cache_write_tokens
        if self.cost_partial:
            data["cost_partial"] = True
        return data

    def plus(self, other: Usage) -> Usage:
        """The sum; a cost that leaves out requests made without prices says it is partial."""
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        unpriced = any(part.cost is None and part.requests for part in (self, other))
        return Usage(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            cost is not None and (unpriced or self.cost_partial or other.cost_partial),
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Usage:
        cost = data.get("cost")
        return cls(int(data.get("requests", 0)), int(data.get("input_tokens", 0)), int(data.get("output_tokens", 0)),
                   float(cost) if cost is not None else None, int(data.get("cached_input_tokens", 0)),
                   int(data.get("cache_write_tokens", 0)), bool(data.get("cost_partial", False)))


class ChunkReuse(NamedTuple):
    """How much of a model review was answered from the chunk cache, and what that saved
    (the stored usage of the reused chunks, priced at today's prices)."""

    reviewed: int  # chunks sent to the model in this run
    reused: int  # chunks answered from the cache
    saved: Usage = Usage()

    def to_json(self) -> dict[str, Any]:
        return {"reviewed": self.reviewed, "reused": self.reused, "saved": self.saved.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChunkReuse:
        return cls(int(data.get("reviewed", 0)), int(data.get("reused", 0)), Usage.from_json(data.get("saved") or {}))


class ReviewerOutcome(NamedTuple):
    """What one reviewer found, or why it could not review, and what that took."""

    reviewer: str
    status: ReviewerStatus
    findings: tuple[Finding, ...] = ()
    reason: str = ""
    product_questions: tuple[str, ...] = ()
    summary: str = ""
    usage: Usage = Usage()
    duration_seconds: float = 0.0
    dropped: int = 0  # findings discarded because their path, line or class was invalid
    not_reviewed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    cached: bool = False  # every chunk was answered from the cache: no request at all
    chunks: ChunkReuse | None = None  # model reviewers: chunks reviewed and reused
    # Model reviewers with the tool loop: every call (tool, arguments, outcome, refusal reason)
    tool_calls: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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
        if self.chunks is not None:
            data["chunks"] = self.chunks.to_json()
        if self.tool_calls:
            data["tool_calls"] = [dict(call) for call in self.tool_calls]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReviewerOutcome:
        """The inverse of to_json, for the review cache; findings come from a `findings` list
        (to_json only counts them, so the cache stores them beside it)."""
        return cls(
            reviewer=str(data["reviewer"]),
            status=ReviewerStatus(data["status"]),
            findings=tuple(Finding.from_json(item) for item in data.get("findings", [])),
            reason=str(data.get("reason", "")),
            product_questions=tuple(str(item) for item in data.get("product_questions", [])),
            summary=str(data.get("summary", "")),
            usage=Usage.from_json(data.get("usage") or {}),
            duration_seconds=float(data.get("duration_seconds", 0.0)),
            dropped=int(data.get("dropped", 0)),
            not_reviewed=tuple(str(item) for item in data.get("not_reviewed", [])),
            notes=tuple(str(item) for item in data.get("notes", [])),
            cached=bool(data.get("cached", False)),
            chunks=ChunkReuse.from_json(data["chunks"]) if isinstance(data.get("chunks"), dict) else None,
            tool_calls=tuple(dict(item) for item in data.get("tool_calls", []) if isinstance(item, dict)),
        )


class Reviewer(Protocol):
    name: str

    def review(self, request: ReviewRequest) -> ReviewerOutcome: ...
