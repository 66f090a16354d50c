"""A model API as a Transport: a provider gives its URL, headers, body and reply reader; the
POST, retries and request counting are the same for all (http.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers.model.engine import Reply
from reviewgate.reviewers.model.http import RetryPolicy, post_json
from reviewgate.reviewers.model.options import ModelOptions
from reviewgate.reviewers.model.prompt import Conversation


@dataclass(frozen=True)
class WireFormat:
    url: str
    headers: Callable[[ModelOptions, str | None], dict[str, str]]
    body: Callable[[ReviewerSettings, ModelOptions, Conversation], dict[str, Any]]
    reply: Callable[[dict[str, Any]], Reply]


class ApiTransport:
    def __init__(
        self, settings: ReviewerSettings, options: ModelOptions, wire: WireFormat, key_variable: str | None
    ) -> None:
        self.settings, self.options, self.wire, self.key_variable = settings, options, wire, key_variable
        self.policy = RetryPolicy(options.retries, options.retry_base_delay, options.retry_max_delay)

    def complete(self, conversation: Conversation, key: str | None) -> Reply:
        result = post_json(
            self.wire.url,
            self.wire.headers(self.options, key),
            self.wire.body(self.settings, self.options, conversation),
            timeout=self.settings.timeout,
            policy=self.policy,
            key_variable=self.key_variable,
            max_answer_bytes=self.options.max_answer_bytes,
        )
        reply = self.wire.reply(result.data)
        return Reply(reply.text, reply.input_tokens, reply.output_tokens, result.requests)
