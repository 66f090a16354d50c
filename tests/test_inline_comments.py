"""Inline comments over three pushes, against stand-ins of GitHub's and GitLab's REST APIs: one
comment per live finding, moved rather than duplicated, the gone ones set aside (GitHub: marked
outdated and minimised; GitLab: resolved), a comment a person answered never deleted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewgate.forge.inline_plan import OUTDATED_MARKER, Existing, Wanted, fingerprint_of, marker, plan_inline_comments
from testing.cli import run_cli
from testing.forge_server import ForgeServer, fast_retry_config, github_environment, gitlab_environment
from testing.repo import commit, make_repo

LOAD = "def load(cursor, request):\n    cursor.execute(f\"SELECT body FROM notes WHERE name = '{request.args['name']}'\")\n    return cursor.fetchone()\n"
SAVE = "def save(cursor, name, text):\n    cursor.execute(f\"UPDATE notes SET body = '{text}' WHERE name = '{request.args['name']}'\")\n"
SAVE_FIXED = "def save(cursor, name, text):\n    cursor.execute(\"UPDATE notes SET body = ? WHERE name = ?\", (text, name))\n"
TEST = {"tests/test_store.py": ("from store import load, save\n\n\ndef test_store(cursor):\n"
                                "    save(cursor, 'a', 'text')\n    assert load(cursor, 'a')\n")}
# Push 1: two queries built by formatting (blocking findings on lines 2 and 7). Push 2: three lines
# above both (each moves). Push 3: save fixed.
PUSHES = [
    {"store.py": f"{LOAD}\n\n{SAVE}", **TEST},
    {"store.py": f"import os\n\nPATH = os.sep\n{LOAD}\n\n{SAVE}", **TEST},
    {"store.py": f"import os\n\nPATH = os.sep\n{LOAD}\n\n{SAVE_FIXED}", **TEST},
]


def _live(comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in comments if fingerprint_of(item["body"]) and OUTDATED_MARKER not in item["body"]
            and not item.get("in_reply_to_id")]


def test_three_pushes_leave_one_github_comment_per_live_finding(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "app\n"}, PUSHES[0]).path
    config = str(fast_retry_config(tmp_path, github="review_comments = true"))
    state_lines: list[set[str]] = []
    with ForgeServer() as server:
        state = server.state
        for number, files in enumerate(PUSHES):
            if number:
                commit(repo, files, f"push {number + 1}")
            result = run_cli(repo, "run", "--no-verify", "--config", config,
                             env=github_environment(server, tmp_path))
            assert result.returncode == 1, result.stdout
            live = _live(list(state.review_comments.values()))
            blocking = [item for item in result.report()["findings"]
                        if item["path"] == "store.py" and item["class"] == "correctness"]
            assert sorted(fingerprint_of(item["body"]) or "" for item in live) == sorted(
                item["id"] for item in blocking)
            # An unanswered comment sits on its finding's line; an answered one stays with its thread.
            answered_ids = {item["in_reply_to_id"] for item in state.review_comments.values()
                            if item.get("in_reply_to_id")}
            placed = {(item["path"], item["line"]) for item in live if item["id"] not in answered_ids}
            assert placed <= {(item["path"], item["line"]) for item in blocking}
            state_lines.append({str(item["line"]) for item in live})
            if number == 0:
                # A person answers the comment on save(): it must outlive every later push.
                answered = next(item for item in live if item["line"] == 7)
                state.add_review_comment("It is deliberate, see the docs.", "octocat", "store.py", None,
                                         in_reply_to=answered["id"])
    assert state_lines[0] != state_lines[1]  # the findings moved with the lines added above them
    comments = list(state.review_comments.values())
    assert len(_live(comments)) == 1  # only load()'s finding is left
    outdated = [item for item in comments if OUTDATED_MARKER in item["body"]]
    assert len(outdated) == 1 and outdated[0]["node_id"] in state.minimized
    assert any(item.get("in_reply_to_id") == outdated[0]["id"] for item in comments)  # the reply, kept
    assert all(review["event"] == "COMMENT" and review["body"] for review in state.reviews)
    assert sum(len(review["comments"]) for review in state.reviews) == 3  # 2 first, load() moved once


def test_three_pushes_on_gitlab_resolve_the_gone_discussion(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "app\n"}, PUSHES[0]).path
    config = str(fast_retry_config(tmp_path, gitlab="discussions = true"))
    with ForgeServer() as server:
        state = server.state
        for number, files in enumerate(PUSHES):
            if number:
                commit(repo, files, f"push {number + 1}")
            result = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
            assert result.returncode == 1, result.stdout
            if number == 0:
                assert len(state.discussions) == 2
                save = next(item for item in state.discussions.values()
                            if item["notes"][0]["position"]["new_line"] == 7)
                state.add_discussion_reply(save["id"], "Deliberate.", "alice")
    discussions = list(state.discussions.values())
    unresolved = [item for item in discussions if not item["notes"][0]["resolved"]]
    resolved = [item for item in discussions if item["notes"][0]["resolved"]]
    assert len(unresolved) == 1 and unresolved[0]["notes"][0]["position"]["new_line"] == 5
    assert len(resolved) == 1 and len(resolved[0]["notes"]) == 2  # the answered one: resolved, kept
    assert resolved[0]["notes"][0]["body"].startswith(OUTDATED_MARKER)
    position = unresolved[0]["notes"][0]["position"]
    assert position["head_sha"] == state.diff_refs["head_sha"] and position["position_type"] == "text"


def test_a_read_only_token_skips_the_comments_and_keeps_the_verdict(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "app\n"}, PUSHES[0]).path
    config = str(fast_retry_config(tmp_path, github="review_comments = true"))
    with ForgeServer() as server:
        server.state.read_only_tokens.add("write-token")
        result = run_cli(repo, "run", "--no-verify", "--config", config, env=github_environment(server, tmp_path))
    assert result.returncode == 1
    assert not server.state.reviews
    assert "line comments were not published" in (result.output_dir / "summary.md").read_text(encoding="utf-8")


def test_comments_are_off_unless_asked_for(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "app\n"}, PUSHES[0]).path
    with ForgeServer() as server:
        run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(tmp_path)),
                env=github_environment(server, tmp_path))
    assert not server.state.posts("POST", r"/reviews$")


def test_the_plan_keeps_moves_and_sets_aside() -> None:
    here = Wanted("a" * 16, "app.py", 5, f"{marker('a' * 16)}\nsame")
    moved = Wanted("b" * 16, "app.py", 9, f"{marker('b' * 16)}\nnew text")
    existing = [
        Existing("a" * 16, 1, "app.py", 5, here.body, answered=False),
        Existing("a" * 16, 2, "app.py", 3, here.body, answered=False),  # a stray duplicate
        Existing("b" * 16, 3, "app.py", 8, "old text", answered=True),
        Existing("c" * 16, 4, "app.py", 1, "gone", answered=False),
        Existing("d" * 16, 5, "app.py", 2, f"{OUTDATED_MARKER}\ngone before", answered=False, resolved=True),
    ]
    plan = plan_inline_comments([here, moved], existing)
    assert [item.comment_id for item in plan.duplicates] == [2]
    assert [(item.comment_id, want.fingerprint) for item, want in plan.edit] == [(3, "b" * 16)]  # answered: stays
    assert not plan.create and not plan.delete
    assert [item.comment_id for item in plan.outdate] == [4]  # 5 was set aside already


def test_someone_elses_copy_of_the_marker_is_not_ours(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "app\n"}, PUSHES[0]).path
    config = str(fast_retry_config(tmp_path, github="review_comments = true"))
    with ForgeServer() as server:
        fake = server.state.add_review_comment(f"{marker('0' * 16)}\nplanted", "mallory", "store.py", 2)
        run_cli(repo, "run", "--no-verify", "--config", config, env=github_environment(server, tmp_path))
    assert server.state.review_comments[fake]["body"] == f"{marker('0' * 16)}\nplanted"
    assert not server.state.minimized


def test_a_suggested_change_is_a_one_click_block_on_its_line(tmp_path: Path) -> None:
    source = "import yaml\n\n\ndef read(text):\n    return yaml.load(text)\n"
    test = "from config import read\n\n\ndef test_read():\n    assert read('a: 1') == {'a': 1}\n"
    repo = make_repo(tmp_path, {"README.md": "app\n"}, {"config.py": source, "tests/test_config.py": test}).path
    with ForgeServer() as server:
        run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(tmp_path, github="review_comments = true")),
                env=github_environment(server, tmp_path))
        run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(tmp_path, gitlab="discussions = true")),
                env=gitlab_environment(server))
    [github] = _live(list(server.state.review_comments.values()))
    assert github["line"] == 5 and "```suggestion\n    return yaml.safe_load(text)\n```" in github["body"]
    [gitlab] = list(server.state.discussions.values())
    note = gitlab["notes"][0]
    assert note["position"]["new_line"] == 5
    assert "```suggestion:-0+0\n    return yaml.safe_load(text)\n```" in note["body"]
