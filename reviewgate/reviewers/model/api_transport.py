"""A model API as a Transport: a provider gives its URL, headers, body and reply reader; the
POST, retries and request counting are the same for all (http.py).

A server that refuses the structured form (StructuredFormRejected: llama-cpp-python's HTTP 500
on `json_schema`) is asked once more with the provider's next weaker form, which is kept for the
rest of the run and said in the reviewer's notes: one failed request per run, not one per chunk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers.model.http import RetryPolicy, StructuredFormRejected, post_json
from reviewgate.reviewers.model.options import ModelOptions
from reviewgate.reviewers.model.prompt import Conversation
from reviewgate.reviewers.model.reply import Reply


@dataclass(frozen=True)
class WireFormat:
    url: str
    headers: Callable[[ModelOptions, str | None], dict[str, str]]
    body: Callable[[ReviewerSettings, ModelOptions, Conversation], dict[str, Any]]
    reply: Callable[[dict[str, Any], ModelOptions], Reply]
    # The options with the next weaker structured form, or None when there is none.
    weaker_form: Callable[[ModelOptions], ModelOptions | None] = lambda options: None
    # What a request's form means for the run's bill (its prefix below the model's cache
    # minimum), said once in the notes; None: nothing to say.
    note: Callable[[ReviewerSettings, ModelOptions, Conversation], str | None] = lambda *_: None


class ApiTransport:
    def __init__(
        self, settings: ReviewerSettings, options: ModelOptions, wire: WireFormat, key_variable: str | None
    ) -> None:
        self.settings, self.options, self.wire, self.key_variable = settings, options, wire, key_variable
        self.policy = RetryPolicy(options.retries, options.retry_base_delay, options.retry_max_delay)
        self._lock = threading.Lock()
        self._notes: list[str] = []

    def run_notes(self) -> list[str]:
        """What the run learned about the server (a structured form it refused) and its prompt
        cache."""
        with self._lock:
            return list(self._notes)

    def _post(self, options: ModelOptions, conversation: Conversation, key: str | None) -> Reply:
        note = self.wire.note(self.settings, options, conversation)
        if note is not None:
            with self._lock:
                if note not in self._notes:
                    self._notes.append(note)
        result = post_json(
            self.wire.url,
            self.wire.headers(options, key),
            self.wire.body(self.settings, options, conversation),
            timeout=self.settings.timeout,
            policy=self.policy,
            key_variable=self.key_variable,
            max_answer_bytes=options.max_answer_bytes,
            retry_timeouts=options.retry_timeouts,
        )
        reply = self.wire.reply(result.data, options)
        return replace(reply, requests=result.requests)

    def _weaken(self, refused: ModelOptions, error: StructuredFormRejected) -> ModelOptions | None:
        """The form to ask with after `refused` was refused; the first chunk to learn it says so."""
        with self._lock:
            if self.options.response_format != refused.response_format:
                return self.options  # another chunk already moved on
            weaker = self.wire.weaker_form(self.options)
            if weaker is None:
                return None
            self.options = weaker
            self._notes.append(
                f"the server refused response_format {refused.response_format} ({error}); the review asked "
                f"with {weaker.response_format} instead for the rest of the run: set response_format = "
                f"\"{weaker.response_format}\" to skip the refused request"
            )
            return weaker

    def complete(self, conversation: Conversation, key: str | None, max_output_tokens: int | None = None) -> Reply:
        options = self.options
        failed = 0
        while True:
            asked = options if max_output_tokens is None else replace(options, max_output_tokens=max_output_tokens)
            try:
                reply = self._post(asked, conversation, key)
            except StructuredFormRejected as error:
                weaker = self._weaken(options, error)
                if weaker is None:
                    raise
                failed += 1
                options = weaker
                continue
            return replace(reply, requests=reply.requests + failed)
