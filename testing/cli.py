"""Run the real `reviewgate` command in a subprocess, as CI would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# CI variables of the machine running the tests must not leak into the gate under test.
_CI_VARIABLES = ("GITHUB_", "GITLAB_", "CI_", "RUNNER_", "INPUT_")


def clean_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(_CI_VARIABLES) and key != "CI"}
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    output_dir: Path

    def report(self) -> dict[str, Any]:
        return json.loads((self.output_dir / "report.json").read_text(encoding="utf-8"))


def run_cli(repo: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> CliResult:
    """`python -m reviewgate ARGS` in `repo`; outputs under repo/.reviewgate unless --output-dir."""
    completed = subprocess.run(
        [sys.executable, "-m", "reviewgate", *args],
        cwd=repo,
        env=clean_environment(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output_dir = repo / ".reviewgate"
    if "--output-dir" in args:
        output_dir = repo / args[args.index("--output-dir") + 1]
    return CliResult(completed.returncode, completed.stdout, completed.stderr, output_dir)
