"""Run the gate on one merged PR the way a GitHub pull_request run would: a detached checkout of
the PR's head, the event file naming base and head, GITHUB_HEAD_REF naming the branch, no token
and no repository (so nothing is published), the builtin reviewer, no verify."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.history_prs import PullRequest, git_output

# Enough for a finding's whole evidence (a tests finding lists up to six items): a block is judged
# from its record, and a body cut at 300 characters left most of the evidence out.
BODY_LIMIT = 2000
STDERR_TAIL = 2000
ABORT_GRACE_SECONDS = 5.0
# Variables of the machine running the benchmark that would change what the gate does or where
# it writes: CI detection, forge tokens, model keys. The runs see only the pull_request facts.
_DROPPED_PREFIXES = ("GITHUB_", "GITLAB_", "CI_", "RUNNER_", "REVIEWGATE_", "INPUT_")
_DROPPED_NAMES = {"CI", "GITLAB_CI", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYTHONPATH"}


def shared_clone(repo: Path, into: Path) -> Path:
    """A clone that borrows the repository's objects (nothing in `repo` changes); worktrees of
    it hold each run's checkout."""
    clone = into / "clone"
    subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(repo), str(clone)],
                   capture_output=True, check=True)
    return clone


def gate_environment_for_local_run(gate_path: Path) -> dict[str, str]:
    """This machine's variables without those that would change what the gate does, running `gate_path`."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(_DROPPED_PREFIXES) and name not in _DROPPED_NAMES}
    env.update({
        "PYTHONPATH": str(gate_path),
        "PYTHONFAULTHANDLER": "1",  # a run killed at the timeout leaves its stack in stderr
    })
    return env


def gate_environment(event_path: Path, request: PullRequest, gate_path: Path) -> dict[str, str]:
    env = gate_environment_for_local_run(gate_path)
    env.update({
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_SHA": request.head,
        "GITHUB_HEAD_REF": request.head_ref or "",
    })
    return env


def pull_request_event(request: PullRequest) -> dict[str, Any]:
    """The parts of GitHub's pull_request payload the gate reads (ci/events.py)."""
    repo = {"full_name": "history/benchmark"}
    return {
        "number": request.number,
        "pull_request": {
            "number": request.number,
            "base": {"sha": request.base, "ref": "main", "repo": repo},
            "head": {"sha": request.head, "ref": request.head_ref or "", "repo": repo},
        },
        "repository": {"default_branch": "main"},
    }


def _finding_record(finding: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "rule": rule_of(finding),
        "path": finding.get("path"),
        "line": finding.get("line"),
        "end_line": finding.get("end_line"),
        "title": finding.get("title"),
        "body": str(finding.get("body") or "")[:BODY_LIMIT],
        "severity": finding.get("severity"),
        "class": finding.get("class"),
    }


def rule_of(finding: Mapping[str, Any]) -> str:
    return str(finding.get("rule") or finding.get("category") or "unknown")


def _tail(path: Path) -> str:
    try:
        return path.read_bytes()[-STDERR_TAIL:].decode("utf-8", "replace")
    except OSError:
        return ""


def run_bounded(command: list[str], cwd: Path, env: dict[str, str], stdout: Path, stderr: Path,
                 timeout: float) -> int | None:
    """The exit code, or None when the run outlived `timeout` (its whole process group is killed)."""
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # SIGABRT first: with PYTHONFAULTHANDLER the gate prints where it was stuck.
            os.kill(process.pid, signal.SIGABRT)
            try:
                process.wait(timeout=ABORT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # the gate's git children too
            except ProcessLookupError:
                pass  # the whole group already exited on the abort
            process.wait()
            return None


# Adding and removing worktrees of one clone, one at a time: git updates shared admin files.
_WORKTREES = threading.Lock()


def review_pull_request(clone: Path, repo_name: str, request: PullRequest, gate_python: str,
                        gate_path: Path, timeout: float) -> dict[str, Any]:
    """One JSON record: the PR, the exit code and verdict, seconds, blocking findings, counts per rule."""
    record: dict[str, Any] = {"repo": repo_name, "pr": request.number, **asdict(request)}
    record.pop("number")
    record.update(blocking=[], located=[], rule_counts={})  # filled from report.json when the run produced one
    work = Path(tempfile.mkdtemp(prefix=f"history-{request.number}-"))
    # Its own name: git keys a worktree's admin directory by the checkout's base name, and two
    # runs adding `checkout` at once raced for `.git/worktrees/checkout`.
    checkout = work / f"checkout-{request.number}"
    try:
        try:
            with _WORKTREES:
                git_output(clone, "worktree", "add", "--quiet", "--detach", str(checkout), request.head)
        except subprocess.CalledProcessError as error:
            return {**record, "exit_code": None, "verdict": "error", "seconds": 0.0,
                    "error": f"checkout failed: {error.stderr.decode('utf-8', 'replace')[-STDERR_TAIL:]}"}
        event_path = work / "event.json"
        event_path.write_text(json.dumps(pull_request_event(request)), encoding="utf-8")
        output_dir = work / "out"
        command = [gate_python, "-m", "reviewgate", "run", "--reviewer", "builtin", "--no-verify",
                   "--output-dir", str(output_dir)]
        started = time.monotonic()
        exit_code = run_bounded(command, checkout, gate_environment(event_path, request, gate_path),
                                 work / "stdout", work / "stderr", timeout)
        record["seconds"] = round(time.monotonic() - started, 3)
        record["exit_code"] = exit_code
        report = output_dir / "report.json"
        if exit_code in (0, 1, 3) and report.is_file():
            data = json.loads(report.read_text(encoding="utf-8"))
            findings = data.get("findings") or []
            record["verdict"] = data.get("verdict")
            record["blocking"] = [_finding_record(item) for item in findings if item.get("blocking")]
            # Every finding with a place, at any severity: the SZZ reads which ones sit on a line a later fix changed.
            record["located"] = [_finding_record(item) for item in findings if item.get("path") and item.get("line")]
            record["rule_counts"] = dict(Counter(rule_of(item) for item in findings))
            record["added_lines"] = sum(int(item.get("added_lines") or 0)
                                        for item in data.get("target", {}).get("files", []))
            if exit_code == 3:
                record["error"] = "; ".join(data.get("reasons") or []) or "blocked (exit 3)"
        else:
            record["verdict"] = "error"
            why = f"timed out after {timeout:.0f}s" if exit_code is None else f"exit {exit_code}"
            record["error"] = f"{why}: {_tail(work / 'stderr')}"
    finally:
        with _WORKTREES:
            subprocess.run(["git", "-C", str(clone), "worktree", "remove", "--force", str(checkout)],
                           capture_output=True, check=False)
        shutil.rmtree(work, ignore_errors=True)
    return record
