"""One structured question to a model: the request, one repair request when the answer breaks
its contract, and what the requests cost. The review and the second look both ask this way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from reviewgate.reviewers.base import Usage
from reviewgate.reviewers.model.contract import ContractError
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import ModelOptions
from reviewgate.reviewers.model.prompt import Conversation

if TYPE_CHECKING:
    from reviewgate.reviewers.model.engine import Reply, Transport

Parsed = TypeVar("Parsed")


class AskFailed(Exception):
    """No usable answer; the message is the blocked reason."""


def ask_with_repair(
    transport: Transport,
    conversation: Conversation,
    key: str | None,
    parse: Callable[[str], Parsed],
    usage: list[Reply],
    who: str = "the reviewer",
) -> Parsed:
    """The parsed answer; AskFailed when the transport gave up, the answer was empty, or it broke
    the contract twice. Every reply, used or not, is appended to `usage` (it was paid for)."""
    try:
        reply = transport.complete(conversation, key)
        usage.append(reply)
        if not reply.text.strip():
            raise AskFailed(f"{who} returned an empty answer")
        try:
            return parse(reply.text)
        except ContractError as error:
            repaired = transport.complete(conversation.with_repair(reply.text, str(error)), key)
            usage.append(repaired)
            try:
                return parse(repaired.text)
            except ContractError as second:
                raise AskFailed(f"{who}'s answer is invalid after one repair request: {second}") from None
    except TransportBlocked as error:
        raise AskFailed(str(error)) from None


def usage_of(replies: Iterable[Reply], options: ModelOptions) -> Usage:
    """Requests and tokens, and the cost when the options give prices (per million tokens)."""
    replies = list(replies)
    input_tokens = sum(reply.input_tokens for reply in replies)
    output_tokens = sum(reply.output_tokens for reply in replies)
    cost = None
    if options.input_price is not None or options.output_price is not None:
        cost = ((options.input_price or 0.0) * input_tokens + (options.output_price or 0.0) * output_tokens) / 1e6
    return Usage(sum(reply.requests for reply in replies), input_tokens, output_tokens, cost)


def add_usage(first: Usage, second: Usage) -> Usage:
    cost = None if first.cost is None and second.cost is None else (first.cost or 0.0) + (second.cost or 0.0)
    return Usage(
        first.requests + second.requests,
        first.input_tokens + second.input_tokens,
        first.output_tokens + second.output_tokens,
        cost,
    )
