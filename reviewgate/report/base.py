"""The sink seam: each sink publishes one GateResult one way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TextIO

from reviewgate.findings import Finding, Severity
from reviewgate.result import GateResult

SUPPRESSED = "suppressed"
# Below this many findings forking a writer for the machine-read files costs more than it saves
# (report/forked_sinks.py).
FORKED_SINKS_MIN_FINDINGS = 200


def finding_groups(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """How every listing groups findings: the open ones by severity, most severe first, then the
    suppressed or otherwise dismissed ones on their own, so a severity's count is what is still open.
    Empty groups are left out."""
    ordered = list(findings)
    live = [item for item in ordered if item.dismissed is None]
    groups = [(severity.value, [item for item in live if item.severity is severity]) for severity in Severity]
    groups.append((SUPPRESSED, [item for item in ordered if item.dismissed is not None]))
    return [(heading, group) for heading, group in groups if group]


class PublishLog:
    """What sinks want said after publishing: notes for the summary and what failed. (A plain
    class, as SinkContext: a dataclass costs every start about 0.4 ms compiling its generated
    methods, and nothing compares or prints these.)"""

    def __init__(self, notes: list[str] | None = None, failures: list[str] | None = None,
                 check_run_annotated: bool = False) -> None:
        self.notes: list[str] = [] if notes is None else notes
        self.failures: list[str] = [] if failures is None else failures
        # Set by the check-run sink once its annotations are on GitHub, so the workflow-command
        # annotations (the fallback for a read-only token) are not written a second time.
        self.check_run_annotated = check_run_annotated


class SinkContext:
    """What every sink publishes with: the console stream and the log of what was written."""

    def __init__(self, stdout: TextIO, log: PublishLog | None = None) -> None:
        self.stdout = stdout
        self.log = PublishLog() if log is None else log


class Sink(Protocol):
    name: str

    def applies(self, result: GateResult) -> bool: ...

    def publish(self, result: GateResult, context: SinkContext) -> None: ...
