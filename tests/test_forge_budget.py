"""Publishing has one budget and recovers what it can: Retry-After on any status, a started check
run always completed, a hung forge costs the budget and no more, a vanished comment made again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reviewgate.forge.http import Budget, ForgeError, RestClient, RetryPolicy
from testing.changes import BLOCKING_CHANGE
from testing.cli import CliResult, run_cli
from testing.forge_server import ForgeServer, conformance_dir, github_environment, gitlab_environment
from testing.repo import make_repo

CHECK_RUNS = r"/check-runs$"
CHECK_RUN = r"/check-runs/\d+$"


def _config(directory: Path, github: str = "", gitlab: str = "") -> Path:
    path = directory / "reviewgate.toml"
    path.write_text(f"[github]\nretry_backoff = 0.01\n{github}\n[gitlab]\nretry_backoff = 0.01\n{gitlab}\n")
    return path


def _repo(tmp_path: Path) -> Path:
    # A query built by formatting: one blocking finding of the builtin reviewer, on a changed line.
    return make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path


def _on_github(repo: Path, tmp_path: Path, server: ForgeServer, github: str = "") -> tuple[CliResult, float]:
    started = time.monotonic()
    result = run_cli(repo, "run", "--no-verify", "--config", str(_config(tmp_path, github=github)),
                     env=github_environment(server, tmp_path), timeout=120)
    return result, time.monotonic() - started


def _summary(result: CliResult) -> str:
    return (result.output_dir / "summary.md").read_text(encoding="utf-8")


def test_retry_after_on_a_503_is_waited_for_and_the_check_run_is_kept(tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.scripted.append(("POST", CHECK_RUNS, 503, {"Retry-After": "2"}, {"message": "maintenance"}))
        result, _ = _on_github(_repo(tmp_path), tmp_path, server)
    assert result.returncode == 1, result.stdout + result.stderr
    first, second = server.state.posts("POST", CHECK_RUNS)[:2]
    assert second.at - first.at >= 1.9  # the forge's 2 s, not the 0.01 s backoff
    [run] = server.state.check_runs.values()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")


def test_a_retry_after_longer_than_the_budget_gives_up_at_once_saying_so() -> None:
    with ForgeServer() as server:
        server.state.scripted.append(("GET", r"/issues/7/comments$", 503, {"Retry-After": "20"}, {"message": "x"}))
        client = RestClient(server.url, {"Authorization": "Bearer t"}, RetryPolicy(0.01, 60.0),
                            budget=Budget(5.0))
        started = time.monotonic()
        with pytest.raises(ForgeError, match=r"asked to wait 20s \(HTTP 503 with Retry-After\), more than the "
                                             r"5s left of the publishing budget \(5s, publish_timeout\)"):
            client.request("GET", "repos/o/r/issues/7/comments")
    assert time.monotonic() - started < 1.5
    assert len(server.state.requests) == 1


@pytest.mark.skipif(conformance_dir() is None, reason="check-run bodies need ../shared/conformance")
def test_a_rejected_annotations_update_still_completes_the_check_run(tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.scripted.append(("PATCH", CHECK_RUN, 422, {}, {"message": "Validation Failed"}))
        result, _ = _on_github(_repo(tmp_path), tmp_path, server)
    assert result.returncode == 1, result.stdout + result.stderr  # the verdict stands
    [run] = server.state.check_runs.values()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert run["annotations"] == []
    assert "annotations were not accepted (PATCH repos/octo/app/check-runs/" in run["output"]["summary"]
    assert "HTTP 422" in run["output"]["summary"]
    assert "::error " in result.stdout  # the annotations went out as workflow commands instead
    assert "annotations were not accepted" in _summary(result)
    assert server.state.schema_errors == []


def test_a_forge_that_never_answers_costs_the_budget_not_minutes(tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.stall_seconds = 120
        result, elapsed = _on_github(_repo(tmp_path), tmp_path, server, github="publish_timeout = 5")
    assert result.returncode == 1, result.stdout + result.stderr
    assert elapsed < 10, f"the verdict took {elapsed:.1f}s with a 5 s publishing budget"
    assert result.report()["verdict"] == "request_changes"
    summary = _summary(result)
    assert "the publishing budget of 5s (publish_timeout) is spent" in summary
    assert "::error " in result.stdout


@pytest.mark.parametrize("value", ['"60"', "0"], ids=["string", "zero"])
def test_a_bad_publish_timeout_is_a_config_error(tmp_path: Path, value: str) -> None:
    with ForgeServer() as server:
        result, _ = _on_github(_repo(tmp_path), tmp_path, server, github=f"publish_timeout = {value}")
        assert server.state.requests == []
    assert result.returncode == 2
    assert "github.publish_timeout: expected a number of at least 1" in result.stderr


def test_a_deleted_summary_comment_is_made_again(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with ForgeServer() as server:
        first, _ = _on_github(repo, tmp_path, server)
        [old] = server.state.comments
        server.state.scripted.append(("PATCH", rf"/issues/comments/{old}$", 404, {}, {"message": "Not Found"}))
        second, _ = _on_github(repo, tmp_path, server)
    assert (first.returncode, second.returncode) == (1, 1)
    assert len(server.state.posts("POST", r"/issues/7/comments$")) == 2
    summary = _summary(second)
    assert "The PR comment had been deleted since it was last written; a new one was made." in summary
    assert "may not write" not in summary and "was not published" not in summary


def test_a_deleted_merge_request_note_is_made_again(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = str(_config(tmp_path))
    with ForgeServer() as server:
        run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
        [old] = server.state.notes
        server.state.scripted.append(("PUT", rf"/notes/{old}$", 404, {}, {"message": "404 Not found"}))
        second = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
    assert second.returncode == 1, second.stdout + second.stderr
    assert len(server.state.posts("POST", r"/merge_requests/3/notes$")) == 2
    summary = _summary(second)
    assert "The MR note had been deleted since it was last written; a new one was made." in summary
    assert "api scope" not in summary
