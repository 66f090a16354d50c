"""The push cadence: whether a run's requests mark their stable prefix for the provider's cache
because the reviewer sent the same prefix within the cache's lifetime (prompt_cache.py), and the
record the next run reads. The time comes from the gate's own store, sealed with the cache key
(chunk_store.py), and the gate's clock: nothing in the tree under review sets or moves it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from reviewgate.cache_keys import text_digest
from reviewgate.config import ReviewerSettings
from reviewgate.reviewers.model.contract import wire_schema
from reviewgate.reviewers.model.options import ModelOptions
from reviewgate.reviewers.model.prompt import review_system
from reviewgate.reviewers.model.prompt_cache import still_cached
from reviewgate.reviewers.model.tools import SPECS

if TYPE_CHECKING:
    from reviewgate.chunk_store import ChunkStore


def prefix_digest(settings: ReviewerSettings, options: ModelOptions) -> str:
    """What the review requests' stable prefix is made of (the endpoint and model, the tools, the
    answer's schema, the system message), as one digest: a record of another prefix (another
    model, gate version or tool set) says nothing about whether this one is cached."""
    tools = [[spec.name, spec.description, dict(spec.schema)] for spec in SPECS] if options.tools else []
    return text_digest(json.dumps([settings.provider, settings.model, settings.base_url, tools,
                                   review_system(schema_sent=True), wire_schema()], sort_keys=True, default=str))


@dataclass(frozen=True)
class PrefixCadence:
    prefix: str
    sending_at: datetime
    recent: bool  # the prefix was sent within the cache's lifetime: the requests mark it

    @classmethod
    def read(cls, store: ChunkStore | None, settings: ReviewerSettings, options: ModelOptions) -> PrefixCadence:
        """Taken just before the run's requests are sent. Without a store (caching off) nothing
        is known: not recent."""
        prefix, now = prefix_digest(settings, options), datetime.now(timezone.utc)
        recent = store is not None and still_cached(store.prefix_sent_at(prefix), now, options.cache_ttl)
        return cls(prefix, now, recent)

    def record(self, store: ChunkStore | None, sent: bool) -> str | None:
        """After the run's requests: the time they began to be sent, when at least one was
        answered (a request that never reached the provider cached nothing); a note when the
        disk refuses."""
        if store is None or not sent:
            return None
        return store.record_prefix_sent(self.prefix, self.sending_at)
