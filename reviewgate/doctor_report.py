"""What `reviewgate doctor` prints: one line per check, and its exit code from the problems found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from reviewgate.errors import EXIT_APPROVED, EXIT_BLOCKED, EXIT_USAGE
from reviewgate.escaping import runner_line


@dataclass
class DoctorReport:
    """Problems by kind: configuration ones exit 2, unreachable reviewers exit 3."""

    out: TextIO
    config_problems: int = 0
    reach_problems: int = 0

    def ok(self, text: str) -> None:
        self.out.write(f"ok: {runner_line(text)}\n")

    def config(self, text: str) -> None:
        self.config_problems += 1
        self.out.write(f"problem: {runner_line(text)}\n")

    def note(self, text: str) -> None:
        """Worth knowing, not a problem: the gate runs as it is."""
        self.out.write(f"note: {runner_line(text)}\n")

    def unreachable(self, text: str) -> None:
        self.reach_problems += 1
        self.out.write(f"problem: {runner_line(text)}\n")

    def exit_code(self) -> int:
        if self.config_problems:
            return EXIT_USAGE
        return EXIT_BLOCKED if self.reach_problems else EXIT_APPROVED
