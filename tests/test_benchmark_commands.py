"""Every benchmark command still starts: a module the gate splits or renames must not leave a
benchmark importing a name that moved (they run by hand, so nothing else would notice)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# Modules the commands import, with no command line of their own.
LIBRARIES = {"history_gate.py", "history_lift.py", "history_prs.py", "history_szz.py", "interleaved_runs.py", "measure.py", "prompt_bill.py"}
COMMANDS = sorted(path.name for path in BENCHMARKS.glob("*.py") if path.name not in LIBRARIES)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_benchmark_command_answers_help(command: str) -> None:
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / command), "--help"], capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert "usage:" in completed.stdout
