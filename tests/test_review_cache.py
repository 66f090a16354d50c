"""The review cache: the same tree and reviewer settings are reviewed once, whatever reruns."""

from __future__ import annotations

import json
from pathlib import Path

from testing.cli import run_cli
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import git

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}
REVIEW = review_document([finding("app/calc.py", 7, title="Division by zero")], "request_changes")


def _config(repo: Path, server: ModelServer, **options: object) -> None:
    write_config(repo, "openai", fast_openai(server.url, **options), cache=True)


def test_rerun_and_identical_tree_reuse_the_review(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        first = run_cli(repo.path, "run", "--base", "main", env=KEY)
        second = run_cli(repo.path, "run", "--base", "main", env=KEY)
        git(repo.path, "commit", "-q", "--allow-empty", "-m", "new SHA, same tree")
        third = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert (first.returncode, second.returncode, third.returncode) == (1, 1, 1), first.stderr + second.stderr
    assert len(server.posts()) == 1
    for result in (second, third):
        outcome = result.report()["reviewers"][0]
        assert outcome["cached"] is True and outcome["usage"]["requests"] == 0
        assert result.report()["findings"] == first.report()["findings"]
    stored = list((repo.path / ".reviewgate-cache" / "openai").glob("*.json"))
    assert len(stored) == 1 and json.loads(stored[0].read_text())["outcome"]["status"] == "ok"


def test_changed_settings_or_tree_miss(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        run_cli(repo.path, "run", "--base", "main", env=KEY)
        _config(repo.path, server, temperature=0.5)
        run_cli(repo.path, "run", "--base", "main", env=KEY)
        (repo.path / "app" / "calc.py").write_text("def add(a, b):\n    return b + a\n", encoding="utf-8")
        git(repo.path, "commit", "-q", "-am", "a different tree")
        run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert len(server.posts()) == 3


def test_blocked_reviews_are_never_stored(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer(
        [Reply(status=500), Reply(status=500), Reply(status=500), Reply(review=REVIEW)]
    ) as server:
        _config(repo.path, server)
        blocked = run_cli(repo.path, "run", "--base", "main", env=KEY)
        retried = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert blocked.returncode == 3 and retried.returncode == 1
    assert retried.report()["reviewers"][0]["cached"] is False
    assert len(server.posts()) == 4


def test_cache_dir_flag_wins_over_the_file(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    elsewhere = tmp_path / "ci-cache"
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        run_cli(repo.path, "run", "--base", "main", "--cache-dir", str(elsewhere), env=KEY)
    assert list((elsewhere / "openai").glob("*.json"))
    assert not (repo.path / ".reviewgate-cache").exists()


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        run_cli(repo.path, "run", "--base", "main", env=KEY)
        for entry in (repo.path / ".reviewgate-cache" / "openai").glob("*.json"):
            entry.write_text("{not json", encoding="utf-8")
        again = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert again.returncode == 1 and len(server.posts()) == 2
