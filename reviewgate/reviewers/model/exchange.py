"""One bounded HTTP POST: connect, headers and the whole body within one deadline, the body
read in pieces and given up past a size cap, and abandoned at once when the gate stops.

`requests`' own timeout is per socket read, so an answer that drips a byte at a time never
times out; and `response.content` holds an answer of any size in memory. Here the request runs
in a daemon thread that the caller waits on until the deadline or a stop request
(stopping.py); then the connection is shut, which ends the thread's blocked read too.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from reviewgate import stopping

READ_BLOCK_BYTES = 64 * 1024
POLL_SECONDS = 0.05  # how often the waiting caller looks at the deadline and the stop request


class ExchangeTimeout(Exception):
    """No whole answer within the deadline."""


class AnswerTooLarge(Exception):
    """The answer passed the size cap; the rest was not read."""


class ExchangeStopped(Exception):
    """The gate stopped (cancelled) while waiting; the message is the stop's reason."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    content: bytes


def _declared_length(headers: Mapping[str, str]) -> int | None:
    value = (headers.get("Content-Length") or "").strip()
    return int(value) if value.isdigit() else None


class _Exchange:
    """The request as run by its thread; the caller reads `answer` or `error` once it ends."""

    def __init__(self, url: str, headers: Mapping[str, str], body: Mapping[str, Any], timeout: float,
                 max_bytes: int) -> None:
        self.url, self.headers, self.body = url, dict(headers), dict(body)
        self.timeout, self.max_bytes = timeout, max_bytes
        self.answer: Answer | None = None
        self.error: BaseException | None = None
        self.abandoned = False
        self._response: requests.Response | None = None
        self._lock = threading.Lock()

    def run(self) -> None:
        try:
            # Each socket wait is bounded by the whole timeout too, so an abandoned thread ends.
            with requests.post(self.url, json=self.body, headers=self.headers,
                               timeout=(self.timeout, self.timeout), stream=True) as response:
                with self._lock:
                    self._response = response
                    if self.abandoned:
                        return
                declared = _declared_length(response.headers)
                if declared is not None and declared > self.max_bytes:
                    raise AnswerTooLarge(declared)
                blocks: list[bytes] = []
                size = 0
                for block in response.iter_content(READ_BLOCK_BYTES):
                    if self.abandoned:
                        return
                    size += len(block)
                    if size > self.max_bytes:
                        raise AnswerTooLarge(size)
                    blocks.append(block)
                self.answer = Answer(response.status_code, response.headers, b"".join(blocks))
        except BaseException as error:  # noqa: BLE001 - handed to the waiting caller, which decides
            self.error = error

    def abandon(self) -> None:
        """Shut the connection so a read blocked in the thread returns now."""
        with self._lock:
            self.abandoned = True
            response = self._response
        if response is None:
            return  # still connecting or waiting for headers: the socket timeout ends it
        connection = getattr(response.raw, "connection", None)
        sock = getattr(connection, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def post_bounded(url: str, headers: Mapping[str, str], body: Mapping[str, Any], *, timeout: float,
                 max_bytes: int) -> Answer:
    """The answer, read whole within `timeout` seconds and at most `max_bytes` long. Raises
    ExchangeTimeout, AnswerTooLarge, ExchangeStopped, or what `requests` raised."""
    exchange = _Exchange(url, headers, body, timeout, max_bytes)
    deadline = time.monotonic() + timeout
    thread = threading.Thread(target=exchange.run, name="reviewgate-model-request", daemon=True)
    thread.start()
    with stopping.on_stop(exchange.abandon):
        while thread.is_alive():
            reason = stopping.stop_reason()
            if reason is not None:
                exchange.abandon()
                raise ExchangeStopped(reason)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                exchange.abandon()
                raise ExchangeTimeout()
            thread.join(min(POLL_SECONDS, remaining))
    if exchange.error is not None:
        raise exchange.error
    assert exchange.answer is not None
    return exchange.answer
