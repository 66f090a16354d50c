"""The sink seam: each sink publishes one GateResult one way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TextIO

from reviewgate.result import GateResult


@dataclass
class PublishLog:
    """What sinks want said after publishing: notes for the summary and what failed."""

    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    # Set by the check-run sink once its annotations are on GitHub, so the workflow-command
    # annotations (the fallback for a read-only token) are not written a second time.
    check_run_annotated: bool = False


@dataclass
class SinkContext:
    stdout: TextIO
    log: PublishLog = field(default_factory=PublishLog)


class Sink(Protocol):
    name: str

    def applies(self, result: GateResult) -> bool: ...

    def publish(self, result: GateResult, context: SinkContext) -> None: ...
