"""When a request's stable prefix (tools, schema, system message) is worth the provider's prompt
cache: the documented minimum a model caches, and the note when the prefix is below it.

Anthropic caches nothing below a per-model minimum ("Prompt caching", cache limitations: the
request is then processed and billed whole), and a marked prefix above it pays a cache write
(1.25 × the input price, 2 × with the 1-hour TTL) that only a later request reading it earns
back. OpenAI caches by itself from 1,024 tokens, writes cost nothing extra ("Prompt caching"
guide).

The push cadence: a run's only request is marked when the same prefix was sent within the
cache's lifetime, by the time the gate recorded in its own store (chunk_store.py) when it last
sent it: the provider may still hold it (a read), and a push that follows another closely is
likely followed by a third (the write is read). Older or unknown: not marked, so pushes further
apart cost what they cost without the cache.
"""

from __future__ import annotations

import re
from datetime import datetime

from reviewgate.reviewers.model.rendering import estimate_tokens

# Anthropic's minimum cacheable prompt length, by model name as the Messages API takes it
# (aliases, and the same name with a `-YYYYMMDD` snapshot date, `-0` or `-latest`).
ANTHROPIC_MINIMUM_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-opus-5", 512),
    ("claude-sonnet-5", 1024),
    ("claude-opus-4-8", 1024),
    ("claude-opus-4-7", 2048),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-1", 1024),
    ("claude-opus-4", 1024),
    ("claude-sonnet-4-6", 1024),
    ("claude-sonnet-4-5", 1024),
    ("claude-sonnet-4", 1024),
    ("claude-3-7-sonnet", 1024),
    ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
OPENAI_MINIMUM_TOKENS = 1024
# How long Anthropic keeps a marked prefix after its last use, by `cache_ttl` ("Prompt caching":
# 5 minutes, refreshed at no cost each time it is read, or an hour).
CACHE_TTL_SECONDS = {"5m": 300, "1h": 3600}
# The recorded time is when the previous run began sending, the decision is taken before this
# run sends: room for the seconds in between and for two CI runners' clocks disagreeing.
CADENCE_MARGIN_SECONDS = 30
_SNAPSHOT = r"(?:-0)?(?:-\d{8}|-latest)?"


def anthropic_minimum(model: str | None) -> int | None:
    """The model's documented minimum, or None for a model the table does not name (then the
    breakpoint is sent as the run asks: the API caches what it can)."""
    for name, tokens in ANTHROPIC_MINIMUM_TOKENS:
        if model and re.fullmatch(re.escape(name) + _SNAPSHOT, model):
            return tokens
    return None


def prefix_tokens(*parts: str) -> int:
    """The stable prefix's size, estimated as the budget estimates (four characters a token)."""
    return estimate_tokens("".join(parts))


def below_minimum_note(model: str | None, tokens: int, minimum: int, breakpoint_dropped: bool) -> str:
    return (f"the prompt's stable prefix (tools, schema and system message, about {tokens:,} tokens) is below "
            f"the {minimum:,} tokens {model} caches at the least, so every request pays it whole"
            + ("; no cache breakpoint is sent, which would pay a cache write that caches nothing"
               if breakpoint_dropped else ""))


def still_cached(sent_at: datetime | None, now: datetime, cache_ttl: str) -> bool:
    """Whether a prefix last sent at `sent_at` (None: never, as far as the store knows) is likely
    still in the provider's cache at `now`. A time ahead of `now` by more than the margin is a
    clock that cannot be trusted: not cached."""
    if sent_at is None:
        return False
    elapsed = (now - sent_at).total_seconds()
    return -CADENCE_MARGIN_SECONDS <= elapsed <= CACHE_TTL_SECONDS[cache_ttl] - CADENCE_MARGIN_SECONDS
