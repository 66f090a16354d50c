"""One deadline for all the requests of one chunk (or one second look): the first request, its
retries, the repair request and a retry at a larger token cap together, so retries cannot
stack up past `chunk_timeout`. Each chunk runs in its own worker thread, which holds its deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_state = threading.local()


class DeadlinePassed(Exception):
    """The chunk's time is up; the message says so."""


@contextmanager
def chunk_deadline(seconds: float) -> Iterator[None]:
    """Requests made in this thread inside the block end by `seconds` from now."""
    previous = getattr(_state, "until", None)
    _state.until, _state.seconds = time.monotonic() + seconds, seconds
    try:
        yield
    finally:
        _state.until = previous


def remaining() -> float | None:
    """Seconds left of this thread's chunk deadline; None outside one."""
    until = getattr(_state, "until", None)
    return None if until is None else until - time.monotonic()


def bounded(timeout: float) -> float:
    """One attempt's timeout: `timeout`, or less when the chunk's deadline is nearer; raises
    DeadlinePassed when it has passed."""
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise DeadlinePassed(passed_text())
    return min(timeout, left)


def passed_text() -> str:
    return f"the chunk's time of {getattr(_state, 'seconds', 0.0):g}s (chunk_timeout) is used up, retries included"
