"""SIGTERM or SIGINT while a reviewer works: the real gate stops within seconds, leaves no child
and no temporary directory behind, and publishes a complete `blocked` report for this head."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from reviewgate import stopping
from reviewgate.context import ReviewRequest
from reviewgate.review_stage import STOP_GRACE_SECONDS, review_all
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.verify.cancellation import Cancellation
from testing.agent_clis import shared_with_the_agent
from testing.cli import clean_environment
from testing.forge_server import ForgeServer, github_environment
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Reply, review_document
from testing.repo import git, write_base_config  # the head moves when the config is committed on the target side
from testing.verify_app import python_for_the_verify

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}
SIGNALS = [signal.SIGTERM, signal.SIGINT]
# Stopping takes about a second (publishing included); the margin is for a busy test machine.
STOP_SECONDS = 6


def _start_gate(repo: Path, temp: Path) -> subprocess.Popen[str]:
    temp.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "reviewgate", "run", "--base", "main"],
        cwd=repo, env=clean_environment({**KEY, "TMPDIR": str(temp)}),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _wait_until(gate: subprocess.Popen[str], condition: object, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():  # type: ignore[operator]
        assert gate.poll() is None, f"the gate ended before {what}: {gate.communicate()}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)


def _stop(gate: subprocess.Popen[str], signum: signal.Signals) -> tuple[float, str]:
    sent = time.monotonic()
    gate.send_signal(signum)
    stdout, stderr = gate.communicate(timeout=30)
    return time.monotonic() - sent, stdout + stderr


def _assert_blocked_for_this_head(repo: Path, head_sha: str, signum: signal.Signals) -> dict[str, object]:
    report = json.loads((repo / ".reviewgate/report.json").read_text())
    assert report["verdict"] == "blocked"
    assert report["target"]["head_sha"] == head_sha
    assert any(f"cancelled by {signum.name}" in reason for reason in report["reasons"]), report["reasons"]
    assert f"cancelled by {signum.name}" in (repo / ".reviewgate/summary.md").read_text()
    assert "cancelled by" in (repo / ".reviewgate/junit.xml").read_text()
    return report


@pytest.mark.parametrize("signum", SIGNALS, ids=[item.name for item in SIGNALS])
def test_a_signal_during_a_model_request_blocks_at_once(tmp_path: Path, signum: signal.Signals) -> None:
    repo = calc_repo(tmp_path)
    # An earlier run approved an older head: it must not stay in place as this run's record.
    old = repo.path / ".reviewgate"
    old.mkdir()
    (old / "report.json").write_text(json.dumps({"verdict": "approve", "target": {"head_sha": repo.base_sha}}))
    with ModelServer([Reply(review=review_document(), delay=60)]) as server:
        write_config(repo.path, "openai", fast_openai(server.url, timeout=120))
        gate = _start_gate(repo.path, tmp_path / "temp")
        _wait_until(gate, lambda: server.posts(), "the model request")
        elapsed, output = _stop(gate, signum)
    assert gate.returncode == 3, output
    assert elapsed < STOP_SECONDS, f"the gate took {elapsed:.1f}s to stop"
    _assert_blocked_for_this_head(repo.path, git(repo.path, "rev-parse", "HEAD"), signum)
    assert "Traceback" not in output


AGENT = """
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
child = os.fork()  # the agent's own helper process, in its process group
if child == 0:
    open(sys.argv[1] + ".child", "w").write(str(os.getpid()))
time.sleep(60)
"""


@pytest.mark.parametrize("signum", SIGNALS, ids=[item.name for item in SIGNALS])
def test_a_signal_during_an_agent_run_kills_its_group_and_removes_its_files(
    tmp_path: Path, signum: signal.Signals
) -> None:
    repo = calc_repo(tmp_path)
    with shared_with_the_agent() as shared:  # as root the agent is another uid: not in tmp_path
        agent = shared / "agent.py"
        agent.write_text(AGENT)
        pid_file = shared / "out" / "agent.pid"
        write_config(repo.path, "agent", {"provider": "command", "timeout": 120,
                                          "command": [python_for_the_verify(), str(agent), str(pid_file)]})
        temp = shared / "temp"
        gate = _start_gate(repo.path, temp)
        child_file = Path(f"{pid_file}.child")
        _wait_until(gate, lambda: child_file.is_file() and child_file.read_text(), "the agent start")
        assert sorted(item.name.split("-")[1] for item in _made(temp)) == ["agent", "prompt", "snapshot"]
        _stop_and_check(gate, signum, repo.path, pid_file, temp)


def _stop_and_check(gate: subprocess.Popen[str], signum: signal.Signals, repo: Path, pid_file: Path,
                    temp: Path) -> None:
    elapsed, output = _stop(gate, signum)
    assert gate.returncode == 3, output
    assert elapsed < STOP_SECONDS, f"the gate took {elapsed:.1f}s to stop"
    _assert_blocked_for_this_head(repo, git(repo, "rev-parse", "HEAD"), signum)
    # Found by command line: in its own pid namespace (as root) the pids it wrote are the namespace's.
    left = [process for process in psutil.process_iter(["cmdline", "status"])
            if str(pid_file) in (process.info["cmdline"] or []) and process.info["status"] != psutil.STATUS_ZOMBIE]
    assert left == [], f"processes of the agent outlived the gate: {left}"
    assert _made(temp) == []  # no snapshot, no prompt, no agent home left behind


def _made(temp: Path) -> list[Path]:
    """What the review made in the temp dir; the uid lease's lock files stay, as the verify's do."""
    return [item for item in temp.iterdir() if item.name != "reviewgate-verify-uids"]


def test_a_cancelled_pull_request_run_completes_its_check_run_as_blocked(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=review_document(), delay=60)]) as model, ForgeServer() as forge:
        write_config(repo.path, "openai", fast_openai(model.url, timeout=120))
        config = (repo.path / ".reviewgate.toml").read_text()
        write_base_config(repo.path, config + "\n[github]\nretry_backoff = 0.01\n")
        gate = subprocess.Popen(
            [sys.executable, "-m", "reviewgate", "run", "--base", "main"],
            cwd=repo.path, env=clean_environment({**KEY, **github_environment(forge, tmp_path)}),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        _wait_until(gate, lambda: model.posts(), "the model request")
        elapsed, output = _stop(gate, signal.SIGTERM)
    assert gate.returncode == 3, output
    assert elapsed < STOP_SECONDS, f"the gate took {elapsed:.1f}s to stop"
    [run] = forge.state.check_runs.values()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert run["head_sha"] == git(repo.path, "rev-parse", "HEAD") and "cancelled by SIGTERM" in run["output"]["summary"]
    [comment] = forge.state.comments.values()
    assert comment["body"].startswith("REVIEW: BLOCKED\n")


class _StuckReviewer:
    """A reviewer that ignores the stop request: sleeps inside its tracked temporary directory."""

    def __init__(self, name: str, scratch: Path) -> None:
        self.name, self.scratch = name, scratch

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        self.scratch.mkdir()
        (self.scratch / "prompt.md").write_text("the prompt")
        with stopping.tracked(self.scratch):
            time.sleep(30)
        return ReviewerOutcome(self.name, ReviewerStatus.OK)


def test_a_reviewer_that_does_not_stop_is_abandoned_after_the_grace_and_its_files_removed(
    tmp_path: Path,
) -> None:
    stopping.reset()
    cancellation = Cancellation()
    scratch = tmp_path / "reviewgate-prompt-x"
    reviewers = [_StuckReviewer("stuck", scratch), _StuckReviewer("never-started", tmp_path / "other")]
    threading.Timer(0.5, cancellation.cancel, ("SIGTERM",)).start()
    started = time.monotonic()
    outcomes = review_all(reviewers, lambda reviewer: reviewer.review(None), cancellation)  # type: ignore[arg-type]
    elapsed = time.monotonic() - started
    stopping.reset()
    assert [(item.reviewer, item.status, item.reason) for item in outcomes] == [
        ("stuck", ReviewerStatus.BLOCKED, "cancelled by SIGTERM"),
        ("never-started", ReviewerStatus.BLOCKED, "cancelled by SIGTERM"),
    ]
    assert 0.5 + STOP_GRACE_SECONDS - 0.2 < elapsed < 0.5 + STOP_GRACE_SECONDS + 2
    assert not scratch.exists() and not (tmp_path / "other").exists()


def test_a_signal_before_the_review_starts_blocks_without_reviewing(tmp_path: Path) -> None:
    """Cancelled while the gate still reads the PR conversation from a hung forge: no reviewer
    starts, and the report is blocked for this head once the forge budget (5 s) runs out."""
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=review_document())]) as model, ForgeServer() as forge:
        forge.state.stall_seconds = 60
        write_config(repo.path, "openai", fast_openai(model.url))
        config = (repo.path / ".reviewgate.toml").read_text()
        write_base_config(repo.path, config + "\n[github]\nretry_backoff = 0.01\npublish_timeout = 5\n")
        gate = subprocess.Popen(
            [sys.executable, "-m", "reviewgate", "run", "--base", "main"],
            cwd=repo.path, env=clean_environment({**KEY, **github_environment(forge, tmp_path)}),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        _wait_until(gate, lambda: forge.state.requests, "the first (hung) forge call")
        elapsed, output = _stop(gate, signal.SIGTERM)
        assert model.posts() == []
    assert gate.returncode == 3, output
    assert elapsed < 5 + STOP_SECONDS
    _assert_blocked_for_this_head(repo.path, git(repo.path, "rev-parse", "HEAD"), signal.SIGTERM)
