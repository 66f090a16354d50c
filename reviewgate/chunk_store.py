"""A model reviewer's stored chunk answers and where its findings stood (review_cache.py says
what a chunk's key holds and when an answer is reused): one JSON file per chunk under
`<dir>/<reviewer>/chunks/<key>.json`, `<dir>/<reviewer>/places/` per file, and
`<dir>/<reviewer>/prefix-sent.json`: when the reviewer last sent its requests' stable prefix (the
push cadence, prompt_cache.py). Only a model reviewer opens a store, so a builtin-only run does
not import this module."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reviewgate.cache_keys import now_text, text_digest
from reviewgate.cache_trust import ReviewCache
from reviewgate.reviewers.base import Usage

# Bump when the stored layout or an entry's meaning changes: older entries then simply miss.
# 5: an entry is one block of a hunk, its answer its part of a request that asked several.
CACHE_FORMAT = 5
MAX_PLACES_PER_PATH = 2000  # where findings stood, per file: the newest are kept
PREFIX_SENT_FILE = "prefix-sent.json"


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

    def prefix_sent_at(self, prefix: str) -> datetime | None:
        """When this gate last recorded sending the stable prefix whose digest is `prefix`; None
        when it recorded another prefix, nothing, or an entry it cannot prove it wrote."""
        try:
            stored = self._read("prefix sent", self.directory / PREFIX_SENT_FILE)
            if stored is None or stored.get("format") != CACHE_FORMAT or stored.get("prefix") != prefix:
                return None
            sent_at = datetime.fromisoformat(str(stored["sent_at"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return sent_at if sent_at.tzinfo is not None else None

    def record_prefix_sent(self, prefix: str, sent_at: datetime) -> str | None:
        """Record that a request starting with the prefix `prefix` was sent at `sent_at` (the
        gate's clock, in UTC); a note saying why not when the disk refuses."""
        document = {"format": CACHE_FORMAT, "prefix": prefix, "sent_at": sent_at.isoformat()}
        target = self.directory / PREFIX_SENT_FILE
        try:
            self.cache.write("prefix sent", target, (json.dumps(document) + "\n").encode("utf-8"))
        except OSError as error:
            return f"could not record when the prompt's prefix was sent ({target.parent}): {error.strerror or error}"
        return None
