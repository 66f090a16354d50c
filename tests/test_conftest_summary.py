"""A run whose tests skip for want of ../shared/conformance ends by saying how many and why: real
pytest, run on a test file that skips as those tests do, with this directory's conftest loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.cli import clean_environment

ROOT = Path(__file__).resolve().parents[1]
SKIPPING = '''
import pytest

@pytest.mark.skipif(True, reason="../shared/conformance is absent")
def test_needs_the_schemas() -> None:
    pass

def test_needs_nothing() -> None:
    pass

@pytest.mark.skipif(True, reason="another reason")
def test_skips_for_another_reason() -> None:
    pass
'''


def test_the_end_of_the_run_counts_the_tests_skipped_for_the_missing_schemas(tmp_path: Path) -> None:
    (tmp_path / "test_skipping.py").write_text(SKIPPING, encoding="utf-8")
    (tmp_path / "none.ini").write_text("[pytest]\n", encoding="utf-8")  # not this repository's settings
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "--rootdir",
         str(tmp_path), "-c", str(tmp_path / "none.ini"), str(tmp_path / "test_skipping.py")],
        cwd=tmp_path, env=clean_environment({"PYTHONPATH": str(ROOT)}), capture_output=True, text=True, timeout=120,
        check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = [line for line in completed.stdout.splitlines() if line.startswith("reviewgate: ")]
    assert len(lines) == 1, completed.stdout
    assert lines[0].startswith("reviewgate: 1 test(s) skipped: they check outputs against the format owners' "
                               "schemas in "), lines
    assert lines[0].endswith("which is absent (it sits in ../shared/conformance beside the checkout)")
