"""What the providers bill for the requests a replay recorded, in input-token equivalents: each
request's stable prefix (OpenAI: the `response_format` schema, the tools, the system message;
Anthropic: the tools, then the system block) read from or written to the provider's prompt
cache at its price, the rest at the input price.

The rules, from the providers' prompt-caching documentation:
- OpenAI caches a repeated prefix by itself from 1,024 tokens, in steps of 128; a read costs the
  model's cached-input price (0.5 × the input price here; a tenth on the `gpt-5` models), a write
  nothing extra.
- Anthropic caches only up to a `cache_control` breakpoint, and only a prefix of at least the
  model's minimum (below it the request is billed whole); a write costs 1.25 × the input price
  (2 × with the 1-hour TTL), a read 0.1 ×.

`across_pushes` says whether a prefix written on one push is still there on the next (pushes
within the cache's lifetime), or only within the push that wrote it (pushes further apart). The
requests are billed as sent: the gate's Anthropic breakpoints depend on the push cadence (a run's
only request is marked when the previous push is recent), so each case bills the requests the
gate sent in that case (pr_replay.py runs it both ways, for each lifetime). A request is billed
at one lifetime's write price, so a breakpoint asking for another is an error, not a guess.
Tokens are characters / 4, as the replay counts them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reviewgate.reviewers.model.prompt_cache import OPENAI_MINIMUM_TOKENS, anthropic_minimum  # noqa: E402
from reviewgate.reviewers.model.rendering import CHARACTERS_PER_TOKEN  # noqa: E402

OPENAI_STEP_TOKENS = 128
ANTHROPIC_MODEL = "claude-sonnet-4-6"  # the replay's Anthropic model: its documented minimum applies


@dataclass(frozen=True)
class Pricing:
    name: str
    read: float  # × the input price, per token read from the cache
    write: float  # × the input price, per token written to it
    minimum_tokens: int
    needs_breakpoint: bool  # Anthropic: only a marked prefix is written or read
    step_tokens: int = 1  # OpenAI: the cached part is a multiple of this
    ttl: str | None = None  # Anthropic: the lifetime whose write price this is


OPENAI = Pricing("openai, cached input 0.5x", read=0.5, write=1.0, minimum_tokens=OPENAI_MINIMUM_TOKENS,
                 needs_breakpoint=False, step_tokens=OPENAI_STEP_TOKENS)
ANTHROPIC_5M = Pricing(f"anthropic {ANTHROPIC_MODEL}, 5-minute cache: writes 1.25x, reads 0.1x", read=0.1,
                       write=1.25, minimum_tokens=anthropic_minimum(ANTHROPIC_MODEL) or 0, needs_breakpoint=True,
                       ttl="5m")
ANTHROPIC_1H = Pricing(f"anthropic {ANTHROPIC_MODEL}, cache_ttl = \"1h\": writes 2x, reads 0.1x", read=0.1,
                       write=2.0, minimum_tokens=anthropic_minimum(ANTHROPIC_MODEL) or 0, needs_breakpoint=True,
                       ttl="1h")


@dataclass(frozen=True)
class Asked:
    """One request as the bill sees it."""

    push: int
    prefix: str  # the stable prefix as sent: equal texts are one cache entry
    prefix_tokens: float
    tokens: float  # the whole request
    marked: bool  # carries a cache breakpoint (Anthropic)
    # Anthropic's breakpoints in the messages (a tool loop's rounds): each the text up to it, and
    # its tokens, shortest first; written and read as the stable prefix is.
    later: tuple[tuple[str, float], ...] = ()
    lifetimes: frozenset[str] = frozenset()  # the `ttl` of each breakpoint sent ("5m" where none is said)


def billed(requests: Iterable[Asked], pricing: Pricing, across_pushes: bool) -> float:
    """Input-token equivalents billed, requests in the order sent."""
    written: set[tuple[int, str]] = set()
    total = 0.0
    for request in requests:
        if pricing.ttl is not None and request.lifetimes - {pricing.ttl}:
            raise ValueError(f"a request of push {request.push} carries a breakpoint with ttl "
                             f"{', '.join(sorted(request.lifetimes))}: not billed at the {pricing.ttl} write price")
        cached = request.prefix_tokens // pricing.step_tokens * pricing.step_tokens
        if cached < pricing.minimum_tokens or (pricing.needs_breakpoint and not request.marked):
            total += request.tokens
            continue
        push = 0 if across_pushes else request.push
        # The longest breakpoint already written is read, the rest up to the last one written.
        points = [(request.prefix, cached), *((text, tokens) for text, tokens in request.later
                                              if tokens >= pricing.minimum_tokens)]
        read = max((tokens for text, tokens in points if (push, text) in written), default=0.0)
        written.update((push, text) for text, _ in points)
        longest = points[-1][1]
        total += request.tokens - longest + pricing.read * read + pricing.write * (longest - read)
    return total


def _tokens(text: str) -> float:
    return len(text) / CHARACTERS_PER_TOKEN


def openai_asked(push: int, body: dict[str, Any]) -> Asked:
    messages = body.get("messages") or [{}]
    prefix = json.dumps([body.get("response_format"), body.get("tools"), messages[0].get("content")],
                        ensure_ascii=False)
    return Asked(push, prefix, _tokens(prefix), _tokens(json.dumps(body, ensure_ascii=False)), marked=False)


def anthropic_asked(push: int, body: dict[str, Any]) -> Asked:
    system = body.get("system") or []
    prefix = json.dumps([body.get("tools"), [block.get("text") for block in system]], ensure_ascii=False)
    marked = any("cache_control" in block for block in system)
    return Asked(push, prefix, _tokens(prefix), _tokens(json.dumps(body, ensure_ascii=False)), marked,
                 message_breakpoints(body, prefix), breakpoint_lifetimes(body))


def breakpoint_lifetimes(body: dict[str, Any]) -> frozenset[str]:
    """The lifetimes a request's breakpoints ask for, wherever they sit (the API's default is 5 minutes)."""
    blocks = [*(body.get("system") or []), *(block for message in body.get("messages") or []
                                              if isinstance(message.get("content"), list)
                                              for block in message["content"])]
    return frozenset(str(block["cache_control"].get("ttl", "5m")) for block in blocks
                     if isinstance(block, dict) and isinstance(block.get("cache_control"), dict))


def message_breakpoints(body: dict[str, Any], prefix: str) -> tuple[tuple[str, float], ...]:
    """Each breakpoint in the messages: the prefix and the messages up to its block, without the
    `cache_control` fields (a later round re-sends the same blocks with or without one)."""
    points: list[tuple[str, float]] = []
    sent: list[Any] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            sent.append({key: value for key, value in block.items() if key != "cache_control"}
                        if isinstance(block, dict) else block)
            if isinstance(block, dict) and "cache_control" in block:
                text = prefix + json.dumps(sent, ensure_ascii=False)
                points.append((text, _tokens(text)))
    return tuple(points)
