"""The chunk cache: a push pays only for the chunks whose prompt is new; reruns pay nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from testing.cli import run_cli
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Recorded, Reply, finding, review_document
from testing.repo import commit, git, make_repo

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}
REVIEW = review_document([finding("app/calc.py", 7, title="Division by zero")], "request_changes")
# The gate's own outputs stay out of the commits these tests make between runs.
IGNORED = {".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}


def _config(repo: Path, server: ModelServer, **options: object) -> None:
    write_config(repo, "openai", fast_openai(server.url, **options), cache=True)


def _files_sent(post: Recorded) -> set[str]:
    return set(re.findall(r"=== FILE (\S+)", post.body["messages"][1]["content"]))


def _review(repo: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Run the gate; its exit code, report.json and summary.md, read before the next run."""
    result = run_cli(repo, "run", "--base", "main", *args, env=KEY)
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    return result.returncode, result.report(), summary


def _chunk_entries(cache: Path) -> list[Path]:
    return sorted((cache / "openai" / "chunks").glob("*.json"))


def test_rerun_and_identical_tree_reuse_the_review(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, IGNORED)
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        first = _review(repo.path)
        # Prices and retries change what a review costs, not what the model answers.
        _config(repo.path, server, input_price=2.0, output_price=8.0, retries=1)
        second = _review(repo.path)
        git(repo.path, "commit", "-q", "--allow-empty", "-m", "new SHA, same tree")
        third = _review(repo.path)
    assert (first[0], second[0], third[0]) == (1, 1, 1)
    assert len(server.posts()) == 1
    assert first[1]["reviewers"][0]["chunks"]["reviewed"] == 1
    for _, report, summary in (second, third):
        outcome = report["reviewers"][0]
        assert outcome["cached"] is True and outcome["usage"]["requests"] == 0
        assert outcome["chunks"] == {"reviewed": 0, "reused": 1, "saved": {
            "requests": 1, "input_tokens": 1000, "output_tokens": 100, "cost": 0.0028}}
        assert report["findings"] == first[1]["findings"]
        assert ("0 chunk(s) reviewed, 1 reused from the cache, which saved 1 request(s), 1,000 input and 100 "
                "output tokens (about $0.0028)") in summary
    stored = _chunk_entries(repo.path / ".reviewgate-cache")
    assert len(stored) == 1 and json.loads(stored[0].read_text().rsplit("\n", 2)[0])["usage"]["requests"] == 1
    assert server.url not in stored[0].read_text()  # the settings are in the key as a digest only


def test_changed_settings_or_tree_miss(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, IGNORED)
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        run_cli(repo.path, "run", "--base", "main", env=KEY)
        _config(repo.path, server, temperature=0.5)
        run_cli(repo.path, "run", "--base", "main", env=KEY)
        (repo.path / "app" / "calc.py").write_text("def add(a, b):\n    return b + a\n", encoding="utf-8")
        git(repo.path, "commit", "-q", "-am", "a different tree")
        run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert len(server.posts()) == 3


def test_blocked_chunks_are_never_stored(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, IGNORED)
    with ModelServer(
        [Reply(status=500), Reply(status=500), Reply(status=500), Reply(review=REVIEW)]
    ) as server:
        _config(repo.path, server)
        blocked = _review(repo.path)
        assert not _chunk_entries(repo.path / ".reviewgate-cache")
        retried = _review(repo.path)
    assert blocked[0] == 3 and retried[0] == 1
    assert retried[1]["reviewers"][0]["cached"] is False
    assert len(server.posts()) == 4


def test_cache_dir_flag_wins_over_the_file(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, IGNORED)
    elsewhere = tmp_path / "ci-cache"
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        run_cli(repo.path, "run", "--base", "main", "--cache-dir", str(elsewhere), env=KEY)
    assert _chunk_entries(elsewhere)
    assert not (repo.path / ".reviewgate-cache").exists()


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, IGNORED)
    with ModelServer([Reply(review=REVIEW)]) as server:
        _config(repo.path, server)
        run_cli(repo.path, "run", "--base", "main", env=KEY)
        for entry in _chunk_entries(repo.path / ".reviewgate-cache"):
            entry.write_text("{not json", encoding="utf-8")
        again = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert again.returncode == 1 and len(server.posts()) == 2


def _module(name: str, lines: int) -> str:
    return f"def {name}_entry(value):\n" + "".join(f"    value = value + {index}\n" for index in range(lines)) + (
        "    return value\n")


def test_a_second_push_sends_only_the_chunks_of_the_changed_file(tmp_path: Path) -> None:
    """Three files, three chunks asked in one request; a new commit changes one file: one
    request, holding that file only, and the summary says the other two were reused, with their
    shares of the first request's cost. The same head again: no request."""
    branch = {"api/orders.py": _module("orders", 6), "web/pages.py": _module("pages", 6),
              "jobs/tasks.py": _module("tasks", 6)}
    repo = make_repo(tmp_path, {"README.md": "base\n", **IGNORED}, branch)
    on_pages = review_document([finding("web/pages.py", 3, title="Pages adds without a bound")])
    with ModelServer([Reply(review=on_pages)]) as server:
        _config(repo.path, server)
        first = _review(repo.path)
        assert len(server.posts()) == 1
        assert _files_sent(server.posts()[0]) == set(branch)
        commit(repo.path, {"web/pages.py": _module("pages", 8)}, "second push: one file")
        second = _review(repo.path)
        assert len(server.posts()) == 2
        assert _files_sent(server.posts()[1]) == {"web/pages.py"}
        third = _review(repo.path)
    assert len(server.posts()) == 2, "the same head again must cost no request"
    assert (first[0], second[0], third[0]) == (1, 1, 1)
    outcome = second[1]["reviewers"][0]
    assert outcome["usage"]["requests"] == 1
    assert outcome["chunks"]["reviewed"] == 1 and outcome["chunks"]["reused"] == 2
    saved = outcome["chunks"]["saved"]
    # api/ was the first request's first chunk (it counts the request); jobs/ shares its tokens.
    assert saved["requests"] == 1 and 500 < saved["input_tokens"] < 1000 and 50 < saved["output_tokens"] < 100
    assert (f"1 chunk(s) reviewed, 2 reused from the cache, which saved 1 request(s), {saved['input_tokens']:,} "
            f"input and {saved['output_tokens']} output tokens") in second[2]
    # Every stored share of the first request adds up to what it cost.
    assert third[1]["reviewers"][0]["chunks"] == {"reviewed": 0, "reused": 3, "saved": {
        "requests": 2, "input_tokens": saved["input_tokens"] + 1000, "output_tokens": saved["output_tokens"] + 100,
        "cost": None}}
    # The finding on web/pages.py keeps its id in every round: the same code, the same words.
    assert {report["findings"][0]["id"] for _, report, _ in (first, second, third)} == {
        first[1]["findings"][0]["id"]}


def test_a_failed_request_leaves_all_its_chunks_unreviewed_and_they_are_asked_again(tmp_path: Path) -> None:
    """The three chunks share one request; it fails every retry: the review is blocked, all three
    are counted as failed and none is stored, so the next run asks for all three again (one
    request), stores them, and the run after asks nothing."""
    branch = {"api/orders.py": _module("orders", 6), "jobs/tasks.py": _module("tasks", 6),
              "web/pages.py": _module("pages", 6)}
    repo = make_repo(tmp_path, {"README.md": "base\n", **IGNORED}, branch)
    fine = Reply(review=review_document())
    with ModelServer([Reply(status=500), Reply(status=500), Reply(status=500), fine]) as server:
        _config(repo.path, server)
        blocked = _review(repo.path)
        assert not _chunk_entries(repo.path / ".reviewgate-cache")
        asked = len(server.posts())
        retried = _review(repo.path)
        again = _review(repo.path)
    assert (blocked[0], retried[0], again[0]) == (3, 0, 0)
    assert "0 chunk(s) reviewed, 0 reused from the cache, 3 failed" in blocked[2]
    assert "HTTP 500: scripted HTTP 500; gave up after 3 attempt(s)" in blocked[1]["reviewers"][0]["reason"]
    assert "more request(s) failed" not in blocked[1]["reviewers"][0]["reason"]  # one request, one reason
    assert asked == 3 and len(server.posts()) == 4
    assert _files_sent(server.posts()[3]) == set(branch)
    assert len(_chunk_entries(repo.path / ".reviewgate-cache")) == 3
    assert again[1]["reviewers"][0]["chunks"]["reused"] == 3
