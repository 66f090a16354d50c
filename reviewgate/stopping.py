"""A process-wide stop request: the gate was cancelled (SIGTERM/SIGINT) while reviewers run.

The signal handler only records the signal (verify/cancellation.py); the main thread then calls
`request_stop`. Work in other threads that can block for long (a model request, an agent CLI)
registers an abort with `on_stop` while it waits, so the stop reaches it at once: the abort
kills the agent's process group or shuts the request's socket, and the work ends as a blocked
outcome whose reason is the stop's. Temporary directories are registered with `tracked`, so the
main thread can remove what a thread that did not unwind in time left behind.
"""

from __future__ import annotations

import itertools
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_lock = threading.Lock()
_stopped = threading.Event()
_reason = ""
_aborts: dict[int, Callable[[], None]] = {}
_directories: dict[int, tuple[Path, Callable[[Path], None]]] = {}
_ids = itertools.count()


def reset() -> None:
    """A new run starts unstopped (tests run several gates in one process)."""
    global _reason
    with _lock:
        _stopped.clear()
        _reason = ""
        _aborts.clear()
        _directories.clear()


def stop_reason() -> str | None:
    """Why the gate stops (e.g. "cancelled by SIGTERM"), or None while it goes on."""
    return _reason if _stopped.is_set() else None


def request_stop(reason: str) -> None:
    """Stop every registered wait now; the first reason given is the one reported."""
    global _reason
    with _lock:
        if not _stopped.is_set():
            _reason = reason
            _stopped.set()
        aborts = list(_aborts.values())
    for abort in aborts:
        try:
            abort()
        except Exception:  # noqa: BLE001 - one failed abort must not keep the others from running
            pass


@contextmanager
def on_stop(abort: Callable[[], None]) -> Iterator[None]:
    """Call `abort` (from the stopping thread) if a stop is requested while inside; at once
    when one was requested before."""
    with _lock:
        key = next(_ids)
        _aborts[key] = abort
        already = _stopped.is_set()
    try:
        if already:
            abort()
        yield
    finally:
        with _lock:
            _aborts.pop(key, None)


def _remove_tree(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def tracked(directory: Path, remove: Callable[[Path], None] = _remove_tree) -> Iterator[Path]:
    """A temporary directory its owner removes; `remove_leftovers` removes it with `remove` when
    the owner could not (its thread was abandoned at a stop)."""
    with _lock:
        key = next(_ids)
        _directories[key] = (directory, remove)
    try:
        yield directory
    finally:
        with _lock:
            _directories.pop(key, None)


def remove_leftovers() -> None:
    with _lock:
        directories = list(_directories.values())
    for directory, remove in directories:
        remove(directory)


def pause(seconds: float) -> None:
    """Sleep, cut short by a stop request (a retry's backoff must not outlast a cancellation)."""
    _stopped.wait(max(0.0, seconds))
