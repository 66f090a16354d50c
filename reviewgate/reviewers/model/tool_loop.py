"""The tool loop of the API providers: the model is offered the read-only tools (tools.py) beside
the review's one request, and each round of calls it makes is answered and sent back, until it
answers with the review or a bound is reached: `tool_turns` rounds, `tool_bytes` characters
returned, `tool_seconds` seconds. Then the answer is asked for with the tools closed (OpenAI
`tool_choice: "none"`, Anthropic the answer's tool forced). Every call is recorded (ReadTools.calls).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from reviewgate.reviewers.model.options import ModelOptions
from reviewgate.reviewers.model.prompt import Conversation, ToolTurn
from reviewgate.reviewers.model.tools import SPECS, ReadTools

if TYPE_CHECKING:  # the engine imports this module
    from reviewgate.reviewers.model.reply import Reply, Transport


@dataclass(frozen=True)
class ToolBounds:
    turns: int
    characters: int
    seconds: float

    @classmethod
    def of(cls, options: ModelOptions) -> ToolBounds:
        return cls(options.tool_turns, options.tool_bytes, options.tool_seconds)


class ToolingTransport:
    """A Transport whose every request offers the tools and answers the calls the model makes."""

    def __init__(self, inner: Transport, tools: ReadTools, bounds: ToolBounds) -> None:
        self.inner, self.tools, self.bounds = inner, tools, bounds

    def run_notes(self) -> list[str]:
        return self.inner.run_notes()

    def complete(self, conversation: Conversation, key: str | None, max_output_tokens: int | None = None) -> Reply:
        started = time.monotonic()
        asked = replace(conversation, tools=SPECS, turns=(), tools_open=True)
        replies: list[Reply] = []
        while True:
            spent = (len(asked.turns) >= self.bounds.turns or self.tools.bytes_returned >= self.bounds.characters
                     or time.monotonic() - started >= self.bounds.seconds)
            asked = replace(asked, tools_open=not spent)
            reply = self.inner.complete(asked, key, max_output_tokens)
            replies.append(reply)
            if spent or not reply.tool_calls:
                break
            results = tuple(self.tools.run(call) for call in reply.tool_calls)
            asked = replace(asked, turns=(*asked.turns, ToolTurn(reply.tool_calls, results)))
        last = replies[-1]
        return replace(
            last,
            input_tokens=sum(reply.input_tokens for reply in replies),
            output_tokens=sum(reply.output_tokens for reply in replies),
            requests=sum(reply.requests for reply in replies),
            cache_read_tokens=sum(reply.cache_read_tokens for reply in replies),
            cache_write_tokens=sum(reply.cache_write_tokens for reply in replies),
            tool_calls=(),
        )
