"""One chunk's work in a model review: how much context it gets, what its cached answer's key
depends on, what it asked and got back, and its share of a request's cost."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from reviewgate.cache_keys import text_digest
from reviewgate.context import Rejection
from reviewgate.findings import Finding
from reviewgate.policy.instructions import PathInstruction
from reviewgate.reviewers.base import Usage
from reviewgate.reviewers.model.chunking import Chunk
from reviewgate.reviewers.model.context_collector import CollectedContext
from reviewgate.reviewers.model.contract import ParsedReview
from reviewgate.reviewers.model.redaction import Redaction
from reviewgate.reviewers.model.rendering import estimate_tokens
from reviewgate.reviewers.model.reply import Reply

# A chunk's governing docs, the definitions of the names it only calls and its neighbours'
# names take at most as much as its diff is long, and at least this (up to context_chars): a
# 3-line fix is not sent 8,000 characters of them. A chunk is one block of a hunk
# (chunking.py), so a request of many blocks gets this many times over: about one definition
# each (2,000 here cost 17% more on the PR replay). The call sites of what the chunk defines or
# edits are not held to it: they take what they need, up to context_chars
# (context_collector.py).
CONTEXT_FLOOR_CHARS = 500


def context_budget_for(chunk: Chunk, cap: int) -> int:
    return min(cap, max(CONTEXT_FLOOR_CHARS, len(chunk.text)))


@dataclass
class ChunkResult:
    findings: list[Finding] = field(default_factory=list)
    summary: str = ""
    verdict: str = ""
    product_questions: list[str] = field(default_factory=list)
    blocked: str | None = None
    usage: list[Reply] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    moved: int = 0
    redactions: list[Redaction] = field(default_factory=list)
    reused: Reply | None = None  # answered from the cache: what the stored answer cost
    request: int = -1  # which of the run's requests asked it (-1: none)
    notes: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # the tool loop's calls for its answer


@dataclass
class Prepared:
    """A chunk ready to be asked: its context, the rejections on its files, its cache key's
    material, and its answer once known (stored, or split from the request that asked it)."""

    chunk: Chunk
    context: CollectedContext
    rejections: tuple[Rejection, ...]
    instructions: tuple[PathInstruction, ...]  # the repository's rules for its files
    material: dict[str, Any]
    result: ChunkResult
    stored: ParsedReview | None = None

    def tokens(self) -> int:
        """What it adds to a request: its diff and its context (shared excerpts counted twice)."""
        return self.chunk.tokens + estimate_tokens(self.context.render())


def request_shares(usage: Usage, sizes: list[int]) -> list[Usage]:
    """A request's cost split over the chunks it answered, by their size (what reusing one of
    them saves; the shares add up to the whole); the request itself is counted on the first."""
    total = sum(sizes) or 1
    ends = list(accumulate(sizes))
    starts = [0, *ends[:-1]]

    def part(tokens: int, index: int) -> int:
        return tokens * ends[index] // total - tokens * starts[index] // total

    return [Usage(1 if index == 0 else 0, part(usage.input_tokens, index), part(usage.output_tokens, index))
            for index in range(len(sizes))]


def chunk_material(
    identity: dict[str, Any], diff: str, context_keys: list[str], system: str, asked: list[str]
) -> dict[str, Any]:
    """What a chunk's answer depends on, as the chunk cache's key material (digests: the stored
    key must not spell out settings such as extra_headers): the reviewer and prompt version, the
    system message, the chunk's diff and the context excerpts it was given, both without their
    line numbers (a push that only shifts these hunks or a cited function leaves the key alone:
    the stored answer's lines are rebased, rebasing.py), and the rules, REPRODUCTION and
    REVIEW-REJECTED answers it was asked with."""
    return {
        "reviewer": text_digest(json.dumps(identity, sort_keys=True, default=str)),
        "system": text_digest(system),
        "chunk": text_digest(diff),
        "context": text_digest("\0\0".join(context_keys)),
        "asked": text_digest("\0\0".join(asked)),
    }
