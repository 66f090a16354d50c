"""What the verify hands on: one record, read by the gate, the lenses and the sinks."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

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


class StepResult(NamedTuple):
    """One manifest step the verify ran: its command, exit code, time and log."""

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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepResult:
        exit_code = data.get("exit_code")
        return cls(str(data["name"]), str(data["command"]), None if exit_code is None else int(exit_code),
                   float(data.get("duration_seconds", 0.0)), data.get("log_path"), bool(data["passed"]),
                   str(data.get("detail") or ""))


class VerifyOutcome(NamedTuple):
    """What the verify did: its status, its steps and the findings and tests they gave."""

    status: VerifyStatus
    reason: str = ""
    manifest: str | None = None
    steps: tuple[StepResult, ...] = ()
    findings: tuple[Finding, ...] = ()
    reproduction: ReproductionStatus = ReproductionStatus.ABSENT
    # Test results the app's own `junit` file reported: (suite, case, passed, message).
    imported_tests: tuple[tuple[str, str, bool, str], ...] = ()
    survivors: tuple[str, ...] = ()
    duration_seconds: float = 0.0
    # The gate received SIGTERM/SIGINT during the verify: teardown ran, the run stops blocked.
    cancelled: bool = False
    # What the verify wants said beside the steps (an unreadable junit file, ...).
    notes: tuple[str, ...] = ()
    # Who ran the branch's code, as verify/principal.py describes it ("separate user (uid …)").
    boundary: str = ""
    # What the branch's code changed of the gate's own (git store, installation): the review is not run.
    tampered: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "reason": self.reason,
            "manifest": self.manifest,
            "boundary": self.boundary,
            "tampered": list(self.tampered),
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


    def to_record(self) -> dict[str, Any]:
        """Everything, for `from_record` (a shard's report carries the verify to the merge)."""
        return {
            **self.to_json(),
            "findings": [item.to_json() for item in self.findings],
            "imported_tests": [list(item) for item in self.imported_tests],
            "duration_seconds": self.duration_seconds,
        }

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> VerifyOutcome:
        return cls(
            status=VerifyStatus(data["status"]),
            reason=str(data.get("reason") or ""),
            manifest=data.get("manifest"),
            steps=tuple(StepResult.from_json(item) for item in data.get("steps", [])),
            findings=tuple(Finding.from_json(item) for item in data.get("findings", [])),
            reproduction=ReproductionStatus(data.get("reproduction", "absent")),
            imported_tests=tuple((str(suite), str(case), bool(passed), str(message))
                                 for suite, case, passed, message in data.get("imported_tests", [])),
            survivors=tuple(str(item) for item in data.get("survivors", [])),
            duration_seconds=float(data.get("duration_seconds", 0.0)),
            cancelled=bool(data.get("cancelled", False)),
            notes=tuple(str(item) for item in data.get("notes", [])),
        )


ABSENT = VerifyOutcome(status=VerifyStatus.ABSENT, reason="no verify manifest")
