"""benchmarks/per_file_cpu.py on a real repository: the gate's functions it wraps from outside
still exist, and each part of the per-file stage is charged its own CPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.repo import make_repo

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "per_file_cpu.py"
ADDED = "\n".join(f"def added_{number}(value):\n    return value + {number}\n\n" for number in range(40))


def test_the_per_file_stage_is_split_into_its_parts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"module.py": "import os\n\n\ndef kept():\n    return os.sep\n"},
                     {"module.py": "import os\n\n\ndef kept():\n    return os.sep\n\n\n" + ADDED})
    completed = subprocess.run(
        [sys.executable, str(BENCHMARK), str(repo.path), "feature", "--runs", "1"],
        capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    charged = {line.split("  ")[0].strip() for line in completed.stdout.splitlines() if " s " in line}
    assert {"ast.parse (every caller)", "top-level statements told apart (python_statements)",
            "head shapes for the tests lens", "trees freed (forget_parsed_trees)",
            "PythonSwallowedFailureLens (correctness/swallowed-exception)"} <= charged, completed.stdout
    assert "per-file stage, in all" in completed.stdout
