"""Sinks written in a forked process while this one writes the others: on a large change the
machine-read files (report.json, SARIF, GitLab code quality, about a third of the report's time)
are serialised on the core the rest of the report leaves idle.

Only sinks that read nothing but the result and write nothing but their own file go there (no
console, no publish log). A failure in the forked writer is raised here, as it would have been
had the sink run in this process, once the other sinks are written.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from reviewgate.report.base import FORKED_SINKS_MIN_FINDINGS, Sink, SinkContext
from reviewgate.result import GateResult

MIN_FINDINGS = FORKED_SINKS_MIN_FINDINGS


def can_fork(result: GateResult) -> bool:
    return hasattr(os, "fork") and len(result.findings) >= MIN_FINDINGS


@contextmanager
def written_beside(sinks: Sequence[Sink], result: GateResult, context: SinkContext) -> Iterator[None]:
    """`sinks` published in a forked process for as long as the block runs; its error raised at the end."""
    if not sinks:
        yield
        return
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends with os._exit, so coverage never sees it
        os.close(reading)
        payload = _failure_of(sinks, result, context)
        if payload:
            with os.fdopen(writing, "wb") as handle:
                handle.write(payload)
        os._exit(1 if payload else 0)
    os.close(writing)
    try:
        yield
    finally:
        with os.fdopen(reading, "rb") as handle:
            payload = handle.read()
        _, status = os.waitpid(pid, 0)
    if payload:
        raise pickle.loads(payload)
    if status != 0:
        raise RuntimeError(f"the report writer for {', '.join(type(sink).__name__ for sink in sinks)} "
                           f"ended with wait status {status}")


def _failure_of(sinks: Sequence[Sink], result: GateResult, context: SinkContext) -> bytes:
    """The forked writer's work: `sinks` published, and what the first one to fail raised, pickled
    (empty when every one was written)."""
    try:
        for sink in sinks:
            sink.publish(result, context)
    except BaseException as error:  # every failure goes back to the parent, as it is
        try:
            return pickle.dumps(error)
        except Exception:
            return pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))
    return b""
