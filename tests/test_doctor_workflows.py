"""`reviewgate doctor` reads the repository's GitHub workflows and names the file and line to change
when the job that runs the gate checks out one commit or lacks the permissions publishing needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.ci.workflow_file import WorkflowSyntaxError, compose, runs_the_gate, uses_the_action
from testing.cli import run_cli
from testing.repo import commit, make_repo

GOOD = """\
on: [pull_request]
permissions: {contents: read, checks: write, pull-requests: write}
jobs:
  reviewgate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with: {fetch-depth: 0}
      - uses: reviewgate/reviewgate@v0
"""

SHALLOW = """\
on: pull_request
permissions:
  contents: read
  checks: write
jobs:
  review:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: reviewgate/reviewgate@v0
        with:
          reviewers: builtin
"""

DEPTH_ONE = """\
on: pull_request
permissions: write-all
jobs:
  gate:
    runs-on: ubuntu-latest
    permissions: read-all
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 1
      - run: pip install reviewgate-ci && reviewgate run
"""

NO_PERMISSIONS = """\
on: pull_request
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: "0"
      - run: |
          pipx run --spec reviewgate-ci reviewgate run --output-dir out
"""

NO_CHECKOUT = """\
on: pull_request
permissions: {checks: write, pull-requests: write}
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v5
      - run: python -m reviewgate run
"""

BROKEN = """\
on: pull_request
jobs:
  gate:
    steps:
      - uses: actions/checkout@v4
       with: {fetch-depth: 0}
"""

UNRELATED = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: make test
"""


def _repo_with(tmp_path: Path, workflows: dict[str, str]) -> Path:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"}).path
    commit(repo, {f".github/workflows/{name}": text for name, text in workflows.items()}, "workflows")
    return repo


def _lines(output: str, kind: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(f"{kind}: .github/")]


def test_a_job_that_checks_out_the_history_and_may_publish_is_ok(tmp_path: Path) -> None:
    result = run_cli(_repo_with(tmp_path, {"review.yml": GOOD, "test.yaml": UNRELATED}), "doctor", "--base", "main")
    assert result.returncode == 0, result.stdout
    assert _lines(result.stdout, "ok") == [
        "ok: .github/workflows/review.yml:4: job reviewgate runs reviewgate with fetch-depth: 0 and "
        "checks: write, pull-requests: write"
    ]
    assert not _lines(result.stdout, "problem") and not _lines(result.stdout, "note")


def test_each_gap_is_one_line_naming_the_file_and_the_line_to_change(tmp_path: Path) -> None:
    repo = _repo_with(tmp_path, {
        "a-shallow.yml": SHALLOW, "b-depth.yml": DEPTH_ONE, "c-open.yaml": NO_PERMISSIONS,
        "d-nocheckout.yml": NO_CHECKOUT, "e-broken.yml": BROKEN, "f-unrelated.yml": UNRELATED,
    })
    result = run_cli(repo, "doctor", "--base", "main")
    assert result.returncode == 2, result.stdout
    assert _lines(result.stdout, "problem") == [
        "problem: .github/workflows/a-shallow.yml:9: job review: actions/checkout fetches one commit (fetch-depth "
        "defaults to 1); add `with: {fetch-depth: 0}` to the step at line 9 so the merge base is in the clone",
        "problem: .github/workflows/a-shallow.yml:2: job review: the workflow's permissions lack pull-requests: write "
        "(the check run needs checks: write, the pull request comment pull-requests: write); add pull-requests: write "
        "under `permissions:` at line 2",
        "problem: .github/workflows/b-depth.yml:10: job gate: fetch-depth: 1 may leave the merge base out of the "
        "clone; change it to 0 at line 10",
        "problem: .github/workflows/b-depth.yml:6: job gate: the job's permissions lack checks: write and "
        "pull-requests: write (the check run needs checks: write, the pull request comment pull-requests: write); "
        "add checks: write and pull-requests: write under `permissions:` at line 6",
        "problem: .github/workflows/d-nocheckout.yml:8: job gate: no actions/checkout step before the reviewgate "
        "step; add `- uses: actions/checkout@v4` with `with: {fetch-depth: 0}` before line 8",
        "problem: .github/workflows/e-broken.yml:6: not valid YAML (expected <block end>, but found '<block mapping start>'); "
        "GitHub cannot run this workflow",
    ]
    assert _lines(result.stdout, "note") == [
        "note: .github/workflows/c-open.yaml:3: job gate: neither the workflow nor the job declares permissions, "
        "so the token gets the repository's default ones, read-only in many organizations; add "
        "`permissions: {contents: read, checks: write, pull-requests: write}` to the job at line 3",
    ]
    assert "Traceback" not in result.stdout + result.stderr


def test_only_a_missing_permissions_key_is_a_note_and_exits_zero(tmp_path: Path) -> None:
    result = run_cli(_repo_with(tmp_path, {"gate.yml": NO_PERMISSIONS}), "doctor", "--base", "main")
    assert result.returncode == 0, result.stdout
    assert len(_lines(result.stdout, "note")) == 1 and not _lines(result.stdout, "problem")


def test_workflows_that_never_run_the_gate_get_a_note(tmp_path: Path) -> None:
    result = run_cli(_repo_with(tmp_path, {"test.yml": UNRELATED}), "doctor", "--base", "main")
    assert result.returncode == 0, result.stdout
    assert "note: no workflow in .github/workflows runs reviewgate" in result.stdout


def test_a_repository_without_workflows_gets_no_workflow_line(tmp_path: Path) -> None:
    result = run_cli(make_repo(tmp_path, {"app.py": ""}, {"app.py": "x = 1\n"}).path, "doctor", "--base", "main")
    assert result.returncode == 0, result.stdout
    assert "workflow" not in result.stdout


@pytest.mark.parametrize(("script", "runs"), [
    ("reviewgate run", True),
    ("set -e\npip install reviewgate-ci\nreviewgate run --fail-on none", True),
    ("python -m reviewgate run", True),
    ("pipx run --spec reviewgate-ci reviewgate run", True),
    ("reviewgate verify --base main", False),
    ("reviewgate doctor", False),
    ("echo reviewgate-run", False),
    ("pip install reviewgate-ci", False),
])
def test_which_run_scripts_run_the_gate(script: str, runs: bool) -> None:
    assert runs_the_gate(script) is runs


@pytest.mark.parametrize(("uses", "own", "gate"), [
    ("reviewgate/reviewgate@v0", False, True),
    ("ReviewGate/reviewgate@0123abc", False, True),
    ("docker://ghcr.io/reviewgate/reviewgate:0.1.0", False, True),
    ("reviewgate/reviewgate-extra@v1", False, False),
    ("./", False, False),
    ("./", True, True),
    ("actions/checkout@v4", True, False),
])
def test_which_steps_use_the_action(uses: str, own: bool, gate: bool) -> None:
    assert uses_the_action(uses, own) is gate


@pytest.mark.parametrize(("source", "line", "problem"), [
    ("on: push\njobs: \x01\n", 2, "character #x0001 is not allowed in YAML"),
    ("on: push\n---\non: pull_request\n", 2, "but found another document"),
    ("jobs: [a,\n", 2, "expected the node content, but found '<stream end>'"),
    ("jobs: *undefined\n", 1, "found undefined alias 'undefined'"),
])
def test_malformed_yaml_is_one_problem_with_its_line(source: str, line: int, problem: str) -> None:
    with pytest.raises(WorkflowSyntaxError) as raised:
        compose(source)
    assert (raised.value.line, raised.value.problem) == (line, problem)
