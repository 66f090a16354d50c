"""The second look at model findings, confidence and suggested changes: the real CLI against a real
local model server whose answers are scripted per request (reviews and second looks apart)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reviewgate.config import Config, ReviewerSettings, ReviewSettings
from reviewgate.reviewers import anthropic, command, openai
from reviewgate.reviewers.base import ReviewerStatus
from testing.agent_clis import shared_with_the_agent
from testing.cli import CliResult, run_cli
from testing.model_repo import PR_DESCRIPTION, calc_repo, chunk_store, fast_openai, review_request
from testing.model_server import ModelServer, Reply, finding, review_document, verdict
from testing.repo import write_base_config
from testing.verify_app import python_for_the_verify

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}
# The branch drops the guard of an existing function: the second look sees both versions.
BASE_RATES = "def rate(total, count):\n    if count == 0:\n        return 0.0\n    return total / count\n"
BRANCH_RATES = "def rate(total, count):\n    return float(total) / count\n"


def _toml(table: dict[str, object]) -> str:
    return "\n".join(f"{key} = {json.dumps(value)}" for key, value in table.items())


def _run(
    tmp_path: Path,
    reviews: list[Reply],
    verdicts: list[Reply],
    review_table: str = "",
    extra_tables: str = "",
    **options: object,
) -> tuple[CliResult, ModelServer]:
    repo = calc_repo(tmp_path, extra_base={"app/rates.py": BASE_RATES}, extra_branch={"app/rates.py": BRANCH_RATES})
    with ModelServer(reviews, verdicts=verdicts) as server:
        table = fast_openai(server.url, **{"verify_findings": None, **options})  # None: the default, on
        config = (f'[review]\nreviewers = ["openai"]\n{review_table}\n\n[reviewer.openai]\n{_toml(table)}\n'
                  f"{extra_tables}\n[cache]\nenabled = false\n")
        write_base_config(repo.path, config)
        result = run_cli(repo.path, "run", "--base", "main", env=KEY)
    return result, server


def _summary(result: CliResult) -> str:
    return (result.output_dir / "summary.md").read_text(encoding="utf-8")


DIVIDE = finding("app/rates.py", 2, title="Division by zero when count is 0", severity="major")


def test_a_refuted_finding_is_dismissed_with_the_refutation_and_does_not_block(tmp_path: Path) -> None:
    refutation = "Every caller passes len(items) of a non-empty list; see the guard in the caller."
    result, server = _run(tmp_path, [Reply(review=review_document([DIVIDE], "request_changes"))],
                          [Reply(review=verdict("refuted", refutation))])
    assert result.returncode == 0, result.stdout + result.stderr
    [item] = result.report()["findings"]
    assert item["dismissed"].startswith("refuted on the second look (openai): Every caller passes")
    assert item["blocking"] is False and item["extra"]["verification"]["verdict"] == "refuted"
    summary = _summary(result)
    assert "1 finding(s) refuted on the second look" in summary and " · refuted on the second look (openai): Every caller" in summary
    [check] = server.verification_posts()
    assert check.body["response_format"]["json_schema"]["name"] == "record_verification"
    user = check.body["messages"][1]["content"]
    # The finding, the code at the head with its function, and the same function at the merge base.
    assert "Division by zero when count is 0" in user
    assert "     2|     return float(total) / count" in user and "(rate)" in user
    assert "if count == 0:" in user
    # Never the author's reasoning; the finding and code stay inside the data delimiters.
    assert PR_DESCRIPTION not in check.text and "PR-DESCRIPTION-MARKER" not in check.text
    nonce = re.search(r"<<<DATA (\w+) BEGIN>>>", user).group(1)  # type: ignore[union-attr]
    outside = re.sub(rf"<<<DATA {nonce} BEGIN>>>.*?<<<DATA {nonce} END>>>", "", user, flags=re.DOTALL)
    assert "return float(total) / count" not in outside and "Division by zero" not in outside
    usage = result.report()["reviewers"][0]["usage"]
    assert usage["requests"] == 2 and usage["input_tokens"] == 2000  # the review and the second look


def test_a_confirmed_finding_blocks_with_its_failure_scenario(tmp_path: Path) -> None:
    scenario = "rate(5, 0) raises ZeroDivisionError where it returned 0.0 before"
    result, server = _run(tmp_path, [Reply(review=review_document([DIVIDE], "request_changes"))],
                          [Reply(review=verdict("confirmed", "The guard was removed.", scenario))])
    assert result.returncode == 1, result.stdout + result.stderr
    [item] = result.report()["findings"]
    assert item["blocking"] is True and item["dismissed"] is None
    assert scenario in item["body"] and item["extra"]["verification"]["failure_scenario"] == scenario
    assert len(server.verification_posts()) == 1 and len(server.review_posts()) == 1


def test_a_finding_true_but_minor_no_longer_blocks_and_the_report_says_why(tmp_path: Path) -> None:
    """A true missing test for a getter, reported as major: the second look says it holds at
    minor; the finding stays, as minor, its body and report.json saying why, and does not block.
    The second look was shown the callers of the cited function beside its code."""
    why = "rate is a two-line helper; a missing test of it is minor by the contract"
    caller = "from app.rates import rate\n\n\ndef average(items):\n    return rate(sum(items), len(items))\n"
    repo = calc_repo(tmp_path, extra_base={"app/rates.py": BASE_RATES, "app/report.py": caller},
                     extra_branch={"app/rates.py": BRANCH_RATES})
    untested = finding("app/rates.py", 2, title="rate has no test", category="tests", severity="major")
    with ModelServer([Reply(review=review_document([untested], "request_changes"))],
                     verdicts=[Reply(review=verdict("holds_at_lower_severity", why, severity="minor"))]) as server:
        write_base_config(repo.path, "[review]\nreviewers = [\"openai\"]\n\n[reviewer.openai]\n"
                          + _toml(fast_openai(server.url, verify_findings=None)) + "\n[cache]\nenabled = false\n")
        result = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert result.returncode == 0, result.stdout + result.stderr
    [item] = result.report()["findings"]
    assert item["severity"] == "minor" and item["blocking"] is False and item["dismissed"] is None
    assert f"Second look (openai): holds, but as minor, not major: {why}" in item["body"]
    record = item["extra"]["verification"]
    assert record["verdict"] == "holds_at_lower_severity" and record["reported_severity"] == "major"
    assert "1 hold at a lower severity" in " ".join(result.report()["reviewers"][0]["notes"])
    [check] = server.verification_posts()
    user = check.body["messages"][1]["content"]
    assert "Its callers at the head" in user and "(a call of rate)" in user
    assert "     5|     return rate(sum(items), len(items))" in user
    assert "import rate" not in user  # an import is not a call
    system = check.body["messages"][0]["content"]
    assert "- minor: worth fixing, but merging without it harms nobody" in system


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (verdict("holds_at_lower_severity", "It is smaller."), "needs the severity it has"),
        (verdict("holds_at_lower_severity", "It is as bad.", severity="major"), "below the finding's major"),
    ],
)
def test_a_lower_severity_that_is_not_lower_is_repaired_then_blocks(
        tmp_path: Path, answer: dict[str, object], reason: str) -> None:
    result, server = _run(tmp_path, [Reply(review=review_document([DIVIDE], "request_changes"))], [Reply(review=answer)])
    assert result.returncode == 3, result.stdout + result.stderr
    assert reason in result.report()["reasons"][0]
    assert len(server.verification_posts()) == 2  # the answer and its one repair


def test_a_second_look_already_answered_is_not_paid_for_again(tmp_path: Path) -> None:
    """Reviewed twice with the cache (a re-run, or a push to another file): the chunk's answer
    and the finding's second look both come from it, and the finding keeps its confirmation."""
    scenario = "rate(5, 0) raises ZeroDivisionError where it returned 0.0 before"
    repo = calc_repo(tmp_path, extra_base={"app/rates.py": BASE_RATES}, extra_branch={"app/rates.py": BRANCH_RATES})
    store = chunk_store(tmp_path / "cache", "openai")
    with ModelServer([Reply(review=review_document([DIVIDE], "request_changes"))],
                     verdicts=[Reply(review=verdict("confirmed", "The guard was removed.", scenario))]) as server:
        settings = ReviewerSettings(name="openai", provider="openai", model="test-model",
                                    base_url=f"{server.url}/v1", api_key_env="", options={"retries": 0})
        reviewer = openai.build(settings)
        first = reviewer.review(review_request(repo.path), store)
        second = reviewer.review(review_request(repo.path), store)
    assert len(server.review_posts()) == 1 and len(server.verification_posts()) == 1
    assert [item.extra["verification"]["verdict"] for item in (*first.findings, *second.findings)] == [
        "holds", "holds"]
    assert second.usage.requests == 0
    assert any("1 answered from the cache" in note for note in second.notes)


@pytest.mark.parametrize(
    ("answers", "posts", "reason"),
    [
        ([Reply(status=500)], 3, "HTTP 500"),  # the first try and retries = 2
        ([Reply(text="Looks real to me!")], 2, "invalid after one repair request"),
        ([Reply(review=verdict("confirmed", "It holds.", ""))], 2, "needs the failure scenario"),
    ],
)
def test_a_second_look_that_fails_blocks_the_review(
    tmp_path: Path, answers: list[Reply], posts: int, reason: str
) -> None:
    result, server = _run(tmp_path, [Reply(review=review_document([DIVIDE], "request_changes"))], answers)
    assert result.returncode == 3, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "blocked"
    assert "the second look could not check 1 finding(s)" in report["reasons"][0] and reason in report["reasons"][0]
    assert len(server.verification_posts()) == posts


def test_a_repaired_second_look_answer_is_used(tmp_path: Path) -> None:
    answers = [Reply(text="confirmed, I think"), Reply(review=verdict("refuted", "count is never 0 here"))]
    result, server = _run(tmp_path, [Reply(review=review_document([DIVIDE]))], answers)
    assert result.returncode == 0, result.stdout + result.stderr
    repair = server.verification_posts()[1].body["messages"]
    assert repair[-2]["content"] == "confirmed, I think" and "not valid JSON" in repair[-1]["content"]


def test_a_finding_below_min_confidence_does_not_block_and_is_not_checked(tmp_path: Path) -> None:
    unsure = finding("app/rates.py", 2, title="Maybe a division by zero", confidence=0.5)
    sure = finding("app/calc.py", 7, title="Division by zero in divide", confidence=0.9)
    result, server = _run(tmp_path, [Reply(review=review_document([unsure, sure], "request_changes"))],
                          [Reply(review=verdict("confirmed"))])
    assert result.returncode == 1, result.stdout + result.stderr
    findings = {item["title"]: item for item in result.report()["findings"]}
    low = findings["Maybe a division by zero"]
    assert low["blocking"] is False and low["dismissed"] == "confidence 0.50 is below [review] min_confidence 0.70"
    assert low["extra"]["confidence"] == 0.5
    assert findings["Division by zero in divide"]["blocking"] is True
    [check] = server.verification_posts()  # only the confident one was worth a second look
    assert "Division by zero in divide" in check.text and "Maybe a division" not in check.text


def test_min_confidence_is_read_from_the_review_table(tmp_path: Path) -> None:
    unsure = finding("app/rates.py", 2, title="Maybe a division by zero", confidence=0.5)
    result, _ = _run(tmp_path, [Reply(review=review_document([unsure]))], [Reply(review=verdict("confirmed"))],
                     review_table="min_confidence = 0.4")
    assert result.returncode == 1, result.stdout + result.stderr


def test_verify_findings_false_lets_the_review_alone_decide(tmp_path: Path) -> None:
    result, server = _run(tmp_path, [Reply(review=review_document([DIVIDE]))],
                          [Reply(review=verdict("refuted", "never sent"))], verify_findings=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert not server.verification_posts()


def test_another_configured_model_takes_the_second_look(tmp_path: Path) -> None:
    repo_tables = '[reviewer.judge]\nprovider = "openai"\nmodel = "judge-model"\nbase_url = "{url}/v1"\n' \
                  'timeout = 2\nretries = 0\ninput_price = 10.0\noutput_price = 10.0\n'
    repo = calc_repo(tmp_path, extra_base={"app/rates.py": BASE_RATES}, extra_branch={"app/rates.py": BRANCH_RATES})
    with ModelServer([Reply(review=review_document([DIVIDE]))],
                     verdicts=[Reply(review=verdict("refuted", "count is checked by the caller"))]) as server:
        table = fast_openai(server.url, verify_findings=None, verifier="judge")
        config = (f'[review]\nreviewers = ["openai"]\n\n[reviewer.openai]\n{_toml(table)}\n\n'
                  f"{repo_tables.format(url=server.url)}\n[cache]\nenabled = false\n")
        write_base_config(repo.path, config)
        result = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert result.returncode == 0, result.stdout + result.stderr
    [check] = server.verification_posts()
    assert check.body["model"] == "judge-model" and server.review_posts()[0].body["model"] == "test-model"
    outcome = result.report()["reviewers"][0]
    assert outcome["usage"]["requests"] == 2 and outcome["usage"]["cost"] == pytest.approx(0.011)
    assert any(note.startswith("second look (judge) at 1 finding(s) that could block: 0 hold, "
                               "0 hold at a lower severity (lowered, with why), 1 refuted")
               for note in outcome["notes"])
    assert "second look (judge)" in _summary(result)


@pytest.mark.parametrize(
    ("review_table", "options", "message"),
    [
        ("", {"verify_findings": "yes"}, ".reviewgate.toml: reviewer.openai.verify_findings: expected true or false"),
        ("min_confidence = 1.5", {}, ".reviewgate.toml: review.min_confidence: expected a number from 0 to 1, got 1.5"),
        ("", {"verifier": "nobody"}, "reviewer.openai.verifier: expected the name of a configured [reviewer.NAME] "
                                     "table, got 'nobody'"),
    ],
)
def test_bad_second_look_settings_are_one_line_errors(
    tmp_path: Path, review_table: str, options: dict[str, object], message: str
) -> None:
    result, server = _run(tmp_path, [Reply(review=review_document())], [Reply(review=verdict("confirmed"))],
                          review_table, **options)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not server.posts()


def test_a_suggestion_that_no_longer_matches_the_head_is_dropped_with_a_note(tmp_path: Path) -> None:
    stale = finding("app/rates.py", 2, title="Guard the division", severity="minor", suggestion={
        "start_line": 2, "end_line": 2, "original": "    return total / max(count, 1)",
        "replacement": "    return total / count if count else 0.0"})
    good = finding("app/calc.py", 7, title="Guard divide", severity="minor", suggestion={
        "start_line": 7, "end_line": 7, "original": "    return a / b",
        "replacement": "    return a / b if b else None  # ``` stays inside the block"})
    result, _ = _run(tmp_path, [Reply(review=review_document([stale, good]))], [Reply(review=verdict("confirmed"))])
    assert result.returncode == 0, result.stdout + result.stderr
    findings = {item["title"]: item for item in result.report()["findings"]}
    dropped = findings["Guard the division"]
    assert "suggestion" not in dropped["extra"]
    assert "original text no longer matches lines 2-2 of the head" in dropped["extra"]["suggestion_dropped"]
    assert "(A suggested change was dropped: its original text no longer matches" in dropped["body"]
    assert findings["Guard divide"]["extra"]["suggestion"] == {
        "start_line": 7, "end_line": 7, "replacement": "    return a / b if b else None  # ``` stays inside the block"}
    summary = _summary(result)
    assert "````suggestion\n    return a / b if b else None  # ``` stays inside the block\n````" in summary
    assert "dropped a suggested change on `app/rates.py:2`" in summary


def test_the_anthropic_provider_forces_the_verification_tool(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=review_document([finding("app/calc.py", 7)]))],
                     verdicts=[Reply(review=verdict("refuted", "b is never 0: the caller checks it"))]) as server:
        settings = ReviewerSettings(name="claude", provider="anthropic", model="test-model", base_url=server.url,
                                    api_key_env="", timeout=2.0, options={"retries": 0})
        outcome = anthropic.build(settings).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    [item] = outcome.findings
    assert item.dismissed == "refuted on the second look (claude): b is never 0: the caller checks it"
    [check] = server.verification_posts()
    assert check.body["tools"][0]["name"] == "record_verification"
    assert check.body["tool_choice"] == {"type": "tool", "name": "record_verification"}


def test_an_agent_cli_takes_the_second_look_in_its_snapshot(tmp_path: Path) -> None:
    review = json.dumps(review_document([finding("app/calc.py", 7, title="Division by zero")]))
    answer = json.dumps(verdict("confirmed", "b comes from the query string", "GET /divide?b=0 answers 500"))
    repo = calc_repo(tmp_path)
    with shared_with_the_agent() as shared:  # as root the agent is another uid: not in tmp_path
        agent = shared / "agent.py"
        agent.write_text(f"import os, sys\nprompt = sys.stdin.read()\nassert os.path.exists('app/calc.py')\n"
                         f"print({answer!r} if 'failure_scenario' in prompt else {review!r})\n", encoding="utf-8")
        settings = ReviewerSettings(name="agent", provider="command", timeout=10.0,
                                    options={"command": [python_for_the_verify(), str(agent)]})
        outcome = command.build(settings).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    [item] = outcome.findings
    assert item.dismissed is None and item.extra["verification"]["failure_scenario"] == "GET /divide?b=0 answers 500"
    assert outcome.usage.requests == 2


@pytest.mark.parametrize("concurrency", [1, 3])
def test_second_looks_run_in_parallel_up_to_the_reviewers_concurrency(tmp_path: Path, concurrency: int) -> None:
    findings = [finding("app/calc.py", 7, title=f"Problem {index}") for index in range(3)]
    slow = Reply(review=verdict("confirmed"), delay=0.6)
    result, server = _run(tmp_path, [Reply(review=review_document(findings))], [slow],
                          concurrency=concurrency, timeout=5)
    assert result.returncode == 1, result.stdout + result.stderr
    arrivals = sorted(item.at for item in server.verification_posts())
    assert len(arrivals) == 3
    if concurrency == 3:
        assert arrivals[-1] - arrivals[0] < 0.5  # all three were asked before the first answered
    else:
        assert all(later - earlier >= 0.55 for earlier, later in zip(arrivals, arrivals[1:], strict=False))


def test_the_review_cache_key_follows_the_second_look_settings() -> None:
    def identity(min_confidence: float = 0.7, **options: object) -> dict[str, object]:
        settings = ReviewerSettings(name="llm", provider="openai", model="m", options=options)
        judge = ReviewerSettings(name="judge", provider="openai", model="judge-model")
        reviewer = openai.build(settings)
        reviewer.attach_review_policy(Config(review=ReviewSettings(reviewers=("llm",), min_confidence=min_confidence),
                                             reviewers={"llm": settings, "judge": judge}))
        return reviewer.cache_identity()

    variants = [identity(), identity(verify_findings=False), identity(verifier="judge"), identity(0.5)]
    assert len({json.dumps(item, sort_keys=True) for item in variants}) == 4
    assert identity() == identity()


def test_a_cost_without_the_second_look_models_prices_says_it_is_partial(tmp_path: Path) -> None:
    repo_tables = '[reviewer.judge]\nprovider = "openai"\nmodel = "judge-model"\nbase_url = "{url}/v1"\n' \
                  'timeout = 2\nretries = 0\n'
    repo = calc_repo(tmp_path, extra_base={"app/rates.py": BASE_RATES}, extra_branch={"app/rates.py": BRANCH_RATES})
    with ModelServer([Reply(review=review_document([DIVIDE]))],
                     verdicts=[Reply(review=verdict("refuted", "count is checked by the caller"))]) as server:
        table = fast_openai(server.url, verify_findings=None, verifier="judge", input_price=1.0, output_price=10.0)
        config = (f'[review]\nreviewers = ["openai"]\n\n[reviewer.openai]\n{_toml(table)}\n\n'
                  f"{repo_tables.format(url=server.url)}\n[cache]\nenabled = false\n")
        write_base_config(repo.path, config)
        result = run_cli(repo.path, "run", "--base", "main", env=KEY)
    assert result.returncode == 0, result.stdout + result.stderr
    outcome = result.report()["reviewers"][0]
    assert outcome["usage"]["cost"] == pytest.approx(0.002) and outcome["usage"]["cost_partial"] is True
    assert ("the cost is partial: it leaves out the second look's 1 request(s), as reviewer 'judge' has no "
            "input_price/output_price") in outcome["notes"]
