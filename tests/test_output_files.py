"""The output directory: files readable by later CI steps (0644 under the umask), one run at a
time (a lock), and nothing of an earlier run left to pass for this one's. Real processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from reviewgate.report import gitlab, json_report, junit, sarif, summary
from reviewgate.report.files import PREVIOUS_OUTPUTS
from testing.cli import clean_environment
from testing.repo import make_repo, write_base_config
from testing.verify_app import PYTHON
from testing.waiting import file_says

pytestmark = pytest.mark.timeout(120)


def slow_test(marker: str, seconds: float = 30) -> str:
    return f"{PYTHON} -c 'import time; print(\"{marker}\", flush=True); time.sleep({seconds})'"


def app_repo(tmp_path: Path, test: str) -> Path:
    manifest = f"[test]\nrun = '''{test}'''\n"
    built = make_repo(tmp_path, {"README.md": "app\n", ".prepcook/scripts.toml": manifest},
                      {"README.md": "app, changed\n"})
    return built.path


def start_gate(repo: Path, *args: str, umask: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reviewgate", "run", "--base", "main", "--output-dir", "out", *args],
        cwd=repo, env=clean_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,  # noqa: PLW1509 - no threads here
    )


def wait_for_file(path: Path, text: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if file_says(path, text):
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never said {text!r}")


def kill_mentioning(text: str) -> None:
    for process in psutil.process_iter(["cmdline"]):
        if text in " ".join(process.info["cmdline"] or ()):
            with contextlib.suppress(psutil.NoSuchProcess):  # it may end between the listing and the kill
                process.kill()


def test_every_sink_file_is_cleared_before_a_run() -> None:
    written = {module.FILE_NAME for module in (gitlab, json_report, junit, sarif, summary)}
    assert written == set(PREVIOUS_OUTPUTS)


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_outputs_are_readable_under_the_umask(tmp_path: Path, umask: int) -> None:
    """Case 13: mkstemp made every output 0600; in the container action (root) a later step
    running as the runner's user could not read report.json."""
    repo = app_repo(tmp_path, f"{PYTHON} -c 'print(1)'")
    gate = start_gate(repo, umask=umask)
    _, errors = gate.communicate(timeout=90)
    assert gate.returncode == 0, errors
    out = repo / "out"
    files = [out / name for name in PREVIOUS_OUTPUTS] + [out / "verify/test.log"]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
    for directory in (out, out / "verify"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o777 & ~umask, directory


def test_a_second_run_on_the_same_output_dir_is_blocked_at_once(tmp_path: Path) -> None:
    """Case 14: two runs at once mixed their files. The second now stops at once, exit 3, one
    line naming the directory; the first finishes with its own outputs."""
    marker = f"first-run-{tmp_path.name}"
    repo = app_repo(tmp_path, slow_test(marker, 3))
    first = start_gate(repo)
    try:
        wait_for_file(repo / "out/verify/test.log", marker)
        started = time.monotonic()
        second = start_gate(repo)
        _, errors = second.communicate(timeout=30)
        assert time.monotonic() - started < 10
        assert second.returncode == 3
        assert errors.strip().splitlines() == [
            "reviewgate: error: blocked: another run is using out (it holds out/.lock); "
            "wait for it to finish or give this run its own --output-dir"
        ]
        _, errors = first.communicate(timeout=60)
        assert first.returncode == 0, errors
        report = json.loads((repo / "out/report.json").read_text())
        assert report["verdict"] == "approve" and report["verify"]["status"] == "passed"
    finally:
        first.kill()
        kill_mentioning(marker)
    # The lock went with the process: the next run goes ahead.
    third = start_gate(repo)
    assert third.wait(timeout=90) == 0


STALE_REPORT = {"verdict": "approve", "target": {"head_sha": "0" * 40}}


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_no_stale_approval_survives_a_run_that_crashes_or_is_cancelled(tmp_path: Path, how: signal.Signals) -> None:
    marker = f"interrupted-{how.name}-{tmp_path.name}"
    repo = app_repo(tmp_path, slow_test(marker))
    out = repo / "out"
    out.mkdir()
    for name in PREVIOUS_OUTPUTS:
        (out / name).write_text(json.dumps(STALE_REPORT))
    (out / "verify").mkdir()
    (out / "verify/test.log").write_text("the old run's tests passed\n")
    (out / "notes.txt").write_text("the user's own file")
    gate = start_gate(repo)
    try:
        wait_for_file(out / "verify/test.log", marker)
        gate.send_signal(how)
        gate.wait(timeout=60)
    finally:
        gate.kill()
        kill_mentioning(marker)
    assert (out / "notes.txt").read_text() == "the user's own file"
    report_path = out / "report.json"
    if how is signal.SIGKILL:
        assert not report_path.exists()
        assert not any((out / name).exists() for name in PREVIOUS_OUTPUTS)
    else:
        assert gate.returncode == 3
        report = json.loads(report_path.read_text())
        assert report["verdict"] == "blocked" and report["target"]["head_sha"] != "0" * 40


def test_a_run_that_stops_on_a_bad_config_leaves_no_stale_approval(tmp_path: Path) -> None:
    repo = app_repo(tmp_path, f"{PYTHON} -c 'print(1)'")
    write_base_config(repo, "[review\n")  # the policy is read on the target side
    out = repo / "out"
    out.mkdir()
    (out / "report.json").write_text(json.dumps(STALE_REPORT))
    gate = start_gate(repo)
    _, errors = gate.communicate(timeout=60)
    assert gate.returncode == 2 and "not valid TOML" in errors
    assert not (out / "report.json").exists()
