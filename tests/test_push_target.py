"""Pushes are judged against the target branch: real repositories with a bare origin, CI
checkouts cloned from it at depth 1, GitHub push events and GitLab branch pipelines, and the
forge stand-in for the check run a push completes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testing.ci import bare_origin, github_env, load_payload, push_payload, shallow_clone
from testing.cli import CliResult, run_cli
from testing.forge_server import ForgeServer, conformance_dir, github_environment
from testing.repo import commit, git, make_repo

# The target side's policy: the defaults, written down so the target side has a config (else
# the branch's first config would be used, docs/security.md).
TARGET_CONFIG = "[review]\n"
RELAXED_CONFIG = "[review]\nfail_on = []\n"
# A change the built-in reviewer blocks under the default fail_on.
BLOCKED_CHANGE = {"repro/case.txt": "x\n"}

needs_conformance = pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")


def _run_push(origin: Path, directory: Path, server: ForgeServer, payload: dict[str, Any]) -> CliResult:
    """`reviewgate run` as a GitHub `push` job: a depth-1 checkout of the pushed branch."""
    branch = str(payload["ref"]).removeprefix("refs/heads/")
    directory.mkdir()
    clone = shallow_clone(origin, directory / "clone", branch)
    env = {**github_environment(server, directory, number=None),
           **github_env(directory, "push", payload, GITHUB_SHA=str(payload["after"]))}
    return run_cli(clone, "run", "--no-verify", env=env)


def _conclusion(server: ForgeServer, head: str) -> str | None:
    runs = [run for run in server.state.check_runs.values() if run["head_sha"] == head]
    assert len(runs) == 1, runs
    return runs[0]["conclusion"]  # type: ignore[no-any-return]


@needs_conformance
def test_a_push_that_relaxes_the_policy_cannot_approve_the_next_push(tmp_path: Path) -> None:
    """Push 1 sets `fail_on = []` and blocks; push 2 adds only a README: it is still judged
    against main, under main's policy, and its check run is not `success`."""
    made = make_repo(tmp_path, {"app.py": "x = 1\n", ".reviewgate.toml": TARGET_CONFIG})
    main = made.base_sha
    push1 = commit(made.path, {".reviewgate.toml": RELAXED_CONFIG, **BLOCKED_CHANGE}, "push 1")
    origin = bare_origin(made.path)
    with ForgeServer() as server:
        first = _run_push(origin, tmp_path / "push1", server, push_payload("feature", "0" * 40, push1))
        push2 = commit(made.path, {"README.md": "hello\n"}, "push 2: docs only")
        git(made.path, "push", "-q", "origin", "feature")
        second = _run_push(origin, tmp_path / "push2", server, push_payload("feature", push1, push2))
        assert first.returncode == 1, first.stderr
        assert _conclusion(server, push1) == "failure"
        assert second.returncode == 1, second.stderr
        assert _conclusion(server, push2) == "failure"
    report = second.report()
    assert report["policy"]["commit"] == main
    assert (report["target"]["base_ref"], report["target"]["merge_base"]) == ("origin/main", main)
    assert "repository.default_branch" in report["target"]["base_source"]
    assert {item["path"] for item in report["target"]["files"]} >= {"repro/case.txt", "README.md"}
    # The single-branch checkout lacked main: the gate fetched it.
    assert any("refs/heads/main" in item for item in report["target"]["shallow_fetches"])


@needs_conformance
def test_a_forced_push_to_the_default_branch_is_judged_from_its_previous_tip(tmp_path: Path) -> None:
    """A force-push that rewrites main: the change is everything since the merge base of `before`
    and `after` (a commit of main's own history, where the policy is read), never the empty
    diff of main against itself."""
    made = make_repo(tmp_path, {"app.py": "x = 1\n", ".reviewgate.toml": TARGET_CONFIG})
    git(made.path, "checkout", "-q", "main")
    before = commit(made.path, {"app.py": "x = 2\n"}, "main moves on")
    origin = bare_origin(made.path)
    git(made.path, "reset", "-q", "--hard", made.base_sha)
    after = commit(made.path, {".reviewgate.toml": RELAXED_CONFIG, **BLOCKED_CHANGE}, "rewritten main")
    git(made.path, "push", "-q", "--force", "origin", "main")
    with ForgeServer() as server:
        result = _run_push(origin, tmp_path / "forced", server, push_payload("main", before, after, forced=True))
        assert result.returncode == 1, result.stderr
        assert _conclusion(server, after) == "failure"
    report = result.report()
    assert (report["target"]["base_sha"], report["target"]["merge_base"]) == (before, made.base_sha)
    assert report["policy"]["commit"] == made.base_sha
    assert "forced" in report["target"]["base_source"]


def test_a_gitlab_branch_pipeline_is_judged_against_the_default_branch(tmp_path: Path) -> None:
    """The second pipeline of a branch (CI_COMMIT_BEFORE_SHA is its first push) reads the policy
    at the merge base with CI_DEFAULT_BRANCH and reviews the whole branch."""
    made = make_repo(tmp_path, {"app.py": "x = 1\n", ".reviewgate.toml": TARGET_CONFIG})
    push1 = commit(made.path, {".reviewgate.toml": RELAXED_CONFIG, **BLOCKED_CHANGE}, "push 1")
    push2 = commit(made.path, {"README.md": "hello\n"}, "push 2: docs only")
    origin = bare_origin(made.path)
    clone = shallow_clone(origin, tmp_path / "clone", "feature")
    variables = load_payload("gitlab_branch.json", base=push1, head=push2)
    result = run_cli(clone, "run", "--no-verify", env=variables)
    assert result.returncode == 1, result.stderr
    report = result.report()
    assert report["policy"]["commit"] == made.base_sha
    assert report["target"]["merge_base"] == made.base_sha
    assert "CI_DEFAULT_BRANCH" in report["target"]["base_source"]


def test_a_deeply_nested_event_file_is_one_clear_error(tmp_path: Path) -> None:
    made = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    event = tmp_path / "event.json"
    depth = 100_000
    event.write_text('{"a": ' * depth + "1" + "}" * depth, encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event)}
    for command in ("freeze", "run"):
        result = run_cli(made.path, command, env=env)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert lines == [f"reviewgate: error: GITHUB_EVENT_PATH ({event}): not valid JSON: nested too deeply to read"]
