"""The verify through the real CLI: `reviewgate run` and `reviewgate verify` on a repository
whose app serves /health, as CI runs them."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import psutil
import pytest
import xmlschema

from reviewgate.verify.processes import port_is_free
from testing.cli import clean_environment, run_cli
from testing.conformance import conformance_file
from testing.repo import make_repo
from testing.verify_app import PYTHON, app_files, free_port
from testing.waiting import file_says

pytestmark = pytest.mark.timeout(90)

# reviewgate: ignore[security/committed-secret] a made-up value the tests check is masked
SECRET = "cli-secret-Zq8x-never-printed"
ENV = {"APP_SECRET": SECRET}
BROKEN_TEST = f"{PYTHON} -c \"print('total was 4, expected 3'); raise SystemExit(1)\""


def app_repo(tmp_path: Path, port: int, **options: str) -> Path:
    """The app and its manifest on `main` (its `secrets` are granted at the merge base), the
    branch's manifest with `options` applied."""
    base = {"README.md": "app\n", **app_files(port)}
    branch = {**app_files(port, **options), "README.md": "app, changed\n"}
    return make_repo(tmp_path, base, branch).path  # type: ignore[arg-type]


def no_app_left(port: int) -> bool:
    for process in psutil.process_iter(["cmdline"]):
        if f"app/server.py {port}" in " ".join(process.info["cmdline"] or ()):
            if process.status() != psutil.STATUS_ZOMBIE:
                return False
    return port_is_free(port)


def every_output_text(output_dir: Path) -> str:
    return "\n".join(path.read_text(errors="replace") for path in output_dir.rglob("*") if path.is_file())


def validate_verify_cases(path: Path) -> None:
    """The verify's testcases in junit.xml (steps, the app's imported cases) against
    junit-10.xsd. Only those are put in the suite validated: the attributes of the report's
    outer elements belong to the junit sink, not to the verify."""
    xsd = conformance_file("junit-10.xsd")
    cases = [
        case
        for case in ElementTree.parse(path).iter("testcase")
        if (case.get("classname") or "").startswith(("reviewgate.verify", "app."))
    ]
    assert cases
    suite = ElementTree.Element(
        "testsuite", name="verify", tests=str(len(cases)), failures="0", errors="0", time="0"
    )
    for case in cases:
        case.attrib.pop("file", None)  # GitLab's `file` is not in junit-10.xsd (conformance README)
        suite.append(case)
    xmlschema.XMLSchema(str(xsd)).validate(ElementTree.tostring(suite, encoding="unicode"))


def test_run_stands_the_app_up_tests_it_and_approves(tmp_path: Path) -> None:
    port = free_port()
    repo = app_repo(tmp_path, port)
    result = run_cli(repo, "run", "--base", "main", env=ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "approve"
    verify = report["verify"]
    assert verify["status"] == "passed" and verify["survivors"] == []
    test = next(step for step in verify["steps"] if step["name"] == "test")
    assert test["exit_code"] == 0 and test["log_path"].endswith("verify/test.log") and test["command"]
    assert "verify" in report["timings"]
    summary = (result.output_dir / "summary.md").read_text()
    assert "<details><summary>The verify passed</summary>" in summary and "| test | passed | 0 |" in summary
    validate_verify_cases(result.output_dir / "junit.xml")
    assert no_app_left(port)
    assert SECRET not in result.stdout + result.stderr + every_output_text(result.output_dir)


def test_broken_test_requests_changes_with_a_verify_blocker(tmp_path: Path) -> None:
    port = free_port()
    repo = app_repo(tmp_path, port, test=BROKEN_TEST)
    result = run_cli(repo, "run", "--base", "main", env=ENV)
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "request_changes" and report["route"] == "debugging"
    assert report["reasons"] == ["verify: test failed (exit code 1)"]
    (finding,) = [item for item in report["findings"] if item["category"] == "verify"]
    assert (finding["class"], finding["severity"], finding["blocking"]) == ("correctness", "blocker", True)
    assert "total was 4, expected 3" in finding["body"]
    junit = ElementTree.parse(result.output_dir / "junit.xml")
    failed = {case.get("name") for case in junit.iter("testcase") if case.find("failure") is not None}
    assert "test" in failed
    validate_verify_cases(result.output_dir / "junit.xml")
    assert no_app_left(port)


def test_port_taken_first_blocks_with_a_setup_side_message(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        repo = app_repo(tmp_path, port)
        result = run_cli(repo, "run", "--base", "main", env=ENV)
    assert result.returncode == 3, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "blocked"
    assert any(
        f"already in use before start: {port}" in reason and "not the branch's" in reason
        for reason in report["reasons"]
    )
    assert not [item for item in report["findings"] if item["category"] == "verify"]


def test_no_verify_skips_it(tmp_path: Path) -> None:
    repo = app_repo(tmp_path, free_port(), test=BROKEN_TEST)
    result = run_cli(repo, "run", "--base", "main", "--no-verify", env=ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.report()["verify"]["status"] == "absent"


def test_verify_command_runs_only_the_verify_with_the_same_outputs(tmp_path: Path) -> None:
    port = free_port()
    repo = app_repo(tmp_path, port, test=BROKEN_TEST)
    result = run_cli(repo, "verify", "--output-dir", "out", env=ENV)
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    assert report["reviewers"] == [] and report["verify"]["status"] == "failed"
    assert (result.output_dir / "junit.xml").is_file() and (result.output_dir / "summary.md").is_file()
    assert (result.output_dir / "verify/test.log").is_file()
    missing_secret = run_cli(repo, "verify", env={})
    assert missing_secret.returncode == 3
    assert "APP_SECRET" in missing_secret.stdout


def test_malformed_manifest_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path, {"README.md": "x\n"}, {".prepcook/scripts.toml": '[test]\nrun = "true"\n[ready]\n'}
    ).path
    result = run_cli(repo, "verify", env=ENV)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "reviewgate: error: .prepcook/scripts.toml: ready: expected exactly one of url, tcp, run; got none"
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cancel_during_test_still_tears_down_and_blocks(tmp_path: Path, signum: signal.Signals) -> None:
    port = free_port()
    # The port marks this test's own sleeper: the other signal's case may run beside it (-n 2).
    slow_test = f"{PYTHON} -c \"import time; print('test started', flush=True); time.sleep(60)\" {port}"
    repo = app_repo(tmp_path, port, test=slow_test)
    gate = subprocess.Popen(
        [sys.executable, "-m", "reviewgate", "verify"],
        cwd=repo,
        env=clean_environment(ENV),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_text(gate, repo / ".reviewgate/verify/test.log", "test started")
    gate.send_signal(signum)
    stdout, stderr = gate.communicate(timeout=30)
    assert gate.returncode == 3, stdout + stderr
    report = (repo / ".reviewgate/report.json").read_text()
    assert '"cancelled": true' in report and f"cancelled ({signum.name}) during test; teardown ran" in report
    assert (repo / ".reviewgate/verify/teardown.log").read_text().strip() == "tearing down"
    assert no_app_left(port)
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or ())
        assert not ("time.sleep(60)" in command and str(port) in command), command


def test_secret_never_appears_in_github_outputs(tmp_path: Path) -> None:
    """In GitHub Actions the failing step's log tail reaches annotations, the step summary and
    the outputs: the secret the app prints is masked in every one of them."""
    leaking = (
        f"{PYTHON} -c \"import os; print('connecting with', os.environ['APP_SECRET']); raise SystemExit(2)\""
    )
    repo = app_repo(tmp_path, free_port(), test=leaking)
    step_summary, outputs = tmp_path / "step-summary.md", tmp_path / "outputs.txt"
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(step_summary),
        "GITHUB_OUTPUT": str(outputs),
    }
    result = run_cli(repo, "run", "--base", "main", env={**ENV, **github})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "connecting with ***" in result.stdout and "::group::verify: test: " in result.stdout
    everything = result.stdout + result.stderr + every_output_text(result.output_dir)
    everything += step_summary.read_text() + outputs.read_text()
    assert "connecting with ***" in (result.output_dir / "report.json").read_text()
    assert SECRET not in everything


def test_second_signal_during_teardown_hurries_it(tmp_path: Path) -> None:
    """GitHub follows SIGINT with SIGTERM and then SIGKILL: on the second signal a slow
    teardown step is cut short and the app is still stopped before the gate exits."""
    port = free_port()
    # The port marks this test's own sleeper: the other signal's case may run beside it (-n 2).
    slow_test = f"{PYTHON} -c \"import time; print('test started', flush=True); time.sleep(60)\" {port}"
    repo = app_repo(tmp_path, port, test=slow_test)
    manifest = repo / ".prepcook/scripts.toml"
    manifest.write_text(
        manifest.read_text().replace('run = "echo tearing down"', 'run = "echo tearing down; sleep 60"')
    )
    gate = subprocess.Popen(
        [sys.executable, "-m", "reviewgate", "verify"],
        cwd=repo,
        env=clean_environment(ENV),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    logs = repo / ".reviewgate/verify"
    wait_for_text(gate, logs / "test.log", "test started")
    gate.send_signal(signal.SIGINT)
    wait_for_text(gate, logs / "teardown.log", "tearing down")
    sent = time.monotonic()
    gate.send_signal(signal.SIGTERM)
    assert gate.wait(timeout=30) == 3
    assert time.monotonic() - sent < 10  # not the 60 s the teardown step would take
    assert no_app_left(port)
    assert "cancelled (SIGINT) during test" in (repo / ".reviewgate/report.json").read_text()


def wait_for_text(process: subprocess.Popen[Any], path: Path, text: str) -> None:
    deadline = time.monotonic() + 30
    while not file_says(path, text):
        if process.poll() is not None or time.monotonic() >= deadline:
            process.kill()
            stdout, stderr = process.communicate()
            report = path.parent.parent / "report.json"
            said = report.read_text() if report.exists() else "(no report)"
            raise AssertionError(
                f"{path.name} never said {text!r}; gate exit {process.returncode}\n"
                f"{stdout or ''}{stderr or ''}\n{said}"
            )
        time.sleep(0.05)


def test_verify_command_without_a_manifest_is_a_usage_error_not_a_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}).path
    result = run_cli(repo, "verify")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "reviewgate: error: verify: no manifest at .prepcook/scripts.toml "
        "(add .prepcook/scripts.toml, or set [verify] manifest)"
    )
    assert not (repo / ".reviewgate" / "report.json").exists()


@pytest.mark.parametrize("moved_to", [None, "ci/scripts.toml"], ids=["deleted", "renamed"])
def test_a_branch_that_removes_the_manifest_requests_changes_not_a_silent_absent_verify(
    tmp_path: Path, moved_to: str | None
) -> None:
    """The target side has a verify: a branch deleting or moving its manifest must not skip it."""
    port = free_port()
    base = {"README.md": "app\n", **app_files(port)}
    branch: dict[str, str | None] = {".prepcook/scripts.toml": None, "README.md": "app, changed\n"}
    if moved_to is not None:
        branch[moved_to] = base[".prepcook/scripts.toml"]
    repo = make_repo(tmp_path, base, branch)
    result = run_cli(repo.path, "run", "--base", "main", env=ENV)
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "request_changes"
    assert report["verify"]["status"] == "failed" and report["verify"]["steps"] == []
    (finding,) = [item for item in report["findings"] if item["category"] == "verify"]
    assert (finding["class"], finding["severity"], finding["blocking"], finding["path"]) == (
        "correctness", "blocker", True, ".prepcook/scripts.toml")
    assert finding["title"] == (
        "The change removes the verify manifest (.prepcook/scripts.toml): the verify cannot run")
    assert repo.base_sha[:12] in finding["body"]
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "the change removes the verify manifest .prepcook/scripts.toml" in summary
    assert "the verify could not run on this change" in result.stdout  # not "the app's own tests failed"
    assert no_app_left(port)


def test_a_repository_without_a_manifest_on_either_side_still_has_no_verify(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.report()["verify"] == {**result.report()["verify"], "status": "absent",
                                         "reason": "no verify manifest (.prepcook/scripts.toml)"}
