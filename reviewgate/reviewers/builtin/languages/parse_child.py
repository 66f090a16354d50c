"""A parse tried first in a forked child held to the parse's budget, for the steps of tree-sitter's
runtime that no progress report interrupts: a parse that kept many readings of an ambiguous text
open resolves them near the end of the file in one step, holding the GIL (Java, 56 KB of `a<b<c<`
lines: over a minute). Only a process can be stopped in such a step, so the child's own CPU timer
ends it: its signal's default action kills the child wherever it is, and the file is given up
without this process ever starting the step."""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

# The child's CPU time is its bound; on a loaded machine that CPU takes longer to come (a load of
# 10 on 2 cores: 1.6 s of it in 7 s). A child still parsing at its budget plus this many seconds of
# wall time is killed too, so a review ends within that whatever the load. Real code, a twentieth
# of its budget in CPU, would have to run a hundred times slower than alone to meet it.
WALL_SLACK_SECONDS = 5.0
# What the child writes once its parse is done: anything else (nothing, the pipe's end when it was
# killed) is a parse that did not end in time.
_DONE = b"1"


def parses_in_time(the_parser: tree_sitter.Parser, data: bytes, budget_seconds: float) -> bool:
    """Whether a child forked from this process parses `data` with `the_parser` (made before the
    fork, so the child has it) within `budget_seconds` of its own CPU time. True when no child can
    be forked: the parse then runs here, bounded by its progress reports alone, as it would without
    the child. The child only parses, writes one byte and leaves with os._exit: it needs no lock
    another thread of this process may have held at the fork (tree-sitter allocates with malloc,
    which is reset in a forked child), and runs no exit handler of this process."""
    if not hasattr(os, "fork"):  # no fork on this system: parsed here, as without the child
        return True
    reading, writing = os.pipe()
    try:
        child = os.fork()
    except OSError:  # no process to spare
        os.close(reading)
        os.close(writing)
        return True
    if child == 0:  # pragma: no cover - the child's own run, measured by what it writes
        try:
            os.close(reading)
            with contextlib.suppress(ValueError):
                # The default actions: the timer's signal ends the child, and so does a cancellation
                # sent to the gate's process group (the gate's own handlers only record it).
                for number in (signal.SIGPROF, signal.SIGTERM, signal.SIGINT):
                    signal.signal(number, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_PROF, budget_seconds)  # CPU time, user and system
            the_parser.parse(data)
            os.write(writing, _DONE)
        finally:
            os._exit(0)
    os.close(writing)
    done = False
    try:
        done = _answer(reading, budget_seconds + WALL_SLACK_SECONDS) == _DONE
    finally:
        os.close(reading)
        _end(child, done)
    return done


def _answer(reading: int, wall_seconds: float) -> bytes:
    """What the child wrote before it ended, or nothing when it did not within `wall_seconds`."""
    waiting = select.poll()  # not select.select: it cannot watch a descriptor numbered 1024 or more
    waiting.register(reading, select.POLLIN)
    deadline = time.monotonic() + wall_seconds
    while (left := deadline - time.monotonic()) > 0:
        if waiting.poll(math.ceil(left * 1000)):
            return os.read(reading, len(_DONE))
    return b""


def _end(child: int, done: bool) -> None:
    """Reap the child: one that answered is leaving; one that did not may still be parsing."""
    if not done:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
