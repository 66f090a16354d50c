"""Reuse model answers per chunk: a push pays only for the chunks whose prompt is new
(DESIGN.md: "the same patch reviewed again is not paid for twice").

A chunk's key is everything its answer depends on: the reviewer's settings and prompt version
(`cache_identity()`), and what it was sent (engine.chunk_material: the chunk's diff text and the
context excerpts, both without their line numbers, the repository's instructions, the
REPRODUCTION/REVIEW-REJECTED text it was given). One JSON file per chunk under `<dir>/<reviewer>/chunks/<key>.json` holds the
model's answer (the findings of the request that asked it which land on the chunk, packing.py),
its share of what the request cost and where the chunk's hunks stood; the answer is read through the
contract again, its lines moved with their hunks (rebasing.py) and its findings placed on the
current head when reused.
Only answers that passed the contract are stored: a blocked chunk is never reused.

Beside them, `<dir>/<reviewer>/places/` remembers where each reported finding stood (line, rule,
code, id) so a REVIEW-REJECTED: <file>:<line> written against an earlier head still finds the
finding it answered after lines shift, and a finding asked again keeps its id in new words. `[cache] dir` or `--cache-dir` (default
`.reviewgate-cache/`, relative to the repository; in CI keep it with actions/cache or `cache:`).
Every entry is sealed with this run's cache key and read only when its seal checks out
(cache_trust.py): a branch or its verify cannot plant an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reviewgate.cache_trust import ReviewCache, open_cache
from reviewgate.config import CONFIG_FILE, Config, TableReader
from reviewgate.context import ReviewRequest
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.outcome_cache import reviewed_or_reused
from reviewgate.own_directories import cache_directory
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome
from reviewgate.reviewers.builtin import BuiltinReviewer

if TYPE_CHECKING:  # the store is opened for a model reviewer only: a builtin-only run never loads it
    from reviewgate.chunk_store import ChunkStore

_UNSAFE_NAME = LazyPattern(r"[^A-Za-z0-9_.\-]")


def open_review_cache(config: Config, repo: Path, environ: Mapping[str, str]) -> ReviewCache:
    """The cache `[cache]` (or --cache-dir) names, with this run's key; `enabled = false` turns
    it off. Called before the verify runs: the key is read while only the gate has run."""
    reader = TableReader(config.source or CONFIG_FILE, "cache.", config.sections.get("cache", {}))
    reader.warn_unknown(("dir", "enabled"))
    return open_cache(cache_directory(config, repo), repo, environ)


class IncrementalReviewer(Protocol):
    """A reviewer that reuses stored chunk answers (the model engine)."""

    name: str

    def review(self, request: ReviewRequest, store: ChunkStore | None = None) -> ReviewerOutcome: ...


class _WithStore:
    """The reviewer with its chunk store attached, for the runner that calls `review(request)`."""

    def __init__(self, reviewer: IncrementalReviewer, store: ChunkStore) -> None:
        self.name = reviewer.name
        self.reviewer, self.store = reviewer, store

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        return self.reviewer.review(request, self.store)


def store_for(cache: ReviewCache, reviewer_name: str) -> ChunkStore | None:
    if cache.directory is None:
        return None
    from reviewgate.chunk_store import ChunkStore

    return ChunkStore(cache.directory / _UNSAFE_NAME.sub("_", reviewer_name), cache)


def review_with_cache(
    cache: ReviewCache,
    reviewer: Reviewer,
    request: ReviewRequest,
    run: Callable[[Reviewer, ReviewRequest], ReviewerOutcome],
) -> ReviewerOutcome:
    """`run(reviewer, request)`, with the reviewer's chunk store when it keeps one (model reviewers,
    those with `cache_identity()`); the builtin reviewer's whole outcome is reused for the same
    change (outcome_cache.py), any other's is reviewed again."""
    if getattr(reviewer, "cache_identity", None) is None:
        if isinstance(reviewer, BuiltinReviewer):
            return reviewed_or_reused(cache, reviewer, request, run)
        return run(reviewer, request)
    store = store_for(cache, reviewer.name)
    if store is None:
        return run(reviewer, request)
    incremental: IncrementalReviewer = reviewer  # type: ignore[assignment]
    return run(_WithStore(incremental, store), request)
