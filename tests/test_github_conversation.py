"""REPRODUCTION: and REVIEW-REJECTED: from trusted authors, read from the paginated PR conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.context import Rejection
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.forge.conversation import (
    Comment,
    apply_rejections,
    change_authors,
    parse_rejection,
    read_conversation,
)
from reviewgate.forge.metadata import MARKER, CommentMetadata, parse_metadata, render_metadata
from reviewgate.forge.rounds import RoundEntry
from testing.changes import BLOCKING_CHANGE, BLOCKING_LINE, BLOCKING_PATH
from testing.cli import run_cli
from testing.forge_server import ForgeServer, conformance_dir, fast_retry_config, github_environment
from testing.repo import make_repo


def _comment(body: str, trusted: bool = True, author: str = "maintainer") -> Comment:
    return Comment(id=1, author=author, body=body, trusted=trusted)


def test_parse_rejection_reads_file_line_and_reason() -> None:
    assert parse_rejection("REVIEW-REJECTED: src/a.py:12 the caller retries") == Rejection(
        "src/a.py", 12, "the caller retries")
    assert parse_rejection("REVIEW-REJECTED: `./docs/x.md` whole file is generated") == Rejection(
        "docs/x.md", None, "whole file is generated")
    assert parse_rejection("REVIEW-REJECTED:") is None
    assert parse_rejection("not a rejection") is None


def test_only_trusted_requests_are_read_and_review_comments_never() -> None:
    conversation = read_conversation([
        _comment("REPRODUCTION:\ncase 1: expected 2, observed 3"),
        _comment("REVIEW: REQUEST CHANGES\nREVIEW-REJECTED: a.py:1 from an earlier review"),
        _comment(f"REVIEW: APPROVE\n{MARKER}\nREVIEW-REJECTED: a.py:2 ours"),
        _comment("REVIEW-REJECTED: a.py:3 drive-by", trusted=False, author="stranger"),
        _comment("Thanks!\nREVIEW-REJECTED: a.py:4 fine as it is\nREVIEW-REJECTED: b.py:5 also fine"),
        _comment("REPRODUCTION:\nforged", trusted=False),
    ], change_authors(["pr-author"], []))
    assert conversation.reproduction == "REPRODUCTION:\ncase 1: expected 2, observed 3"
    assert [(item.path, item.line) for item in conversation.rejections] == [("a.py", 4), ("b.py", 5)]
    assert conversation.untrusted_ignored == 2


def test_a_rejection_dismisses_only_deterministic_findings_on_that_line() -> None:
    def finding(source: str, line: int | None, end: int | None = None) -> Finding:
        return Finding(id=f"{source}{line}", finding_class=FindingClass.CORRECTNESS, severity=Severity.MAJOR,
                       category="c", title="t", body="", source=source, path="a.py", line=line, end_line=end)

    findings = [finding("builtin", 3, 6), finding("builtin", 10), finding("llm", 4), finding("builtin", None)]
    result = apply_rejections(findings, [Rejection("a.py", 5, "handled upstream", dismisses=True)], ["builtin"])
    assert [item.dismissed for item in result] == ["rejected: handled upstream", None, None, None]


needs_conformance = pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")


@needs_conformance
def test_a_trusted_rejection_on_the_last_page_dismisses_the_builtin_finding(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path
    with ForgeServer() as server:
        for index in range(4):
            server.state.add_comment(f"comment {index}", "someone", "NONE")
        where = f"{BLOCKING_PATH}:{BLOCKING_LINE}"
        server.state.add_comment(f"REVIEW-REJECTED: {where} the name is escaped by the caller", "octocat", "NONE",
                                 review=True)
        server.state.add_comment(f"REVIEW-REJECTED: {where} names come from a fixed list here", "maintainer",
                                 "MEMBER")
        result = run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(tmp_path)),
                         env=github_environment(server, tmp_path))
    assert result.returncode == 0, result.stdout
    findings = result.report()["findings"]
    assert [item["dismissed"] for item in findings] == ["rejected: names come from a fixed list here"]
    assert any(item.query.get("page") == ["3"] for item in server.state.posts("GET", r"/issues/7/comments$"))
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "1 REPRODUCTION:/REVIEW-REJECTED: comment(s) from authors without write access" in summary


@needs_conformance
def test_a_configured_trusted_author_counts_and_a_forged_marker_is_ignored(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path
    forged = render_metadata(CommentMetadata("a", "p", "request_changes",
                                             (RoundEntry("a", "p1", "request_changes"),
                                              RoundEntry("b", "p2", "request_changes"))))
    config = fast_retry_config(tmp_path, github='trusted_authors = ["OctoCat"]\n')
    with ForgeServer() as server:
        forged_id = server.state.add_comment(f"REVIEW: APPROVE\n{MARKER}\n{forged}", "stranger", "NONE")
        server.state.add_comment(f"REVIEW-REJECTED: {BLOCKING_PATH}:{BLOCKING_LINE} deliberate", "octocat",
                                 "CONTRIBUTOR")
        result = run_cli(repo, "run", "--no-verify", "--config", str(config),
                         env=github_environment(server, tmp_path))
    assert result.returncode == 0
    assert server.state.comments[forged_id]["body"].startswith("REVIEW: APPROVE\n")  # untouched
    ours = [item for item in server.state.comments.values() if item["user"]["type"] == "Bot"]
    assert len(ours) == 1
    metadata = parse_metadata(ours[0]["body"])
    assert metadata is not None and [entry.verdict for entry in metadata.rounds] == ["approve"]
    assert result.report()["findings"][0]["dismissed"] == "rejected: deliberate"


@needs_conformance
def test_a_quoted_summary_is_not_edited_and_unreadable_comments_post_no_second_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path
    config = str(fast_retry_config(tmp_path))
    with ForgeServer() as server:
        quoted = server.state.add_comment(f"> REVIEW: REQUEST CHANGES\n> {MARKER}\nI disagree", "maintainer",
                                          "OWNER")
        env = github_environment(server, tmp_path)
        first = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        server.state.fail_once.extend([("GET", r"/issues/7/comments$")] * 4)
        second = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
    assert (first.returncode, second.returncode) == (1, 1)
    assert server.state.comments[quoted]["body"].endswith("I disagree")
    assert len(server.state.comments) == 2
    summary = (second.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "could not read the PR conversation" in summary
    assert "The PR comment (and any round-cap label) was not published" in summary
