"""The `openai` provider: the Chat Completions API over `requests`.

One provider for every server that speaks it: OpenAI, Azure OpenAI (`base_url` ending in the
deployment, `api_version` set: the key goes in the `api-key` header), OpenRouter, Ollama, vLLM,
LM Studio. Structured output with `response_format: {type: json_schema}` by default
("Structured Outputs" guide), `json_object` or plain text for servers without it.
"""

from __future__ import annotations

from typing import Any

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers.model.api_transport import ApiTransport, WireFormat
from reviewgate.reviewers.model.contract import wire_schema
from reviewgate.reviewers.model.engine import ModelReviewer, Reply
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import ModelOptions, parse_options
from reviewgate.reviewers.model.prompt import Conversation

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
    messages = [{"role": "system", "content": conversation.system}]
    messages += [{"role": message.role, "content": message.text} for message in conversation.messages]
    body: dict[str, Any] = {"model": settings.model, "messages": messages}
    body[options.max_tokens_parameter] = options.max_output_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.reasoning_effort is not None:
        body["reasoning_effort"] = options.reasoning_effort
    if options.response_format == "json_schema":
        answer = conversation.answer
        name, schema = (answer.name, dict(answer.schema)) if answer else ("record_review", wire_schema())
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": schema},
        }
    elif options.response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def reply_from(data: dict[str, Any]) -> Reply:
    """The answer's text and token counts; a refusal or a missing message blocks."""
    choices = data.get("choices")
    message = (
        choices[0].get("message")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    if not isinstance(message, dict):
        raise TransportBlocked("the answer holds no message (choices[0].message missing)")
    if message.get("refusal"):
        raise TransportBlocked(f"the model refused to review: {str(message['refusal'])[:300]}")
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    content = message.get("content")
    return Reply(
        text=content if isinstance(content, str) else "",
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
    )


def build(settings: ReviewerSettings) -> ModelReviewer:
    options = parse_options(settings)
    wire = WireFormat(endpoint(settings, options, "/chat/completions"), headers, request_body, reply_from)
    variable = key_variable(settings)
    return ModelReviewer(settings, options, ApiTransport(settings, options, wire, variable), variable)
