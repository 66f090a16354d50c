"""Chunks asked together: packed within the budget, and the answer split back to the chunk each
finding lands on (packing.py), through the engine with the real stand-in server."""

from __future__ import annotations

import json
from pathlib import Path

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers import openai
from reviewgate.reviewers.base import ReviewerStatus
from reviewgate.reviewers.model.packing import owner, pack, split_answer
from testing.model_repo import chunk_store, review_request
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import commit, make_repo

SPANS = [{"app/a.py": ((1, 5),)}, {"app/a.py": ((40, 48),)}, {"lib/b.py": ((3, 9),)}]


def test_a_finding_belongs_to_the_chunk_whose_hunk_holds_its_line_else_the_nearest_of_its_file() -> None:
    assert [owner({"path": "app/a.py", "line": line}, SPANS) for line in (3, 44, 20, 30, 90)] == [0, 1, 0, 1, 1]
    assert owner({"path": "lib/b.py", "line": 1}, SPANS) == 2
    assert owner({"path": "./lib/b.py", "line": 5}, SPANS) == 2  # spelled as placement reads it
    assert owner({"path": "lib/b.py", "line": None}, SPANS) == 2  # file level: the first chunk of its file
    # The change as a whole, a file no chunk holds, a path placement drops: the first chunk.
    assert [owner({"path": path, "line": 2}, SPANS) for path in (None, "docs/c.md", "../etc/passwd")] == [0, 0, 0]


def test_the_answer_is_split_with_every_finding_once_and_the_summary_on_each_part() -> None:
    found = [finding("lib/b.py", 4, title="b"), finding("app/a.py", 41, title="a late"),
             finding("app/a.py", 2, title="a early"), finding(None, None, title="whole")]
    text = "Here it is:\n```json\n" + json.dumps(review_document(found, "request_changes", summary="S")) + "\n```"
    parts = [json.loads(part) for part in split_answer(text, SPANS)]
    assert [[item["title"] for item in part["findings"]] for part in parts] == [["a early", "whole"], ["a late"], ["b"]]
    assert {(part["summary"], part["verdict"]) for part in parts} == {("S", "request_changes")}


def test_packing_keeps_the_order_and_never_passes_the_budget() -> None:
    assert pack([3, 4, 2, 5, 1, 1], lambda size: size, 7) == [[3, 4], [2, 5], [1, 1]]
    assert pack([9, 1], lambda size: size, 7) == [[9], [1]]  # over the budget alone: a request of its own


def _settings(server: ModelServer) -> ReviewerSettings:
    return ReviewerSettings(name="llm", provider="openai", model="test-model", base_url=f"{server.url}/v1",
                            api_key_env="", timeout=2.0, options={"retries": 0, "verify_findings": False})


ORDERS = "def place_order(items):\n    return sum(items)\n"
TASKS = "def run_tasks(queue):\n    return list(queue)\n"


def test_findings_of_one_request_come_back_on_their_own_files_after_a_push_to_another(tmp_path: Path) -> None:
    """One request holds both files and answers a finding on each and one on the change as a
    whole; a push that shifts api/orders.py's block down asks for nothing but its new lines, and
    every stored finding comes back from the cache on its file: jobs/'s on its line, api/'s moved
    with its block, the whole change's once."""
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"api/orders.py": ORDERS, "jobs/tasks.py": TASKS})
    answer = review_document([finding("jobs/tasks.py", 2, title="Tasks are copied"),
                              finding("api/orders.py", 2, title="Orders are summed"),
                              finding(None, None, title="No tests")])
    store = chunk_store(tmp_path / "cache", "llm")
    with ModelServer([Reply(review=answer), Reply(review=review_document())]) as server:
        reviewer = openai.build(_settings(server))
        first = reviewer.review(review_request(repo.path), store)
        commit(repo.path, {"api/orders.py": "import math\n\n\n" + ORDERS}, "a push above the function")
        second = reviewer.review(review_request(repo.path), store)
        posts = server.posts()
    assert (first.status, second.status) == (ReviewerStatus.OK, ReviewerStatus.OK), first.reason + second.reason
    assert len(posts) == 2
    assert "import math" in posts[1].text and "def place_order" not in posts[1].text and "run_tasks" not in posts[1].text
    places = {(item.path, item.line, item.title) for item in second.findings}
    assert places == {("jobs/tasks.py", 2, "Tasks are copied"), ("api/orders.py", 5, "Orders are summed"),
                      (None, None, "No tests")}
    assert second.chunks is not None and (second.chunks.reviewed, second.chunks.reused) == (1, 2)
