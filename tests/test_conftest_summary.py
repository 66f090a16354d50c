"""This directory's conftest, loaded into a real pytest run on a test file of its own: a run whose
tests skip for want of ../shared/conformance ends by saying how many and why; a run where
PYTHONDONTWRITEBYTECODE is set gives its subprocesses one temporary bytecode cache, gone at its end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.cli import clean_environment

ROOT = Path(__file__).resolve().parents[1]
# The inner run loads this directory's conftest and nothing else: the installed plugins (hypothesis,
# xdist, timeout) play no part in what it shows, and loading them was four fifths of its CPU.
INNER_RUN = {"PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
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
        cwd=tmp_path, env=clean_environment(INNER_RUN), capture_output=True, text=True, timeout=120,
        check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = [line for line in completed.stdout.splitlines() if line.startswith("reviewgate: ")]
    assert len(lines) == 1, completed.stdout
    assert lines[0].startswith("reviewgate: 1 test(s) skipped: they check outputs against the format owners' "
                               "schemas in "), lines
    assert lines[0].endswith("which is absent (it sits in ../shared/conformance beside the checkout)")


WHERE_BYTECODE_GOES = '''
import os
import subprocess
import sys

def test_a_subprocess_keeps_its_bytecode_out_of_the_source_tree() -> None:
    print("prefix:", os.environ.get("PYTHONPYCACHEPREFIX"))
    assert os.environ.get("PYTHONDONTWRITEBYTECODE") is None
    child = subprocess.run([sys.executable, "-c", "import sys; print(sys.pycache_prefix, sys.dont_write_bytecode)"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.split() == [os.environ["PYTHONPYCACHEPREFIX"], "False"]
'''


def test_where_bytecode_is_not_written_the_runs_subprocesses_share_one_temporary_cache(tmp_path: Path) -> None:
    (tmp_path / "test_bytecode.py").write_text(WHERE_BYTECODE_GOES, encoding="utf-8")
    (tmp_path / "none.ini").write_text("[pytest]\n", encoding="utf-8")
    environment = {key: value for key, value in clean_environment(INNER_RUN).items()
                   if key != "PYTHONPYCACHEPREFIX"}
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "tests.conftest", "--rootdir",
         str(tmp_path), "-c", str(tmp_path / "none.ini"), str(tmp_path / "test_bytecode.py")],
        cwd=tmp_path, env={**environment, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True,
        timeout=120, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    [prefix] = [line.split(": ", 1)[1] for line in completed.stdout.splitlines() if line.startswith("prefix: ")]
    assert Path(prefix).name.startswith("reviewgate-tests-bytecode-")
    assert not Path(prefix).exists(), "the run's bytecode cache outlived it"
