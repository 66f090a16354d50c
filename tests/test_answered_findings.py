"""A finding asked about again after lines shift, in new words, is still the same finding: it
keeps its id, and a REVIEW-REJECTED answer to it stays answered; a finding the rejection did not
answer still counts."""

from __future__ import annotations

from pathlib import Path

from reviewgate.cache_keys import now_text
from reviewgate.config import ReviewerSettings
from reviewgate.context import Rejection
from reviewgate.forge.conversation import Comment, change_authors, read_conversation
from reviewgate.reviewers import openai
from testing.model_repo import BRANCH_CALC, calc_repo, chunk_store, review_request
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import commit

FIRST = review_document([finding("app/calc.py", 7, title="Division by zero")], "request_changes")
# Asked again after two lines were added above: the same problem in new words, and a new one.
AGAIN = review_document([
    finding("app/calc.py", 9, title="b may be zero, and then the division raises"),
    finding("app/calc.py", 9, category="tests", title="divide has no test"),
], "request_changes")


def _settings(server: ModelServer) -> ReviewerSettings:
    return ReviewerSettings(name="llm", provider="openai", model="test-model", base_url=f"{server.url}/v1",
                            api_key_env="", timeout=5.0, options={"retries": 0, "verify_findings": False})


def test_a_rejected_finding_stays_answered_after_a_line_shift(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    store = chunk_store(tmp_path / "cache", "llm")
    with ModelServer([Reply(review=FIRST), Reply(review=AGAIN)]) as server:
        reviewer = openai.build(_settings(server))
        before_first = "2000-01-01T00:00:00Z"
        first = reviewer.review(review_request(repo.path), store)
        assert [(item.line, item.dismissed) for item in first.findings] == [(7, None)]
        rejection = Rejection("app/calc.py", 7, "callers never pass zero", "dev", created_at=now_text(), dismisses=True)
        commit(repo.path, {"app/calc.py": "# two lines\n# above\n" + BRANCH_CALC}, "shift everything down")
        second = reviewer.review(review_request(repo.path, rejections=(rejection,)), store)
        assert len(server.posts()) == 2  # the chunk changed: asked again, the rejection in the prompt
        assert "REVIEW-REJECTED: app/calc.py:7 callers never pass zero" in server.posts()[1].text
        # The same answer, but the rejection was written before the finding was ever reported.
        early = Rejection("app/calc.py", 7, "callers never pass zero", "dev", created_at=before_first, dismisses=True)
        third = reviewer.review(review_request(repo.path, rejections=(early,)), store)
    assert len(server.posts()) == 2  # the third review's chunk prompt is the same: answered from the cache
    answered = {item.category: item for item in second.findings}
    assert answered["correctness"].line == 9
    assert answered["correctness"].dismissed == "rejected: callers never pass zero"
    assert answered["tests"].dismissed is None  # another rule on the same line is not what was answered
    assert answered["correctness"].id == first.findings[0].id  # new words, same code and rule: same id
    assert answered["tests"].id != first.findings[0].id
    assert all(item.dismissed is None for item in third.findings)
    # Two chunks: the new comment lines with add(), and divide() after them.
    assert third.chunks is not None and third.chunks.reused == 2


def test_without_a_remembered_finding_the_model_judges_the_rejection(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([Reply(review=FIRST)]) as server:
        rejection = Rejection("app/calc.py", 7, "callers never pass zero", "dev", created_at=now_text(), dismisses=True)
        outcome = openai.build(_settings(server)).review(
            review_request(repo.path, rejections=(rejection,)), chunk_store(tmp_path / "cache", "llm"))
    assert [(item.line, item.dismissed) for item in outcome.findings] == [(7, None)]


def test_a_rejection_carries_when_its_comment_was_written() -> None:
    written = "2026-11-30T08:00:00Z"
    conversation = read_conversation([Comment(1, "dev", "REVIEW-REJECTED: app/calc.py:7 never zero", True, written)],
                                     change_authors(["pr-author"], []))
    assert conversation.rejections == (Rejection("app/calc.py", 7, "never zero", "dev", written, dismisses=True),)
