"""What a model reviewer asks through (a Transport: an HTTP API, an agent's command line) and
what comes back (a Reply: the answer and what it cost)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reviewgate.reviewers.model.prompt import Conversation, ToolCall


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int = 0  # every input token, cached ones included
    output_tokens: int = 0
    requests: int = 1
    cache_read_tokens: int = 0  # of input_tokens: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens: written to it (Anthropic prices these higher)
    cut_at: int | None = None  # the answer stopped at this token limit (finish_reason "length")
    tool_calls: tuple[ToolCall, ...] = ()  # the model asked for these instead of answering (tool_loop.py)


class Transport(Protocol):
    def complete(self, conversation: Conversation, key: str | None, max_output_tokens: int | None = None) -> Reply:
        """One answer; `max_output_tokens` overrides the configured cap (a retry after a cut)."""
        ...

    def run_notes(self) -> list[str]:
        """What the run learned about the server, for the reviewer's notes."""
        ...
