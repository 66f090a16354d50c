"""`reviewgate doctor` on the forge: a token that reaches the repository, or a note on what
publishing falls back to without one. Against the local GitHub and GitLab stand-in."""

from __future__ import annotations

from pathlib import Path

from testing.cli import run_cli
from testing.forge_server import ForgeServer, github_environment, gitlab_environment
from testing.repo import make_repo


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"}).path


def test_a_github_token_that_reaches_the_repository(tmp_path: Path) -> None:
    with ForgeServer() as server:
        result = run_cli(_repo(tmp_path), "doctor", "--base", "main", env=github_environment(server, tmp_path))
    assert result.returncode == 0, result.stdout
    assert "ok: the GitHub token reaches octo/app; publishing needs checks: write" in result.stdout


def test_no_github_token_is_a_note_not_a_problem(tmp_path: Path) -> None:
    with ForgeServer() as server:
        env = {key: value for key, value in github_environment(server, tmp_path).items() if key != "GITHUB_TOKEN"}
        result = run_cli(_repo(tmp_path), "doctor", "--base", "main", env=env)
    assert result.returncode == 0
    assert "note: GITHUB_TOKEN is not set (input github-token): findings are annotated with workflow commands" in (
        result.stdout)


def test_a_github_api_that_refuses_the_token_is_a_problem(tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.scripted.append(("GET", r"^/repos/octo/app$", 401, {}, {"message": "Bad credentials"}))
        result = run_cli(_repo(tmp_path), "doctor", "--base", "main", env=github_environment(server, tmp_path))
    assert result.returncode == 3
    assert "problem: the GitHub token cannot read octo/app" in result.stdout


def test_gitlab_token_and_job_token(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with ForgeServer() as server:
        with_token = run_cli(repo, "doctor", "--base", "main", env=gitlab_environment(server))
        job_only = run_cli(repo, "doctor", "--base", "main",
                           env=gitlab_environment(server, token=None, job_token="job"))
    assert with_token.returncode == 0 and "ok: GITLAB_TOKEN works as @" in with_token.stdout
    assert job_only.returncode == 0 and "note: GITLAB_TOKEN is not set: the merge request note is skipped" in (
        job_only.stdout)


def test_outside_ci_nothing_is_published(tmp_path: Path) -> None:
    result = run_cli(_repo(tmp_path), "doctor", "--base", "main")
    assert result.returncode == 0
    assert "ok: not in GitHub Actions or GitLab CI" in result.stdout
