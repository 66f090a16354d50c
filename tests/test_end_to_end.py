"""The issues' done-when scenarios across stages: a model reviewer, the GitHub stand-in and the
review cache together, each a real server on 127.0.0.1 and the real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.forge_server import ForgeServer, conformance_dir, fast_retry_config, github_environment
from testing.model_repo import calc_repo, fast_openai
from testing.model_server import ModelServer, Reply, finding, review_document

pytestmark = pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")


def _config(directory: Path, server_url: str) -> Path:
    table = "\n".join(f"{key} = {json.dumps(value)}" for key, value in fast_openai(server_url).items())
    reviewer = f'[review]\nreviewers = ["builtin", "openai"]\n\n[reviewer.openai]\n{table}\napi_key_env = "TEST_KEY"\n'
    cache = f'\n[cache]\ndir = "{directory / "cache"}"\n'
    return fast_retry_config(directory, extra=reviewer + cache)


def test_a_second_run_on_the_same_sha_edits_the_comment_and_calls_no_reviewer(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, extra_branch={"tests/test_calc.py": "def test_divide():\n    assert True\n"}).path
    blocking = finding("app/calc.py", 7, title="Division by zero is not handled",
                       body="divide(1, 0) raises ZeroDivisionError in the request handler.")
    with ModelServer([Reply(review=review_document([blocking], verdict="request_changes"))]) as model, \
            ForgeServer() as forge:
        config = _config(tmp_path, model.url)
        env = {**github_environment(forge, tmp_path), "TEST_KEY": "sk-test"}
        first = run_cli(repo, "run", "--no-verify", "--config", str(config), env=env)
        asked = len(model.posts())  # one request: the chunks of app/ and tests/ together
        second = run_cli(repo, "run", "--no-verify", "--config", str(config), env=env)

    assert (first.returncode, second.returncode) == (1, 1), first.stdout + first.stderr
    assert asked == 1 and len(model.posts()) == asked, "the second run must reuse the review, not call the model"
    outcome = {item["reviewer"]: item for item in second.report()["reviewers"]}["openai"]
    assert outcome["cached"] is True
    [comment] = forge.state.comments.values()
    assert comment["body"].startswith("REVIEW: REQUEST CHANGES")
    assert len(forge.state.posts("PATCH", r"/issues/comments/\d+$")) == 1
    [check_run] = forge.state.check_runs.values()
    assert check_run["conclusion"] == "failure"
    assert [(item["path"], item["start_line"]) for item in check_run["annotations"]] == [("app/calc.py", 7)]
    assert forge.state.schema_errors == []


def test_a_model_that_fails_blocks_the_pull_request_check(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, extra_branch={"tests/test_calc.py": "def test_divide():\n    assert True\n"}).path
    with ModelServer([Reply(status=500, body={"error": {"message": "overloaded"}})]) as model, \
            ForgeServer() as forge:
        env = {**github_environment(forge, tmp_path), "TEST_KEY": "sk-test"}
        result = run_cli(repo, "run", "--no-verify", "--config", str(_config(tmp_path, model.url)), env=env)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.report()["verdict"] == "blocked"
    [check_run] = forge.state.check_runs.values()
    assert check_run["conclusion"] == "failure"
    [comment] = forge.state.comments.values()
    assert not comment["body"].startswith("REVIEW: APPROVE")
