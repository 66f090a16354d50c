"""Model requests are bounded: the whole answer within `timeout`, at most `max_answer_bytes`
read, and a repair request that quotes only the start of a bad answer."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from testing.agent_clis import shared_with_the_agent
from testing.cli import clean_environment, run_cli
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Reply, review_document
from testing.verify_app import python_for_the_verify

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}
ROOT = Path(__file__).resolve().parents[1]


def test_an_answer_dripped_a_byte_at_a_time_is_cut_at_the_timeout(tmp_path: Path) -> None:
    """requests' own timeout restarts with every byte; the deadline is for the whole answer."""
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=review_document(), drip_seconds=0.2)]) as server:
        write_config(repo.path, "openai", fast_openai(server.url, timeout=2, retries=0))
        started = time.monotonic()
        result = run_cli(repo.path, "run", "--base", "main", env=KEY, timeout=60)
        elapsed = time.monotonic() - started
    assert result.returncode == 3, result.stdout + result.stderr
    report = result.report()
    reviewed = report["reviewers"][0]["duration_seconds"]
    assert reviewed < 3, f"the request took {reviewed:.1f}s against a 2 s timeout"
    assert elapsed < 20, elapsed  # the whole gate, on a busy machine; the drip alone would take ~100 s
    assert report["verdict"] == "blocked"
    assert "no whole answer within 2s (timeout)" in report["reasons"][0]


MEMORY_PROBE = textwrap.dedent(
    """
    import json, resource, sys
    from reviewgate.reviewers.model.http import RetryPolicy, TransportBlocked, post_json
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        post_json(sys.argv[1], {}, {"x": 1}, timeout=30, policy=RetryPolicy(0), key_variable=None)
        reason = "answered"
    except TransportBlocked as error:
        reason = str(error)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"growth_kib": after - before, "reason": reason}))
    """
)


def test_a_50_mb_answer_is_given_up_past_the_cap_with_memory_bounded(tmp_path: Path) -> None:
    """The answer streams without a Content-Length (the cap cannot be checked up front); the
    reader stops past 4 MiB, so the process never holds the 50 MB."""
    with ModelServer([Reply(oversized_bytes=50 * 1024 * 1024)]) as server:
        probe = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, f"{server.url}/v1/chat/completions"],
            env=clean_environment({"PYTHONPATH": str(ROOT)}), capture_output=True, text=True, timeout=60,
            check=False,
        )
    assert probe.returncode == 0, probe.stderr
    measured = json.loads(probe.stdout)
    assert "larger than the cap of 4,194,304 bytes (max_answer_bytes" in measured["reason"]
    assert measured["growth_kib"] < 24 * 1024, f"peak memory grew {measured['growth_kib']} KiB"


def test_the_cap_is_configurable_and_blocks_the_review(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(oversized_bytes=200_000)]) as server:
        write_config(repo.path, "openai", fast_openai(server.url, max_answer_bytes=100_000))
        result = run_cli(repo.path, "run", "--base", "main", env=KEY)
        assert len(server.posts()) == 1  # asking again would get as much: no retry
    assert result.returncode == 3, result.stdout + result.stderr
    assert "larger than the cap of 100,000 bytes (max_answer_bytes" in result.report()["reasons"][0]


@pytest.mark.parametrize("value", ["4MB", 12], ids=["string", "too-small"])
def test_a_bad_cap_is_a_config_error(tmp_path: Path, value: object) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "openai", fast_openai("http://127.0.0.1:9", max_answer_bytes=value))
    result = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "reviewer.openai.max_answer_bytes: expected a whole number of at least 1024" in result.stderr


def test_the_repair_request_quotes_only_the_start_of_a_bad_answer(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    bad_answer = "This is not the JSON you asked for. " * 3000  # ~108,000 characters
    with ModelServer([Reply(text=bad_answer), Reply(review=review_document())]) as server:
        write_config(repo.path, "openai", fast_openai(server.url))
        result = run_cli(repo.path, "run", "--base", "main", env=KEY)
        posts = server.posts()
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(posts) == 2
    quoted = [item["content"] for item in posts[1].body["messages"] if item["role"] == "assistant"]
    assert len(quoted) == 1 and quoted[0].startswith(bad_answer[:2000])
    assert len(quoted[0]) < 2200, len(quoted[0])
    assert f"{len(bad_answer) - 2000:,} more characters of this answer are not repeated" in quoted[0]


def test_an_agent_that_prints_past_the_cap_is_stopped_and_blocks(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with shared_with_the_agent() as shared:  # as root the agent is another uid: not in tmp_path
        agent = shared / "agent.py"
        agent.write_text("import sys, time\nsys.stdout.write('x' * 2_000_000)\nsys.stdout.flush()\ntime.sleep(60)\n")
        write_config(repo.path, "agent", {"provider": "command", "timeout": 30, "max_answer_bytes": 100_000,
                                          "command": [python_for_the_verify(), str(agent)]})
        result = run_cli(repo.path, "run", "--base", "main", env=KEY, timeout=60)
    assert result.returncode == 3, result.stdout + result.stderr
    report = result.report()
    assert "printed more than the cap of 100,000 bytes (max_answer_bytes); it was stopped" in report["reasons"][0]
    assert report["reviewers"][0]["duration_seconds"] < 10  # stopped, not waited out for 30 s
