"""The anthropic reviewer against a real local Messages API server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewgate.config import ReviewerSettings
from reviewgate.context import Rejection
from reviewgate.errors import ConfigError
from reviewgate.reviewers import anthropic
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from testing.cli import run_cli
from testing.model_repo import calc_repo, review_request, write_config
from testing.model_server import ModelServer, Recorded, Reply, finding, review_document, verdict
from testing.repo import make_repo

# The second look is tested in test_second_look.py; here one answer per review request.
FAST = {"retries": 2, "retry_base_delay": 0.01, "retry_max_delay": 2.0, "verify_findings": False}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")


def _settings(server: ModelServer, model: str = "test-model", **options: object) -> ReviewerSettings:
    return ReviewerSettings(
        name="claude",
        provider="anthropic",
        model=model,
        base_url=server.url,
        timeout=1.0,
        options={**FAST, **options},
    )


def test_forced_record_review_tool_becomes_findings(tmp_path: Path, key: None) -> None:
    repo = calc_repo(tmp_path)
    review = review_document(
        [finding("app/calc.py", 7, title="Division by zero")],
        "request_changes",
        product_questions=["Should divide round?"],
    )
    with ModelServer([Reply(review=review)]) as server:
        outcome = anthropic.build(_settings(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [(item.path, item.line, item.title) for item in outcome.findings] == [
        ("app/calc.py", 7, "Division by zero")
    ]
    assert outcome.product_questions == ("Should divide round?",)
    assert outcome.usage.requests == 1 and outcome.usage.input_tokens == 1000
    request = server.posts()[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test-not-a-real-key"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["tool_choice"] == {"type": "tool", "name": "record_review"}
    assert request.body["tools"][0]["input_schema"]["required"] == [
        "verdict",
        "summary",
        "findings",
        "product_questions",
    ]


def test_overloaded_then_success(tmp_path: Path, key: None) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(status=529), Reply(review=review_document())]) as server:
        outcome = anthropic.build(_settings(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert len(server.posts()) == 2


def test_refusal_blocks(tmp_path: Path, key: None) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(text="I can't help with that.", stop_reason="refusal")]) as server:
        outcome = anthropic.build(_settings(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.BLOCKED and "refused" in outcome.reason


def test_reproduction_and_rejections_go_inside_the_data(tmp_path: Path, key: None) -> None:
    repo = calc_repo(tmp_path)
    request = review_request(
        repo.path,
        reproduction="divide(1, 0) raised ZeroDivisionError; expected None",
        rejections=(Rejection("app/calc.py", 7, "callers never pass zero"),),
    )
    with ModelServer([Reply(review=review_document())]) as server:
        anthropic.build(_settings(server)).review(request)
    user = server.posts()[0].body["messages"][0]["content"]
    assert "divide(1, 0) raised ZeroDivisionError" in user
    assert "REVIEW-REJECTED: app/calc.py:7 callers never pass zero" in user


def test_secrets_in_the_diff_are_redacted_and_reported(tmp_path: Path, key: None) -> None:
    token = "ghp_" + "a1B2c3D4" * 5
    repo = calc_repo(tmp_path, extra_branch={"app/settings.py": f'TOKEN = "{token}"\n'})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = anthropic.build(_settings(server)).review(review_request(repo.path))
    assert token not in server.posts()[0].text
    assert "[REDACTED GitHub token]" in server.posts()[0].text
    assert any("GitHub token at app/settings.py:1" in note for note in outcome.notes)


def test_withheld_files_never_reach_the_prompt(tmp_path: Path, key: None) -> None:
    repo = calc_repo(
        tmp_path,
        extra_branch={
            "docs/specs/divide.md": "SPEC-MARKER the author's plan\n",
            "docs/plans/divide.md": "PLAN-MARKER\n",
            "notes/RCA-zero.md": "RCA-MARKER\n",
        },
    )
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = anthropic.build(_settings(server)).review(review_request(repo.path))
    text = server.posts()[0].text
    for marker in ("SPEC-MARKER", "PLAN-MARKER", "RCA-MARKER"):
        assert marker not in text
    assert sum("not shown to the reviewer" in note for note in outcome.notes) == 3


def test_governing_docs_and_call_sites_are_context(tmp_path: Path, key: None) -> None:
    """The definition of a symbol the diff calls comes as an excerpt with its line numbers; the
    file beside the changed ones by its name only, its content not sent."""
    helpers = "".join(f"def helper_{index}():\n    return {index}\n\n\n" for index in range(30))
    repo = calc_repo(
        tmp_path,
        extra_base={
            "AGENTS.md": "AGENTS-MARKER: use app/util.py helpers\n",
            "app/use.py": "from app.calc import add\n",
            "lib/shapes.py": helpers + "def scale_shape(shape, factor):\n    return shape * factor\n",
            "app/notes.py": "NEIGHBOUR-CONTENT = 1\n",
        },
        extra_branch={"app/use.py": "from lib.shapes import scale_shape\n\nprint(scale_shape(4, 2))\n"},
    )
    with ModelServer([Reply(review=review_document())]) as server:
        anthropic.build(_settings(server)).review(review_request(repo.path))
    user = server.posts()[0].body["messages"][0]["content"]
    assert "AGENTS-MARKER" in user
    assert "=== CONTEXT lib/shapes.py (definition of scale_shape) ===\n121| def scale_shape(shape, factor):" in user
    assert "helper_3" not in user  # an excerpt, not the whole file
    # app/use.py's chunk lists the files beside it; asked with app/calc.py's chunk, the request
    # leaves out calc.py, whose diff it shows.
    assert "=== CONTEXT app/ (the names of the files beside the changed ones) ===\nnotes.py\nutil.py" in user
    assert "NEIGHBOUR-CONTENT" not in user


def test_anthropic_through_the_cli_exits_one_on_a_blocker(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    review = review_document([finding("app/calc.py", 6, severity="critical", title="Comment hides intent")])
    with ModelServer([Reply(review=review)]) as server:
        write_config(
            repo.path,
            "claude",
            {"provider": "anthropic", "model": "test-model", "base_url": server.url, "timeout": 1, **FAST},
        )
        result = run_cli(repo.path, "run", "--base", "main", env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 1, result.stderr
    assert result.report()["findings"][0]["severity"] == "blocker"  # "critical" normalized


def test_secrets_in_call_sites_are_redacted_with_their_place(tmp_path: Path, key: None) -> None:
    token = "ghp_" + "Z9y8X7w6" * 5
    repo = calc_repo(tmp_path, extra_base={"lib/legacy.py": f'print(divide(1, 2), "{token}")\n'})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = anthropic.build(_settings(server)).review(review_request(repo.path))
    assert "=== CONTEXT lib/legacy.py (a use of divide) ===\\n1| print(divide(1, 2)" in server.posts()[0].text
    assert token not in server.posts()[0].text
    assert any("GitHub token at lib/legacy.py:1" in note for note in outcome.notes)


def test_prompt_cache_tokens_are_counted_and_priced_as_anthropic_prices_them(tmp_path: Path, key: None) -> None:
    """A server reported input_tokens 1 beside 2,480 read from the cache and 300 written to it."""
    repo = calc_repo(tmp_path)
    usage = {"input_tokens": 1, "cache_read_input_tokens": 2480, "cache_creation_input_tokens": 300,
             "output_tokens": 100}
    with ModelServer([Reply(review=review_document(), usage=usage)]) as server:
        outcome = anthropic.build(_settings(server, input_price=3.0, output_price=15.0)).review(
            review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert (outcome.usage.input_tokens, outcome.usage.cached_input_tokens, outcome.usage.cache_write_tokens) == (
        2781, 2480, 300)
    assert outcome.usage.cost == pytest.approx((1 * 3.0 + 2480 * 0.3 + 300 * 3.75 + 100 * 15.0) / 1e6)
    assert outcome.usage.to_json()["cached_input_tokens"] == 2480


def test_an_hour_long_prompt_cache_is_asked_for_and_its_writes_priced_at_twice_the_input(
        tmp_path: Path, key: None) -> None:
    repo = calc_repo(tmp_path)
    usage = {"input_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 2480,
             "output_tokens": 100}
    with ModelServer([Reply(review=review_document(), usage=usage)]) as server:
        default = anthropic.build(_settings(server, input_price=3.0)).review(review_request(repo.path))
        hour = anthropic.build(_settings(server, input_price=3.0, cache_ttl="1h")).review(review_request(repo.path))
    assert default.status is ReviewerStatus.OK and hour.status is ReviewerStatus.OK, (default.reason, hour.reason)
    first, second = server.posts()
    # A run of one request: a 5-minute breakpoint would be a write nothing reads, so none is sent;
    # the hour's is kept for the next pushes.
    assert "cache_control" not in first.body["system"][0]
    assert second.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert default.usage.cost == pytest.approx((1 * 3.0 + 2480 * 3.75) / 1e6)
    assert hour.usage.cost == pytest.approx((1 * 3.0 + 2480 * 6.0) / 1e6)


def _small_window(server: ModelServer, model: str = "test-model") -> ReviewerSettings:
    """About 2,400 estimated tokens of instructions and schema: 3,500 leaves room for one small
    file a request."""
    return _settings(server, model, max_input_tokens=3500, context_chars=0)


def _modules_repo(root: Path, prefix: str) -> Path:
    files = {f"{folder}/{prefix}_{index}.py": "".join(f"value_{index}_{line} = {prefix}({line})\n"
                                                        for line in range(25))
             for folder in ("api", "web") for index in range(3)}
    return make_repo(root, {"README.md": "base\n"}, files).path


def _prefix(post: Recorded) -> str:
    """What comes before the messages in Anthropic's cache order, as sent: the tools, then the
    system block's text (its `cache_control` marks where the cached part ends, it is not part of it)."""
    return json.dumps([post.body["tools"], [block["text"] for block in post.body["system"]]])


def _several_requests(tmp_path: Path, model: str) -> tuple[ReviewerOutcome, list[Recorded]]:
    """A review of six small files in a window that holds one a request, and its requests."""
    repo = _modules_repo(tmp_path, "compute")
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = anthropic.build(_small_window(server, model)).review(review_request(repo))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert len(server.posts()) >= 2
    return outcome, server.posts()


def test_a_run_of_several_requests_marks_its_stable_prefix_for_the_cache(tmp_path: Path, key: None) -> None:
    outcome, posts = _several_requests(tmp_path, "claude-sonnet-4-6")
    assert all(post.body["system"][0]["cache_control"] == {"type": "ephemeral"} for post in posts)
    assert len({_prefix(post) for post in posts}) == 1  # the same bytes, first in each request
    assert len({repr(post.body["messages"]) for post in posts}) == len(posts)
    assert not any("caches at the least" in note for note in outcome.notes)


def test_the_stable_prefix_is_the_same_bytes_for_two_repositories(tmp_path: Path, key: None) -> None:
    first, second = _modules_repo(tmp_path / "one", "compute"), _modules_repo(tmp_path / "two", "render")
    with ModelServer([Reply(review=review_document())]) as server:
        for repo in (first, second):
            anthropic.build(_small_window(server)).review(review_request(repo))
        calc = calc_repo(tmp_path / "three")
        anthropic.build(_settings(server)).review(review_request(calc.path))
    posts = server.posts()
    assert len(posts) >= 5
    assert len({_prefix(post) for post in posts}) == 1
    assert len({repr(post.body["messages"]) for post in posts}) == len(posts)


def test_a_prefix_below_the_models_cache_minimum_gets_no_breakpoint_and_a_note(tmp_path: Path, key: None) -> None:
    outcome, posts = _several_requests(tmp_path, "claude-haiku-4-5")  # a run that would otherwise mark it
    assert not any("cache_control" in post.body["system"][0] for post in posts)
    notes = [note for note in outcome.notes if "caches at the least" in note]
    assert len(notes) == 1, outcome.notes
    assert re.fullmatch(r"the prompt's stable prefix \(tools, schema and system message, about [\d,]+ tokens\) is "
                        r"below the 4,096 tokens claude-haiku-4-5 caches at the least, so every request pays it "
                        r"whole; no cache breakpoint is sent, which would pay a cache write that caches nothing",
                        notes[0])


@pytest.mark.parametrize(("lines", "marked"), [((7,), False), ((6, 7), True)])
def test_second_looks_mark_their_prefix_only_when_more_than_one_reads_it(
        tmp_path: Path, key: None, lines: tuple[int, ...], marked: bool) -> None:
    repo = calc_repo(tmp_path)
    findings = [finding("app/calc.py", line, title=f"Finding on line {line}") for line in lines]
    with ModelServer([Reply(review=review_document(findings))],
                     verdicts=[Reply(review=verdict("refuted", "b is never 0: the caller checks it"))]) as server:
        outcome = anthropic.build(_settings(server, "claude-sonnet-4-6", verify_findings=True)).review(
            review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    looks = server.verification_posts()
    assert len(looks) == len(lines)
    assert ["cache_control" in post.body["system"][0] for post in looks] == [marked] * len(lines)
    assert "cache_control" not in server.review_posts()[0].body["system"][0]  # the review: one request


def _calls_until(rounds: int) -> Callable[[Any], Reply | None]:
    """A stand-in that asks for one `read` a round until `rounds` rounds are answered (or the
    tools are closed), then reviews."""

    def respond(request: Any) -> Reply | None:
        answered = sum(1 for message in request["messages"] if isinstance(message["content"], list)
                       and any(block.get("type") == "tool_result" for block in message["content"]))
        if answered >= rounds or request["tool_choice"]["type"] == "tool":
            return None
        block = {"type": "tool_use", "id": f"toolu_{answered}", "name": "read", "input": {"path": "app/calc.py"}}
        return Reply(body={"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                           "content": [block], "stop_reason": "tool_use",
                           "usage": {"input_tokens": 500, "output_tokens": 20}})

    return respond


@pytest.mark.parametrize(("rounds", "turns", "marked"), [
    (0, 4, [False]),  # the model answers at once: the run's only request
    (1, 4, [False, False]),  # the second request: a model that made one round of calls often answers
    (3, 4, [False, False, True, True]),  # from the third on: it writes, the next reads
    (1, 1, [False, False]),  # the second request is the answer, the tools closed: nothing reads it
    (2, 2, [False, False, True]),  # the answer (tools closed) reads the previous round, writes nothing new
])
def test_with_the_tools_a_breakpoint_is_sent_only_from_the_loops_third_request_on(
        tmp_path: Path, key: None, rounds: int, turns: int, marked: list[bool]) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=review_document())], responder=_calls_until(rounds)) as server:
        outcome = anthropic.build(_settings(server, "claude-sonnet-4-6", tools=True, tool_turns=turns)).review(
            review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    posts = server.posts()
    assert all(post.body["tools"][0]["name"] == "read" for post in posts)  # the tools are on in each
    assert ["cache_control" in post.body["system"][0] for post in posts] == marked
    # The same requests carry a breakpoint on the last block of their last message, so the next
    # round reads the diff, the context and the earlier answers at 0.1 x, not only the system.
    last_blocks = [post.body["messages"][-1]["content"] for post in posts]
    assert [isinstance(content, list) and "cache_control" in content[-1] for content in last_blocks] == [
        flag and post.body["tool_choice"]["type"] == "any" for post, flag in zip(posts, marked, strict=True)]
    assert sum(isinstance(content, list) and "cache_control" in block
               for post in posts for message in post.body["messages"]
               for content in [message["content"]] for block in (content if isinstance(content, list) else [])
               ) == sum(2 if post.body["tool_choice"]["type"] == "any" else 1
                        for post, flag in zip(posts, marked, strict=True) if flag)  # this round's and the previous


def test_with_the_tools_a_run_of_several_requests_marks_each(tmp_path: Path, key: None) -> None:
    repo = _modules_repo(tmp_path, "compute")
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = anthropic.build(_settings(server, "claude-sonnet-4-6", max_input_tokens=3500, context_chars=0,
                                            tools=True)).review(review_request(repo))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    posts = server.posts()
    assert len(posts) >= 2
    assert all(post.body["system"][0]["cache_control"] == {"type": "ephemeral"} for post in posts)


def test_a_cache_ttl_anthropic_does_not_have_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"reviewer\.claude\.cache_ttl: expected '5m' or '1h', got '24h'"):
        anthropic.build(ReviewerSettings(name="claude", provider="anthropic", model="test-model",
                                         options={"cache_ttl": "24h"}))


def test_an_answer_cut_at_max_tokens_is_asked_again_with_a_larger_cap(tmp_path: Path, key: None) -> None:
    repo = calc_repo(tmp_path)
    cut = Reply(text='{"verdict": "approve", "summary": "Revie', stop_reason="max_tokens")
    with ModelServer([cut, Reply(review=review_document())]) as server:
        outcome = anthropic.build(_settings(server, max_output_tokens=1000)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [post.body["max_tokens"] for post in server.posts()] == [1000, 2000]
    assert any("cut at the token limit (1,000 tokens)" in note for note in outcome.notes)
