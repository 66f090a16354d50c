"""The PR number and head from captured GitHub event payloads, and where the check run goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.ci import detect
from testing.ci import github_env
from testing.forge_server import ForgeServer, conformance_dir, run_on_github
from testing.repo import git, make_repo

HEAD = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("name", "payload", "number", "head"),
    [
        ("pull_request", {"action": "synchronize", "pull_request": {"number": 12, "head": {"sha": HEAD}}}, 12, HEAD),
        ("issue_comment", {"action": "created", "issue": {"number": 5, "pull_request": {"url": "x"}},
                           "comment": {"body": "VERIFY:"}}, 5, None),
        ("issue_comment", {"action": "created", "issue": {"number": 5}}, None, None),  # a plain issue
        ("push", {"ref": "refs/heads/main", "after": HEAD}, None, HEAD),
    ],
)
def test_the_pull_request_number_and_head_from_events(
    tmp_path: Path, name: str, payload: dict[str, object], number: int | None, head: str | None
) -> None:
    context = detect(github_env(tmp_path, name, payload))
    assert (context.pull_request_number, context.head_sha) == (number, head)


@pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")
def test_the_check_run_goes_on_the_pr_head_from_the_event(tmp_path: Path) -> None:
    made = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    # A pull_request job checks out a test merge commit, not the PR head: stand on another commit.
    git(made.path, "checkout", "-q", "--detach", "main")
    with ForgeServer() as server:
        result = run_on_github(made.path, tmp_path, server, head_sha=made.head_sha)
    assert result.returncode == 0, result.stderr
    check_run = next(iter(server.state.check_runs.values()))
    assert check_run["head_sha"] == made.head_sha
    assert result.report()["target"]["head_sha"] == made.head_sha
    assert check_run["external_id"].startswith(made.head_sha + ":")


@pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")
def test_a_push_gets_a_check_run_and_no_comment(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"repro/case.txt": "x\n"}).path
    with ForgeServer() as server:
        result = run_on_github(repo, tmp_path, server, number=None)
    assert result.returncode == 1
    assert len(server.state.check_runs) == 1
    assert not any("/issues/" in item.path or "/pulls/" in item.path for item in server.state.requests)
