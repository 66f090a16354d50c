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

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from reviewgate.cache_trust import ReviewCache, open_cache
from reviewgate.config import CONFIG_FILE, Config, TableReader
from reviewgate.context import ReviewRequest
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.own_directories import cache_directory
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, Usage

# Bump when the stored layout or an entry's meaning changes: older entries then simply miss.
# 5: an entry is one block of a hunk, its answer its part of a request that asked several.
CACHE_FORMAT = 5
MAX_PLACES_PER_PATH = 2000  # where findings stood, per file: the newest are kept
_UNSAFE_NAME = LazyPattern(r"[^A-Za-z0-9_.\-]")


def open_review_cache(config: Config, repo: Path, environ: Mapping[str, str]) -> ReviewCache:
    """The cache `[cache]` (or --cache-dir) names, with this run's key; `enabled = false` turns
    it off. Called before the verify runs: the key is read while only the gate has run."""
    reader = TableReader(config.source or CONFIG_FILE, "cache.", config.sections.get("cache", {}))
    reader.warn_unknown(("dir", "enabled"))
    return open_cache(cache_directory(config, repo), repo, environ)


def cache_key(material: dict[str, Any]) -> str:
    text = json.dumps(material, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def now_text() -> str:
    """The time in UTC, to the microsecond: two runs in one second are still two rounds."""
    return datetime.now(timezone.utc).isoformat()


@dataclass(frozen=True)
class StoredAnswer:
    """A chunk's answer as the model gave it (read through the contract again on use) and its cost."""

    text: str
    requests: int
    input_tokens: int
    output_tokens: int
    stored_at: str
    # Where the chunk's hunks stood when it was answered (path -> (first, last) new-file lines):
    # the key leaves line numbers out, and the answer's lines are rebased from these.
    spans: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Place:
    """Where a reported finding stood in one run: what a REVIEW-REJECTED line points at."""

    line: int | None
    end_line: int | None
    rule: str
    code: str
    seen_at: str
    finding_id: str = ""


class ChunkStore:
    """One reviewer's stored chunk answers and finding places, in `cache`'s directory."""

    def __init__(self, directory: Path, cache: ReviewCache) -> None:
        self.directory = directory
        self.cache = cache

    def _read(self, kind: str, path: Path) -> Any:
        """The JSON an entry holds, or None when absent or not sealed by this gate's key."""
        data = self.cache.read(kind, path)
        return None if data is None else json.loads(data.decode("utf-8"))

    def _chunk_path(self, key: str) -> Path:
        return self.directory / "chunks" / f"{key}.json"

    def _places_path(self, path: str) -> Path:
        return self.directory / "places" / f"{text_digest(path)[:32]}.json"

    def load(self, key: str) -> StoredAnswer | None:
        """The stored answer, or None when absent, unreadable or unproven (a damaged or planted
        entry is just a miss, and this run's answer overwrites it)."""
        try:
            stored = self._read("chunk", self._chunk_path(key))
            if stored is None or stored.get("format") != CACHE_FORMAT or not isinstance(stored["answer"], str):
                return None
            usage = stored["usage"]
            spans = {str(path): tuple((int(first), int(last)) for first, last in hunks)
                     for path, hunks in (stored.get("spans") or {}).items()}
            return StoredAnswer(stored["answer"], int(usage["requests"]), int(usage["input_tokens"]),
                                int(usage["output_tokens"]), str(stored.get("stored_at", "")), spans)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, key: str, material: dict[str, Any], answer: str, usage: Usage,
             spans: Mapping[str, tuple[tuple[int, int], ...]] | None = None) -> str | None:
        """Store an answer that passed the contract, with what it cost (what reusing it saves) and
        where the hunks it answered stood; a note saying why not when the disk refuses."""
        document = {
            "format": CACHE_FORMAT,
            "stored_at": now_text(),
            "key": material,
            "usage": {"requests": usage.requests, "input_tokens": usage.input_tokens,
                      "output_tokens": usage.output_tokens},
            "spans": {path: [list(hunk) for hunk in hunks] for path, hunks in (spans or {}).items()},
            "answer": answer,
        }
        path = self._chunk_path(key)
        try:
            self.cache.write("chunk", path, (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError as error:
            return f"could not store a chunk's review in the cache ({path.parent}): {error.strerror or error}"
        return None

    def places(self, path: str) -> list[Place]:
        try:
            stored = self._read("places", self._places_path(path))
            if stored is None or stored.get("format") != CACHE_FORMAT or stored.get("path") != path:
                return []
            return [Place(item["line"], item["end_line"], str(item["rule"]), str(item["code"]), str(item["seen_at"]),
                          str(item.get("id") or "")) for item in stored["places"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return []

    def record_places(self, path: str, places: Iterable[Place]) -> str | None:
        """Add this run's places for `path` (newest last, the oldest dropped past the cap)."""
        new = list(places)
        if not new:
            return None
        known = [place for place in self.places(path) if place not in new]
        kept = [*known, *new][-MAX_PLACES_PER_PATH:]
        document = {"format": CACHE_FORMAT, "path": path,
                    "places": [{"line": place.line, "end_line": place.end_line, "rule": place.rule,
                                "code": place.code, "seen_at": place.seen_at, "id": place.finding_id}
                               for place in kept]}
        target = self._places_path(path)
        try:
            self.cache.write("places", target, (json.dumps(document, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError as error:
            return f"could not store where findings stood in the cache ({target.parent}): {error.strerror or error}"
        return None


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
    return ChunkStore(cache.directory / _UNSAFE_NAME.sub("_", reviewer_name), cache)


def review_with_cache(
    cache: ReviewCache,
    reviewer: Reviewer,
    request: ReviewRequest,
    run: Callable[[Reviewer, ReviewRequest], ReviewerOutcome],
) -> ReviewerOutcome:
    """`run(reviewer, request)`, with the reviewer's chunk store when it keeps one: only model
    reviewers (those with `cache_identity()`) are cached, the builtin lenses cost nothing to rerun."""
    store = store_for(cache, reviewer.name)
    if store is None or getattr(reviewer, "cache_identity", None) is None:
        return run(reviewer, request)
    incremental: IncrementalReviewer = reviewer  # type: ignore[assignment]
    return run(_WithStore(incremental, store), request)
