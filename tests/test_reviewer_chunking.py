"""Large diffs: split into chunks that fit max_input_tokens; what cannot fit is never approved silently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers import openai
from reviewgate.reviewers.base import ReviewerStatus
from reviewgate.reviewers.model.chunking import plan_chunks
from testing.model_repo import review_request
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import make_repo

# The instructions take about 2,100 estimated tokens: 3,500 leaves room for ~900 of diff per chunk.
SMALL_WINDOW = {"max_input_tokens": 3500, "context_chars": 0, "concurrency": 2, "retries": 0,
                "verify_findings": False}


def _module(name: str, lines: int) -> str:
    return "".join(
        f"value_{name}_{index} = compute_{name}({index})  # line {index}\n" for index in range(lines)
    )


def _settings(server: ModelServer, **options: object) -> ReviewerSettings:
    return ReviewerSettings(
        name="llm",
        provider="openai",
        model="test-model",
        base_url=f"{server.url}/v1",
        api_key_env="",
        timeout=5.0,
        options={**SMALL_WINDOW, **options},
    )


def test_a_large_diff_is_reviewed_in_chunks_and_findings_merge(tmp_path: Path) -> None:
    files = {
        f"{folder}/module_{index}.py": _module(f"{folder}{index}", 25)
        for folder in ("api", "web")
        for index in range(3)
    }
    repo = make_repo(tmp_path, {"README.md": "base\n"}, files)
    same = review_document([finding("api/module_0.py", 1, title="Same finding from every chunk")])
    with ModelServer([Reply(review=same)]) as server:
        outcome = openai.build(_settings(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    posts = server.posts()
    assert len(posts) >= 2
    shown = [set(re.findall(r"=== FILE (\S+)", post.body["messages"][1]["content"])) for post in posts]
    assert set().union(*shown) == set(files)  # every file reviewed
    assert sum(len(group) for group in shown) == len(files)  # each exactly once
    assert len(outcome.findings) == 1  # de-duplicated across chunks
    assert outcome.usage.requests == len(posts)
    # Six files, six chunks, packed into as few requests as the window holds: never past it.
    assert len(posts) < len(files)
    assert all(len(post.text) // 4 <= SMALL_WINDOW["max_input_tokens"] for post in posts)
    assert f"the diff was reviewed in 6 chunks, 6 of them asked in {len(posts)} request(s)" in outcome.notes


def test_one_file_larger_than_the_window_is_split_over_requests_at_its_blocks(tmp_path: Path) -> None:
    """Forty functions of one file are forty chunks: packed into requests that each fit the
    window, every function sent exactly once, none left unreviewed."""
    body = "".join(f"def step_{index}(value):\n" + "".join(f"    value = value + {index} * {line}\n"
                                                          for line in range(6)) + "    return value\n\n\n"
                   for index in range(40))
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"app/steps.py": body})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_settings(server)).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK and not outcome.not_reviewed, outcome.reason
    posts = server.posts()
    assert len(posts) >= 3
    assert all(len(post.text) // 4 <= SMALL_WINDOW["max_input_tokens"] for post in posts)
    sent = [name for post in posts for name in re.findall(r"def (step_\d+)\(", post.body["messages"][1]["content"])]
    assert sorted(sent) == sorted(f"step_{index}" for index in range(40))


@pytest.mark.parametrize(
    ("policy", "status"), [("blocked", ReviewerStatus.BLOCKED), ("report", ReviewerStatus.OK)]
)
def test_a_file_too_large_even_alone_is_not_reviewed(
    tmp_path: Path, policy: str, status: ReviewerStatus
) -> None:
    repo = make_repo(
        tmp_path, {"README.md": "base\n"}, {"small.py": "x = 1\n", "huge.py": _module("huge", 200)}
    )
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_settings(server, on_unreviewed=policy)).review(review_request(repo.path))
    assert outcome.status is status
    assert outcome.not_reviewed == ("huge.py lines 1-200 (one block larger than the input budget)",)
    assert "huge.py lines 1-200" in outcome.reason  # said even when policy lets it pass
    assert all("huge.py" not in post.text for post in server.posts())


def test_chunk_boundaries_do_not_move_when_another_file_grows(tmp_path: Path) -> None:
    """Chunks are cut per directory (then per file, then per run of hunks), never by packing the
    whole diff: a push that grows one file leaves every other chunk byte-identical."""
    files = {
        **{f"api/module_{index}.py": _module(f"api{index}", 6) for index in range(2)},
        "web/big.py": _module("big", 88),
        "web/small.py": _module("small", 10),
        "jobs/tasks.py": _module("tasks", 6),
    }
    repo = make_repo(tmp_path / "before", {"README.md": "base\n"}, files)
    grown = make_repo(tmp_path / "after", {"README.md": "base\n"}, {**files, "api/module_0.py": _module("api0", 30)})
    budget = 1200
    before = plan_chunks(review_request(repo.path).target.files, budget)
    after = plan_chunks(review_request(grown.path).target.files, budget)
    assert all(chunk.tokens <= budget for chunk in (*before.chunks, *after.chunks))
    texts_before = {chunk.text for chunk in before.chunks}
    changed = [chunk for chunk in after.chunks if chunk.text not in texts_before]
    assert {change.path for chunk in changed for change in chunk.files} <= {"api/module_0.py", "api/module_1.py"}
    assert len(after.chunks) - len(changed) >= 2  # jobs/ and web/ untouched
    # web/ does not fit in one chunk: each of its files is a chunk of its own.
    assert [[change.path for change in chunk.files] for chunk in before.chunks if "web/" in chunk.text] == [
        ["web/big.py"], ["web/small.py"]]


def test_with_the_tools_a_block_holds_one_unchanged_line_either_side_of_its_changes(tmp_path: Path) -> None:
    """Two changes five lines apart in a forty-line file: with the tools the request shows one
    unchanged line before the first and after the last (`read` gives the model the rest), and the
    four between them; without the tools git's three either side."""
    lines = [f"value_{index} = {index}\n" for index in range(40)]
    changed = list(lines)
    changed[10], changed[16] = "value_10 = 'ten'\n", "value_16 = 'sixteen'\n"
    repo = make_repo(tmp_path, {"app/values.py": "".join(lines)}, {"app/values.py": "".join(changed)})
    shown: dict[bool, set[int]] = {}
    for tools in (True, False):
        with ModelServer([Reply(review=review_document())]) as server:
            outcome = openai.build(_settings(server, tools=tools, max_input_tokens=100_000)).review(
                review_request(repo.path))
            [post] = server.posts()
        assert outcome.status is ReviewerStatus.OK, outcome.reason
        shown[tools] = {int(number) for number in re.findall(r"^[ +](\d+)\| ", str(post.body["messages"][1]["content"]),
                                                            flags=re.MULTILINE)}
    assert shown[True] == set(range(10, 19)), sorted(shown[True])  # lines 10-18: 11 and 17 changed
    assert shown[False] == set(range(8, 21)), sorted(shown[False])
