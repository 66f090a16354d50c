"""A base that names nothing: the error lists the branches that exist, and gives CI checkout
advice only when the run is in CI. Repositories whose default branch is `master`, as half of
the world's are."""

from __future__ import annotations

from pathlib import Path

from testing.ci import shallow_clone
from testing.cli import run_cli
from testing.repo import commit, git


def master_repo(root: Path) -> Path:
    """`master` (the default), `develop` and `release`, with `feature` checked out."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "master")
    commit(repo, {"app.py": "x = 1\n"}, "base")
    git(repo, "branch", "release")
    git(repo, "branch", "develop")
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, {"app.py": "x = 2\n"}, "feature work")
    return repo


def error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("reviewgate: error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def test_on_a_laptop_the_error_lists_the_branches_likeliest_first_and_gives_no_ci_advice(tmp_path: Path) -> None:
    repo = master_repo(tmp_path)
    result = run_cli(repo, "run", "--base", "main")
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert "'main' (from --base)" in line
    assert "branches here: master, develop, feature, release; pass one with --base" in line
    assert "fetch-depth" not in line and "GIT_DEPTH" not in line
    assert not (repo / ".reviewgate" / "report.json").exists()


def test_in_github_actions_the_error_adds_the_checkout_advice(tmp_path: Path) -> None:
    repo = master_repo(tmp_path)
    result = run_cli(repo, "freeze", "--base", "main", env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert "branches here: master, develop" in line
    assert line.endswith("set `fetch-depth: 0` on actions/checkout")
    assert "GIT_DEPTH" not in line


def test_in_gitlab_ci_the_error_names_gitlabs_variable(tmp_path: Path) -> None:
    repo = master_repo(tmp_path)
    result = run_cli(repo, "freeze", "--base", "main", env={"GITLAB_CI": "true"})
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert "branches here: master" in line and "GIT_DEPTH: 0" in line and "fetch-depth" not in line


def test_a_single_branch_clone_lists_the_branches_origin_has(tmp_path: Path) -> None:
    upstream = master_repo(tmp_path / "upstream")
    clone = shallow_clone(upstream, tmp_path / "clone", "feature")
    result = run_cli(clone, "run", "--base", "main")
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert "neither a local ref nor a branch or tag on origin" in line
    assert "branches here: master, develop, feature, release" in line


def test_without_base_the_default_branch_master_is_found_by_itself(tmp_path: Path) -> None:
    repo = master_repo(tmp_path)
    result = run_cli(repo, "run")
    assert result.returncode == 0, result.stderr
    target = result.report()["target"]
    assert (target["base_ref"], target["base_source"]) == ("master", "default (master: origin/HEAD is not set)")
