"""A model finding about lines the change removes stays at their hunk and says so, instead of
moving to the nearest added line: the real reviewer against a real local stand-in server."""

from __future__ import annotations

from pathlib import Path

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers import openai
from reviewgate.reviewers.base import ReviewerStatus
from testing.model_repo import review_request
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import make_repo

BASE = "def rate(total, count):\n    if count == 0:\n        return 0.0\n    return total / count\n"
GUARD_REMOVED = "def rate(total, count):\n    return total / count\n"
# The guard removed and, three lines below, a constant changed: the nearest added line, the wrong
# place for a finding about the guard.
BASE_NEAR = BASE + "\n\nLIMIT = 1\n"
BRANCH_NEAR = GUARD_REMOVED + "\n\nLIMIT = 2\n"

def _review(tmp_path: Path, base: str, branch: str, line: int) -> list[object]:
    repo = make_repo(tmp_path, {"app/rates.py": base}, {"app/rates.py": branch})
    review = review_document([finding("app/rates.py", line, title="The zero-count guard is gone")])
    with ModelServer([Reply(review=review)]) as server:
        settings = ReviewerSettings(name="llm", provider="openai", model="test-model", base_url=f"{server.url}/v1",
                                    api_key_env="", timeout=5.0, options={"retries": 0, "verify_findings": False})
        outcome = openai.build(settings).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert not any("moved" in note for note in outcome.notes)
    return list(outcome.findings)


def test_a_finding_on_removed_lines_is_anchored_at_their_hunk_and_says_so(tmp_path: Path) -> None:
    [item] = _review(tmp_path, BASE, GUARD_REMOVED, 2)  # the line shown right after the removed guard
    assert item.line == 2 and item.extra["removed_lines"] == [2, 3]  # type: ignore[attr-defined]
    assert item.body.startswith("On lines the change removes (merge base line(s) 2-3)")  # type: ignore[attr-defined]


def test_a_finding_on_removed_lines_is_not_moved_to_the_added_line_three_lines_on(tmp_path: Path) -> None:
    [item] = _review(tmp_path, BASE_NEAR, BRANCH_NEAR, 1)  # the line shown right before them
    assert item.line == 2 and item.extra["removed_lines"] == [2, 3]  # type: ignore[attr-defined]
