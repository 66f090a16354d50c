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


def _trunk_clone(root: Path) -> Path:
    """A clone of a repository whose default branch is `trunk`, with origin/HEAD not recorded (a
    clone made by `git init` + `git remote add` + `git fetch`, or after `git remote set-head -d`)."""
    upstream = root / "upstream"
    upstream.mkdir(parents=True)
    git(upstream, "init", "-q", "-b", "trunk")
    commit(upstream, {"app.py": "x = 1\n"}, "base")
    clone = root / "clone"
    git(root, "clone", "-q", str(upstream), str(clone))
    git(clone, "remote", "set-head", "origin", "-d")
    git(clone, "checkout", "-q", "-b", "feature")
    commit(clone, {"app.py": "x = 2\n"}, "feature work")
    return clone


def test_a_trunk_default_without_origin_head_is_asked_of_origin(tmp_path: Path) -> None:
    clone = _trunk_clone(tmp_path)
    result = run_cli(clone, "run")
    assert result.returncode == 0, result.stderr
    target = result.report()["target"]
    assert target["base_ref"] == "trunk"
    assert target["base_source"] == "origin's default branch (trunk, asked origin: origin/HEAD is not set here)"


def test_without_any_default_branch_the_error_is_a_usage_error_suggesting_the_branch_there_is(tmp_path: Path) -> None:
    clone = _trunk_clone(tmp_path)
    git(clone, "remote", "remove", "origin")
    result = run_cli(clone, "run")
    assert result.returncode == 2, result.stderr
    line = error_line(result.stderr)
    assert line.endswith("no default branch to review against: origin/HEAD is not set and none of origin/main, "
                         "origin/master, main, master exists; pass --base trunk"), line


def test_a_mistyped_base_behind_an_unreachable_origin_is_named_with_the_branches_there_are(tmp_path: Path) -> None:
    repo = master_repo(tmp_path)
    gone = tmp_path / "gone.git"
    git(repo, "remote", "add", "origin", str(gone))
    result = run_cli(repo, "run", "--base", "mastre")
    assert result.returncode == 3, result.stderr  # origin might have it: not reviewed, never a usage error
    line = error_line(result.stderr)
    assert line.startswith(f"reviewgate: error: cannot reach remote origin ({gone}) to fetch 'mastre' (from --base), "
                           f"which is not a local ref: '{gone}' does not appear to be a git repository; "), line
    assert line.endswith("did you mean 'master'? branches here: master, develop, feature, release; "
                         "pass one with --base"), line


def test_a_mistyped_base_gets_the_closest_branch_suggested(tmp_path: Path) -> None:
    repo = master_repo(tmp_path)
    result = run_cli(repo, "run", "--base", "devlop")
    assert result.returncode == 2
    assert "did you mean 'develop'? branches here:" in error_line(result.stderr)


def test_an_origin_head_pointing_at_a_missing_branch_is_not_taken_for_the_base(tmp_path: Path) -> None:
    """origin/HEAD names origin/trunk, which this clone no longer has: origin is asked instead of
    failing on a ref that names nothing."""
    clone = _trunk_clone(tmp_path)
    git(clone, "remote", "set-head", "origin", "trunk")
    git(clone, "update-ref", "-d", "refs/remotes/origin/trunk")
    git(clone, "branch", "-D", "trunk")
    result = run_cli(clone, "run")
    assert result.returncode == 0, result.stderr
    target = result.report()["target"]
    assert target["base_ref"] == "trunk" and "asked origin" in target["base_source"], target
    assert any("refs/remotes/origin/trunk" in fetch for fetch in target["shallow_fetches"]), target
