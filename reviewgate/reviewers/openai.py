"""The `openai` provider: the Chat Completions API over `requests`.

One provider for every server that speaks it: OpenAI, Azure OpenAI (`base_url` ending in the
deployment, `api_version` set: the key goes in the `api-key` header), OpenRouter, Ollama, vLLM,
LM Studio, llama.cpp. Structured output with `response_format: {type: json_schema}` by default
("Structured Outputs" guide); a server that rejects it is asked with llama.cpp's
`{type: json_object, schema: ...}`, then bare `json_object` (api_transport.py); or plain text.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers.model.api_transport import ApiTransport, WireFormat
from reviewgate.reviewers.model.contract import wire_schema
from reviewgate.reviewers.model.engine import ModelReviewer
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import SCHEMA_FORMS, STRUCTURED_FORMS, ModelOptions, parse_options
from reviewgate.reviewers.model.prompt import Conversation, ToolCall
from reviewgate.reviewers.model.prompt_cache import OPENAI_MINIMUM_TOKENS, below_minimum_note, prefix_tokens
from reviewgate.reviewers.model.reply import Reply
from reviewgate.reviewers.model.usage_fields import token_count

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"


def key_variable(settings: ReviewerSettings) -> str | None:
    """The variable holding the key; `api_key_env = ""` says the server needs none (Ollama)."""
    return DEFAULT_KEY_VARIABLE if settings.api_key_env is None else (settings.api_key_env or None)


def endpoint(settings: ReviewerSettings, options: ModelOptions, path: str) -> str:
    url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/") + path
    return f"{url}?api-version={options.api_version}" if options.api_version else url


def headers(options: ModelOptions, key: str | None) -> dict[str, str]:
    result = {"Content-Type": "application/json", **options.extra_headers}
    if key is not None:
        if options.api_version:  # Azure OpenAI authenticates with an `api-key` header
            result["api-key"] = key
        else:
            result["Authorization"] = f"Bearer {key}"
    return result


def request_body(
    settings: ReviewerSettings, options: ModelOptions, conversation: Conversation
) -> dict[str, Any]:
    answer = conversation.answer
    name, schema = (answer.name, dict(answer.schema)) if answer else ("record_review", wire_schema())
    form = response_format(options.response_format, name, schema)
    # The system message first and the same in every request of a form: OpenAI caches a repeated
    # prefix of 1,024 tokens or more by itself ("Prompt caching" guide) and reports it in
    # `prompt_tokens_details.cached_tokens`, priced at `cached_input_price` (reply_from). It
    # states the schema only when the form does not carry it (bare json_object, text).
    system = conversation.system_for(schema_sent=options.response_format in SCHEMA_FORMS)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    messages += [{"role": message.role, "content": message.text} for message in conversation.messages]
    messages += tool_messages(conversation)
    body: dict[str, Any] = {"model": settings.model, "messages": messages}
    if conversation.tools:
        # Chat Completions function tools; `tool_choice: "none"` once the loop's bounds are spent.
        body["tools"] = [{"type": "function", "function": {"name": tool.name, "description": tool.description,
                                                           "parameters": dict(tool.schema)}}
                         for tool in conversation.tools]
        body["tool_choice"] = "auto" if conversation.tools_open else "none"
    body[options.max_tokens_parameter] = options.max_output_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.reasoning_effort is not None:
        body["reasoning_effort"] = options.reasoning_effort
    if form is not None:
        body["response_format"] = form
    if options.prompt_cache_retention is not None:
        body["prompt_cache_retention"] = options.prompt_cache_retention
    return body


def prefix_note(settings: ReviewerSettings, options: ModelOptions, conversation: Conversation) -> str | None:
    """Said once in the reviewer's notes: on OpenAI's own API, the stable prefix (schema, tools,
    system message) is below the 1,024 tokens its prompt cache starts at. Other servers cache by
    their own rules, if at all."""
    if (settings.base_url or DEFAULT_BASE_URL).rstrip("/") != DEFAULT_BASE_URL:
        return None
    body = request_body(settings, options, conversation)
    tokens = prefix_tokens(json.dumps(body.get("response_format") or {}), json.dumps(body.get("tools") or []),
                           body["messages"][0]["content"])
    if tokens >= OPENAI_MINIMUM_TOKENS:
        return None
    return below_minimum_note(settings.model, tokens, OPENAI_MINIMUM_TOKENS, breakpoint_dropped=False)


def tool_messages(conversation: Conversation) -> list[dict[str, Any]]:
    """The tool loop's rounds: the assistant message with its `tool_calls` (arguments as a JSON
    string), then one `tool` message per call, by `tool_call_id`."""
    messages: list[dict[str, Any]] = []
    for turn in conversation.turns:
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))}}
            for call in turn.calls]})
        messages += [{"role": "tool", "tool_call_id": call.id, "content": result}
                     for call, result in zip(turn.calls, turn.results, strict=True)]
    return messages


def tool_calls_of(message: dict[str, Any]) -> tuple[ToolCall, ...]:
    """The message's function calls; arguments that are not a JSON object are read as none (the
    tool then says what it is missing)."""
    calls = message.get("tool_calls")
    found: list[ToolCall] = []
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = {}
        found.append(ToolCall(str(call.get("id") or f"call_{index}"), str(function.get("name")),
                              arguments if isinstance(arguments, dict) else {}))
    return tuple(found)


def response_format(form: str, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` value of one structured form (options.STRUCTURED_FORMS); None for text."""
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
    if form == "json_object_with_schema":
        return {"type": "json_object", "schema": schema}
    if form == "json_object":
        return {"type": "json_object"}
    return None


def next_form(options: ModelOptions) -> ModelOptions | None:
    """The options with the next weaker structured form, when the server rejected this one."""
    if options.response_format not in STRUCTURED_FORMS[:-1]:
        return None
    return replace(options, response_format=STRUCTURED_FORMS[STRUCTURED_FORMS.index(options.response_format) + 1])


def reply_from(data: dict[str, Any], options: ModelOptions) -> Reply:
    """The answer's text and token counts; a refusal or a missing message blocks. `prompt_tokens`
    includes the cached ones (`prompt_tokens_details.cached_tokens`), priced apart."""
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    if not isinstance(message, dict):
        raise TransportBlocked("the answer holds no message (choices[0].message missing)")
    if message.get("refusal"):
        raise TransportBlocked(f"the model refused to review: {str(message['refusal'])[:300]}")
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    content = message.get("content")
    return Reply(
        text=content if isinstance(content, str) else "",
        input_tokens=token_count(usage, "prompt_tokens"),
        output_tokens=token_count(usage, "completion_tokens"),
        cache_read_tokens=token_count(details, "cached_tokens"),
        cut_at=options.max_output_tokens if choice.get("finish_reason") == "length" else None,
        tool_calls=tool_calls_of(message),
    )


def build(settings: ReviewerSettings) -> ModelReviewer:
    options = parse_options(settings)
    wire = WireFormat(endpoint(settings, options, "/chat/completions"), headers, request_body, reply_from, next_form,
                      prefix_note)
    variable = key_variable(settings)
    return ModelReviewer(settings, options, ApiTransport(settings, options, wire, variable), variable)
