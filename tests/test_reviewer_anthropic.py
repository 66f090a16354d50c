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
from testing.repo import commit, make_repo

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
    repo = _modules_repo(tmp_path, "compute", folders=("api", "web", "lib"), count=1, lines=80)  # three requests
    usage = {"input_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 2480,
             "output_tokens": 100}
    with ModelServer([Reply(review=review_document(), usage=usage)]) as server:
        default = anthropic.build(_small_window(server, input_price=3.0)).review(review_request(repo))
        asked = len(server.posts())
        hour = anthropic.build(_small_window(server, input_price=3.0, cache_ttl="1h")).review(review_request(repo))
    assert default.status is ReviewerStatus.OK and hour.status is ReviewerStatus.OK, (default.reason, hour.reason)
    posts = server.posts()
    assert asked == 3 and len(posts) == 2 * asked  # a run of several requests: the later ones read the first's
    assert all(post.body["system"][0]["cache_control"] == {"type": "ephemeral"} for post in posts[:asked])
    assert all(post.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
               for post in posts[asked:])
    assert default.usage.cost == pytest.approx(asked * (1 * 3.0 + 2480 * 3.75) / 1e6)
    assert hour.usage.cost == pytest.approx(asked * (1 * 3.0 + 2480 * 6.0) / 1e6)


def test_a_run_of_one_request_marks_no_breakpoint_whatever_the_cache_lifetime(tmp_path: Path, key: None) -> None:
    """Nothing in the run reads it and no store says another push came within the lifetime: a
    write at 1.25 × (2 × for the hour) that nothing reads (the push cadence: test_model_push_cadence.py)."""
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=review_document())]) as server:
        for ttl in ("5m", "1h"):
            outcome = anthropic.build(_settings(server, "claude-sonnet-4-6", cache_ttl=ttl)).review(
                review_request(repo.path))
            assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [len(post.body["system"]) for post in server.posts()] == [1, 1]
    assert not any("cache_control" in post.body["system"][0] for post in server.posts())


def _small_window(server: ModelServer, model: str = "test-model", **options: object) -> ReviewerSettings:
    """About 2,400 estimated tokens of instructions and schema: 3,500 leaves room for one small
    file a request."""
    return _settings(server, model, max_input_tokens=3500, context_chars=0, **options)


def _modules_repo(root: Path, prefix: str, folders: tuple[str, ...] = ("api", "web"), count: int = 3,
                  lines: int = 25) -> Path:
    files = {f"{folder}/{prefix}_{index}.py": "".join(f"value_{index}_{line} = {prefix}({line})\n"
                                                        for line in range(lines))
             for folder in folders for index in range(count)}
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


@pytest.mark.parametrize(("ttl", "files", "marked"), [("5m", 2, True), ("1h", 2, False), ("1h", 3, True)])
def test_a_run_marks_its_prefix_only_when_enough_of_its_requests_read_it_to_pay_the_write(
        tmp_path: Path, key: None, ttl: str, files: int, marked: bool) -> None:
    """No push is recent: only the run's own requests can read the write. A write at 1.25 x and
    one read at 0.1 x cost less than sending the prefix twice; the hour's write at 2 x needs two
    reads (2.2 x against 3 x; with one, 2.1 x against 2 x)."""
    from benchmarks.prompt_bill import ANTHROPIC_1H, ANTHROPIC_5M, anthropic_asked, billed
    repo = _modules_repo(tmp_path, "compute", folders=("api", "web", "lib")[:files], count=1, lines=80)
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = anthropic.build(_small_window(server, "claude-sonnet-4-6", cache_ttl=ttl)).review(
            review_request(repo))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    posts = server.posts()
    assert len(posts) == files  # one folder a request
    assert ["cache_control" in post.body["system"][0] for post in posts] == [marked] * files
    asked = [anthropic_asked(0, post.body) for post in posts]
    bill, whole = billed(asked, ANTHROPIC_5M if ttl == "5m" else ANTHROPIC_1H, across_pushes=False), sum(
        item.tokens for item in asked)
    assert bill < whole if marked else bill == whole
    if marked:  # one write, the others' reads, the rest of each request at the input price
        write = asked[0].prefix_tokens // 1
        pricing = ANTHROPIC_5M if ttl == "5m" else ANTHROPIC_1H
        assert bill == pytest.approx(whole - files * write + pricing.write * write + (files - 1) * 0.1 * write)


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


def _calls_until(rounds: int, path: str) -> Callable[[Any], Reply | None]:
    """A stand-in that asks for one `read` of `path` a round until `rounds` rounds are answered (or
    the tools are closed), then reviews."""

    def respond(request: Any) -> Reply | None:
        answered = sum(1 for message in request["messages"] if isinstance(message["content"], list)
                       and any(block.get("type") == "tool_result" for block in message["content"]))
        if answered >= rounds or request["tool_choice"]["type"] == "tool":
            return None
        block = {"type": "tool_use", "id": f"toolu_{answered}", "name": "read", "input": {"path": path}}
        return Reply(body={"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                           "content": [block], "stop_reason": "tool_use",
                           "usage": {"input_tokens": 500, "output_tokens": 20}})

    return respond


def _breakpoints(post: Recorded) -> list[str]:
    """Where a request carries cache_control: `system`, or the round (1, 2, …) whose last
    tool_result block holds it."""
    places = ["system"] if "cache_control" in post.body["system"][0] else []
    results = [message["content"] for message in post.body["messages"] if isinstance(message["content"], list)
               and message["role"] == "user"]
    places += [f"round {index}" for index, content in enumerate(results, 1) if "cache_control" in content[-1]]
    assert sum("cache_control" in block for content in results for block in content) == len(places) - (
        "system" in places)  # only on a round's last block
    return places


LONG_FILE = "app/long.py"  # a read of it is cut at 12,000 characters: the answer asks for a narrower range


@pytest.mark.parametrize(("rounds", "turns", "path", "marked"), [
    (0, 4, LONG_FILE, [[]]),  # the model answers at once: the run's only request
    # Each answer cut short asks for another call: the request after it writes its round, the
    # next reads it there and writes its own; the answer with the tools closed writes nothing.
    (3, 4, LONG_FILE, [[], ["system", "round 1"], ["system", "round 1", "round 2"],
                       ["system", "round 2", "round 3"]]),
    (2, 2, LONG_FILE, [[], ["system", "round 1"], ["system", "round 1"]]),
    (1, 1, LONG_FILE, [[], []]),  # the second request is the answer, the tools closed: nothing reads it
    # Whole answers ask for nothing more: a model that calls again unasked pays as without the cache.
    (3, 4, "app/calc.py", [[], [], [], []]),
    (2, 2, "app/calc.py", [[], [], []]),
])
def test_with_the_tools_a_round_is_written_only_where_its_answers_ask_for_another_call(
        tmp_path: Path, key: None, rounds: int, turns: int, path: str, marked: list[list[str]]) -> None:
    repo = calc_repo(tmp_path)
    commit(repo.path, {LONG_FILE: "".join(f"VALUE_{index} = {index}  # a line long enough to count\n"
                                          for index in range(600))})
    with ModelServer([Reply(review=review_document())], responder=_calls_until(rounds, path)) as server:
        outcome = anthropic.build(_settings(server, "claude-sonnet-4-6", tools=True, tool_turns=turns)).review(
            review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    posts = server.posts()
    assert all(post.body["tools"][0]["name"] == "read" for post in posts)  # the tools are on in each
    assert [_breakpoints(post) for post in posts] == marked


def test_under_the_hour_a_tool_loop_writes_no_round(tmp_path: Path, key: None) -> None:
    # A round is read once, seconds later: the hour's write (2 x input) and that read cost more
    # than sending the round twice, so under `cache_ttl = "1h"` no round and, in a run of one
    # chunk with no recent push, no system block is marked.
    repo = calc_repo(tmp_path)
    commit(repo.path, {LONG_FILE: "".join(f"VALUE_{index} = {index}  # a line long enough to count\n"
                                          for index in range(600))})
    with ModelServer([Reply(review=review_document())], responder=_calls_until(3, LONG_FILE)) as server:
        outcome = anthropic.build(_settings(server, "claude-sonnet-4-6", tools=True, tool_turns=4,
                                            cache_ttl="1h")).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [_breakpoints(post) for post in server.posts()] == [[], [], [], []]


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
