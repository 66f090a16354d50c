"""What the verify hands on: one record, read by the gate, the lenses and the sinks."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from reviewgate.findings import Finding


class VerifyStatus(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # the branch's side: a step failed; carries a verify finding
    BLOCKED = "blocked"  # the setup's side: missing secret, port in use; never the branch's fault
    ABSENT = "absent"  # no manifest, or --no-verify


class ReproductionStatus(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    ABSENT = "absent"


@dataclass(frozen=True)
class StepResult:
    name: str
    command: str
    exit_code: int | None
    duration_seconds: float
    log_path: str | None
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "command": self.command,
            "exit_code": self.exit_code,
            "duration_seconds": round(self.duration_seconds, 3),
            "log_path": self.log_path,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class VerifyOutcome:
    status: VerifyStatus
    reason: str = ""
    manifest: str | None = None
    steps: tuple[StepResult, ...] = field(default_factory=tuple)
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    reproduction: ReproductionStatus = ReproductionStatus.ABSENT
    # Test results the app's own `junit` file reported: (suite, case, passed, message).
    imported_tests: tuple[tuple[str, str, bool, str], ...] = field(default_factory=tuple)
    survivors: tuple[str, ...] = field(default_factory=tuple)
    duration_seconds: float = 0.0
    # The gate received SIGTERM/SIGINT during the verify: teardown ran, the run stops blocked.
    cancelled: bool = False
    # What the verify wants said beside the steps (an unreadable junit file, ...).
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "reason": self.reason,
            "manifest": self.manifest,
            "steps": [step.to_json() for step in self.steps],
            "reproduction": self.reproduction.value,
            "survivors": list(self.survivors),
            "duration_seconds": round(self.duration_seconds, 3),
            "cancelled": self.cancelled,
            "notes": list(self.notes),
            "imported_tests": {
                "total": len(self.imported_tests),
                "failed": sum(1 for _, _, passed, _ in self.imported_tests if not passed),
            },
        }


ABSENT = VerifyOutcome(status=VerifyStatus.ABSENT, reason="no verify manifest")
