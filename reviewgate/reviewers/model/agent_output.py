"""What an agent CLI printed, read as the answer: plain text, or the JSON the CLIs print when asked.

- Claude Code `--output-format json`: one object `{"type": "result", "subtype": "success",
  "is_error": false, "result": "<the answer>", "usage": {...}}`; `is_error: true` carries the
  error text in `result` (or names it in `subtype`).
- Codex `exec --json`: JSONL events (codex-rs/exec/src/exec_events.rs); the answer is the text
  of the last `item.completed` whose item is an `agent_message`; `turn.failed` and `error`
  events carry `message`; `turn.completed` has the usage. An `error` event that a completed turn
  follows (`Reconnecting... 1/5`: Codex retrying its stream) was not the run's end.

A run that reports no model turn (Claude Code's `num_turns: 0`: a hook answered in the model's
place) or usage that is all zero is not a review: `not_reviewed` says why.

Anything else is the answer as printed. A review contract document is never mistaken for a
wrapper: it has no `type` key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reviewgate.escaping import one_line
from reviewgate.reviewers.model.usage_fields import anthropic_counts, token_count
from reviewgate.text import truncate

MAX_QUOTED = 300  # an agent's own error text: enough to explain a failure, no more


@dataclass(frozen=True)
class AgentAnswer:
    text: str
    error: str | None = None  # the CLI reported a failure in its own format
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    not_reviewed: str | None = None  # the CLI's own record shows no model answered


def quoted(text: str) -> str:
    """Untrusted agent text for a reason: masked, escaped, on one line, cut."""
    return truncate(one_line(text).strip(), MAX_QUOTED, "…")


def _claude_result(data: dict[str, Any]) -> AgentAnswer:
    result = data.get("result")
    text = result if isinstance(result, str) else ""
    tokens: dict[str, Any] = anthropic_counts(data["usage"]) if isinstance(data.get("usage"), dict) else {}
    if data.get("is_error") is True or data.get("subtype") not in (None, "success"):
        return AgentAnswer("", quoted(text or f"the run ended with {data.get('subtype')!r}"), **tokens)
    if data.get("num_turns") == 0:
        return AgentAnswer(text, not_reviewed="its result reports no model turn (num_turns 0): a hook or a "
                           "setting answered, not the model", **tokens)
    return AgentAnswer(text, not_reviewed=_zero_usage(data.get("usage")), **tokens)


def _zero_usage(usage: object) -> str | None:
    """Usage reported and every count in it zero: nothing was sent to a model."""
    if not isinstance(usage, dict):
        return None
    counts = [value for value in usage.values() if isinstance(value, int) and not isinstance(value, bool)]
    if counts and not any(counts):
        return "its usage is all zero: no model answered"
    return None


def _codex_events(lines: list[str]) -> AgentAnswer | None:
    events: list[dict[str, Any]] = []
    for line in lines:  # a line that is no event (a warning) is passed over
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            events.append(event)
    if not any(event["type"].startswith(("thread.", "turn.", "item.")) for event in events):
        return None
    message: str | None = None
    error: str | None = None
    tokens: dict[str, Any] = {}
    usage: object = None
    for event in events:
        item = event.get("item")
        if event["type"] == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message":
            message = item.get("text") if isinstance(item.get("text"), str) else message
        elif event["type"] in ("turn.failed", "error"):
            detail = event.get("error") if event["type"] == "turn.failed" else event
            text = detail.get("message") if isinstance(detail, dict) else None
            error = quoted(text if isinstance(text, str) else event["type"])
        elif event["type"] == "turn.completed":
            error = None  # an earlier `error` (a reconnect) did not stop the turn
            if isinstance(event.get("usage"), dict):
                usage = event["usage"]
                tokens = {"input_tokens": token_count(usage, "input_tokens"),
                          "output_tokens": token_count(usage, "output_tokens"),
                          "cache_read_tokens": token_count(usage, "cached_input_tokens")}
    if error is not None:
        return AgentAnswer("", error, **tokens)
    if message is None:
        return AgentAnswer("", "its JSON events hold no agent_message", **tokens)
    return AgentAnswer(message, not_reviewed=_zero_usage(usage), **tokens)


def read_agent_output(printed: str) -> AgentAnswer:
    """The answer inside what the agent printed (see the module's docstring)."""
    stripped = printed.strip()
    if not stripped.startswith("{"):
        return AgentAnswer(printed)
    try:
        data = json.loads(stripped)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("type") == "result":
        return _claude_result(data)
    events = _codex_events([line for line in stripped.splitlines() if line.strip()])
    return AgentAnswer(printed) if events is None else events
