"""The names and times of the review cache's entries: a content key over what an answer depends on,
a digest of a text, and the time an entry is stored."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def cache_key(material: dict[str, Any]) -> str:
    text = json.dumps(material, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def now_text() -> str:
    """The time in UTC, to the microsecond: two runs in one second are still two rounds."""
    from datetime import datetime, timezone  # only a model reviewer stores a time: a builtin-only run never loads it

    return datetime.now(timezone.utc).isoformat()
