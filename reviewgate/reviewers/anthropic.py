"""The `anthropic` provider: the Messages API over `requests`.

Structured output by forcing one tool, `record_review`, whose `input_schema` is the review
contract (the second look forces `record_verification` the same way) (Anthropic docs, "Tool use": `tool_choice: {"type": "tool", "name": ...}`); the tool
input is the review. Headers and version per the API reference (`x-api-key`,
`anthropic-version`). The tools and the system block come first and are the same bytes in every
request; the system block carries the cache breakpoint (`cache_control: {"type": "ephemeral"}`,
with `cache_ttl = "1h"` `"ttl": "1h"`) only where it pays: when other requests of the run read it
(several requests, three at least under the hour, or, under the 5-minute lifetime, the tool loop's next request after a round
whose answers point the model at another call), when the gate's store says the reviewer sent the same prefix within the
cache's lifetime (the push cadence, prompt_cache.py: 5 minutes or an hour; a push soon after
another reads it, or writes it for the next); never when the prefix is below the model's
documented minimum, where the write would cache nothing.
"""

from __future__ import annotations

import json
from typing import Any

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers.model.api_transport import ApiTransport, WireFormat
from reviewgate.reviewers.model.contract import wire_schema
from reviewgate.reviewers.model.engine import ModelReviewer
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import (
    CACHE_READ_SHARE,
    CACHE_WRITE_SHARE,
    ONE_HOUR_WRITE_SHARE,
    ModelOptions,
    parse_options,
)
from reviewgate.reviewers.model.prompt import Conversation, ToolCall
from reviewgate.reviewers.model.prompt_cache import anthropic_minimum, below_minimum_note, prefix_tokens
from reviewgate.reviewers.model.reply import Reply
from reviewgate.reviewers.model.tools import asks_for_more
from reviewgate.reviewers.model.usage_fields import anthropic_counts

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_VARIABLE = "ANTHROPIC_API_KEY"
TOOL_NAME = "record_review"
TOOL_NAMES = frozenset({TOOL_NAME, "record_verification"})


def key_variable(settings: ReviewerSettings) -> str | None:
    return DEFAULT_KEY_VARIABLE if settings.api_key_env is None else (settings.api_key_env or None)


def endpoint(settings: ReviewerSettings, path: str) -> str:
    return (settings.base_url or DEFAULT_BASE_URL).rstrip("/") + path


def headers(options: ModelOptions, key: str | None) -> dict[str, str]:
    result = {
        "content-type": "application/json",
        "anthropic-version": options.anthropic_version,
        **options.extra_headers,
    }
    if key is not None:
        result["x-api-key"] = key
    return result


def tool_definitions(conversation: Conversation) -> list[dict[str, Any]]:
    """The read-only tools first, then the answer's (which carries the schema): the start of the
    cached prefix (Anthropic caches tools, then system, then messages)."""
    answer = conversation.answer
    tool, description, schema = (
        (answer.name, answer.description, dict(answer.schema))
        if answer
        else (TOOL_NAME, "Record the review: the verdict, every finding and the product questions.", wire_schema())
    )
    return [*({"name": item.name, "description": item.description, "input_schema": dict(item.schema)}
              for item in conversation.tools),
            {"name": tool, "description": description, "input_schema": schema}]


def stable_prefix_tokens(conversation: Conversation) -> int:
    return prefix_tokens(json.dumps(tool_definitions(conversation)), conversation.system_for(schema_sent=True))


def breakpoint_for(settings: ReviewerSettings, options: ModelOptions, conversation: Conversation
                   ) -> dict[str, str] | None:
    """The system block's `cache_control`, or None where it cannot pay: a prefix below the
    model's minimum caches nothing; a breakpoint on a request no later one reads is a write
    (1.25 × input, 2 × with the 1-hour TTL) that costs more than sending the prefix plainly. Other
    requests of the run (the push's other chunks, the other findings' second looks) read it at
    0.1 × (sharing_pays: under the hour, from the run's third request); so does a push that follows a recent one within the cache's lifetime (the previous
    push's write, or its own for the next push), and, under the 5 minutes, the tool loop's next
    request (rounds_written)."""
    minimum = anthropic_minimum(settings.model)
    if minimum is not None and stable_prefix_tokens(conversation) < minimum:
        return None
    if (sharing_pays(options, conversation.prefix_requests) or conversation.prefix_recent
            or rounds_written(options, conversation)):
        return cache_control(options)
    return None


def sharing_pays(options: ModelOptions, requests: int) -> bool:
    """Whether one write and the run's other requests' reads cost less than sending the prefix
    plainly to each, when no later push reads it: at 1.25 × a single read does (1.35 × against
    2 ×); the hour's 2 × needs two (2.2 × against 3 ×; with one, 2.1 × against 2 ×)."""
    write = ONE_HOUR_WRITE_SHARE if options.cache_ttl == "1h" else CACHE_WRITE_SHARE["anthropic"]
    return write + CACHE_READ_SHARE["anthropic"] * (requests - 1) < requests


def rounds_written(options: ModelOptions, conversation: Conversation) -> list[int]:
    """written_rounds under the 5-minute lifetime; none under the hour's, whose write costs 2 × input:
    a round is read once, seconds later, by the next request (2.1 × against the 2 × of sending it
    twice), and the 5-minute breakpoint it would need beside the hour's would be billed at a price
    the run's usage does not tell apart."""
    return written_rounds(conversation) if options.cache_ttl == "5m" else []


def written_rounds(conversation: Conversation) -> list[int]:
    """The tool loop's rounds (indexes of `conversation.turns`) whose answers a request of the loop
    writes to the cache, up to this one: a request writes its last round only while the tools are
    open (the answer with them closed has no next request) and that round's answers point the
    model at another call (`callers` naming uses it did not show, an answer cut short): the
    request that follows it reads the write. A model that calls again unasked pays each round
    whole, as without the cache; one that answers where it was pointed further leaves the write
    unread: that is the bet."""
    last = len(conversation.turns) - 1
    return [index for index, turn in enumerate(conversation.turns)
            if (index < last or conversation.tools_open) and any(asks_for_more(result) for result in turn.results)]


def prefix_note(settings: ReviewerSettings, options: ModelOptions, conversation: Conversation) -> str | None:
    """Said once in the reviewer's notes: the prefix is below what this model caches."""
    minimum = anthropic_minimum(settings.model)
    tokens = stable_prefix_tokens(conversation)
    if minimum is None or tokens >= minimum:
        return None
    return below_minimum_note(settings.model, tokens, minimum, breakpoint_dropped=True)


def request_body(
    settings: ReviewerSettings, options: ModelOptions, conversation: Conversation
) -> dict[str, Any]:
    tools = tool_definitions(conversation)
    system: dict[str, Any] = {"type": "text", "text": conversation.system_for(schema_sent=True)}
    marked = breakpoint_for(settings, options, conversation)
    if marked is not None:
        system["cache_control"] = marked
    body: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": options.max_output_tokens,
        # A list of one block so it can carry the cache breakpoint. The tool carries the schema,
        # so the system message does not state it again.
        "system": [system],
        "messages": [{"role": message.role, "content": message.text} for message in conversation.messages]
        + tool_messages(conversation, marked if rounds_written(options, conversation) else None),
        # While the loop is open the model must call one of the tools (`any`), the answer's tool
        # being its way to finish; then the answer is forced.
        "tools": tools,
        "tool_choice": ({"type": "any"} if conversation.tools and conversation.tools_open
                        else {"type": "tool", "name": tools[-1]["name"]}),
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    return body


def tool_messages(conversation: Conversation, marked: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The tool loop's rounds: the assistant's `tool_use` blocks, then a user message of one
    `tool_result` block per call, by `tool_use_id`. `marked` goes on the last block of the round
    this request writes (written_rounds) and of the latest an earlier request wrote: the next
    round re-sends everything up to it and reads it at 0.1 × (Anthropic caches the prefix up to a
    breakpoint; the system block's alone leaves the diff, the context and the earlier answers at
    the full price in every round)."""
    messages: list[dict[str, Any]] = []
    for turn in conversation.turns:
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
            for call in turn.calls]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": result}
            for call, result in zip(turn.calls, turn.results, strict=True)]})
    if marked is None:
        return messages
    written = written_rounds(conversation)
    last = len(conversation.turns) - 1
    # The latest write before this request is read where it was written (a read is looked up only
    # some 20 blocks back from a breakpoint, and a round of many calls adds more); this request's
    # own, when it writes: three breakpoints at most with the system block's, of the four allowed.
    earlier = [index for index in written if index < last][-1:]
    for index in earlier + [index for index in written if index == last]:
        messages[2 * index + 1]["content"][-1]["cache_control"] = marked
    return messages


def cache_control(options: ModelOptions) -> dict[str, str]:
    """The system block's cache breakpoint: 5 minutes unless `cache_ttl` says an hour (the API's
    default is left unsaid, so a server that knows no `ttl` is asked as before)."""
    if options.cache_ttl == "5m":
        return {"type": "ephemeral"}
    return {"type": "ephemeral", "ttl": options.cache_ttl}


def reply_from(data: dict[str, Any], options: ModelOptions) -> Reply:
    """The `record_review` tool input as JSON text (or the text blocks when the model wrote prose).
    `input_tokens` counts only the uncached input: the cache's reads and writes are added."""
    if data.get("stop_reason") == "refusal":
        raise TransportBlocked("the model refused to review (stop_reason: refusal)")
    content = data.get("content")
    if not isinstance(content, list):
        raise TransportBlocked("the answer holds no content list")
    counts: dict[str, Any] = {
        **anthropic_counts(data.get("usage")),
        "cut_at": options.max_output_tokens if data.get("stop_reason") == "max_tokens" else None,
    }
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        # The answer's tool (record_review, or the second look's record_verification).
        if block.get("type") == "tool_use" and block.get("name") in TOOL_NAMES:
            return Reply(json.dumps(block.get("input")), **counts)
        if block.get("type") == "tool_use":  # a read-only tool of the loop (tool_loop.py)
            arguments = block.get("input")
            calls.append(ToolCall(str(block.get("id") or f"toolu_{len(calls)}"), str(block.get("name")),
                                  arguments if isinstance(arguments, dict) else {}))
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return Reply("\n".join(texts), **counts, tool_calls=tuple(calls))


def build(settings: ReviewerSettings) -> ModelReviewer:
    options = parse_options(settings)
    wire = WireFormat(endpoint(settings, "/v1/messages"), headers, request_body, reply_from, note=prefix_note)
    variable = key_variable(settings)
    return ModelReviewer(settings, options, ApiTransport(settings, options, wire, variable), variable)
