"""One structured question to a model: the request, one repair request when the answer breaks
its contract, and what the requests cost. The review and the second look both ask this way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from reviewgate.reviewers.base import Usage
from reviewgate.reviewers.model.contract import ContractError
from reviewgate.reviewers.model.deadline import remaining
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import ModelOptions
from reviewgate.reviewers.model.prompt import Conversation

if TYPE_CHECKING:
    from reviewgate.reviewers.model.reply import Reply, Transport

Parsed = TypeVar("Parsed")
# The most a retry after a cut answer asks for: twice the cap, no more than this (a review is a
# few thousand tokens; a model that needs more is rambling, and many models stop at 32k anyway).
MAX_RETRY_OUTPUT_TOKENS = 32_768


class AskFailed(Exception):
    """No usable answer; the message is the blocked reason."""


def _cut_text(who: str, cut_at: int) -> str:
    return f"{who}'s answer was cut at the token limit ({cut_at:,} tokens)"


def ask_with_repair(
    transport: Transport,
    conversation: Conversation,
    key: str | None,
    parse: Callable[[str], Parsed],
    usage: list[Reply],
    who: str = "the reviewer",
    notes: list[str] | None = None,
) -> Parsed:
    """The parsed answer; AskFailed when the transport gave up, the answer was empty, or it broke
    the contract twice. An answer cut at the token limit is asked again once at twice the cap
    (at most MAX_RETRY_OUTPUT_TOKENS, and only within the chunk's deadline), not repaired under
    the same cap. Every reply, used or not, is appended to `usage` (it was paid for)."""
    try:
        reply = transport.complete(conversation, key)
        usage.append(reply)
        if not reply.text.strip():
            if reply.cut_at is not None:
                raise AskFailed(_cut_text(who, reply.cut_at) + " before it wrote anything; raise max_output_tokens")
            raise AskFailed(f"{who} returned an empty answer")
        try:
            return parse(reply.text)
        except ContractError as error:
            if reply.cut_at is not None:
                return _ask_larger(transport, conversation, key, parse, usage, who, reply.cut_at, notes)
            repaired = transport.complete(conversation.with_repair(reply.text, str(error)), key)
            usage.append(repaired)
            try:
                return parse(repaired.text)
            except ContractError as second:
                if repaired.cut_at is not None:
                    raise AskFailed(_cut_text(who, repaired.cut_at) + " in the repair request; raise "
                                    "max_output_tokens") from None
                raise AskFailed(f"{who}'s answer is invalid after one repair request: {second}") from None
    except TransportBlocked as error:
        raise AskFailed(str(error)) from None


def _ask_larger(
    transport: Transport, conversation: Conversation, key: str | None, parse: Callable[[str], Parsed],
    usage: list[Reply], who: str, cut_at: int, notes: list[str] | None,
) -> Parsed:
    larger = min(2 * cut_at, MAX_RETRY_OUTPUT_TOKENS)
    left = remaining()
    if larger <= cut_at or (left is not None and left <= 0):
        raise AskFailed(_cut_text(who, cut_at) + "; raise max_output_tokens")
    if notes is not None:
        notes.append(_cut_text(who, cut_at) + f"; asked again with a cap of {larger:,} tokens")
    reply = transport.complete(conversation, key, larger)
    usage.append(reply)
    try:
        return parse(reply.text)
    except ContractError as error:
        if reply.cut_at is not None:
            raise AskFailed(_cut_text(who, reply.cut_at) + " twice; raise max_output_tokens") from None
        raise AskFailed(f"{who}'s answer asked at a cap of {larger:,} tokens is invalid: {error}") from None


def usage_of(replies: Iterable[Reply], options: ModelOptions) -> Usage:
    """Requests and tokens, and the cost when the options give prices (per million tokens):
    input read from or written to the provider's prompt cache at its own price."""
    replies = list(replies)
    input_tokens = sum(reply.input_tokens for reply in replies)
    output_tokens = sum(reply.output_tokens for reply in replies)
    read = sum(reply.cache_read_tokens for reply in replies)
    written = sum(reply.cache_write_tokens for reply in replies)
    cost = None
    if options.input_price is not None or options.output_price is not None:
        input_price = options.input_price or 0.0
        read_price = input_price if options.cached_input_price is None else options.cached_input_price
        write_price = input_price if options.cache_write_price is None else options.cache_write_price
        uncached = max(0, input_tokens - read - written)
        cost = (input_price * uncached + read_price * read + write_price * written
                + (options.output_price or 0.0) * output_tokens) / 1e6
    return Usage(sum(reply.requests for reply in replies), input_tokens, output_tokens, cost,
                 cached_input_tokens=read, cache_write_tokens=written)
