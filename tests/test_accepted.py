"""`ACCEPTED: <finding-id> reason` from a trusted person overrules the gate on that finding, on
the record; from anyone else, or without a reason, it is ignored and said so. Real runs against
the GitHub and GitLab stand-ins (and a model stand-in for a model reviewer's finding)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.forge.conversation import (
    Acceptance,
    Comment,
    apply_acceptances,
    change_authors,
    parse_acceptance,
    read_conversation,
)
from testing.changes import BLOCKING_CHANGE
from testing.cli import CliResult, run_cli
from testing.conformance import validate_report
from testing.forge_server import ForgeServer, conformance_dir, fast_retry_config, github_environment, gitlab_environment
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import make_repo

needs_conformance = pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")
REASON = "the name comes from a fixed allow-list; see docs/loading.md"


def test_parse_acceptance_reads_the_id_and_the_reason() -> None:
    assert parse_acceptance("ACCEPTED: `0123abcd4567ef89` " + REASON, "ann") == Acceptance(
        "0123abcd4567ef89", REASON, "ann")
    assert parse_acceptance("ACCEPTED: 0123abcd4567ef89") == Acceptance("0123abcd4567ef89", "", "")
    assert parse_acceptance("ACCEPTED:") is None
    assert parse_acceptance("I ACCEPTED: this") is None


def test_untrusted_and_reasonless_acceptances_are_ignored_with_a_note() -> None:
    conversation = read_conversation([
        Comment(1, "stranger", "ACCEPTED: aaaa fine by me", trusted=False),
        Comment(2, "maintainer", "ACCEPTED: bbbb", trusted=True),
        Comment(3, "maintainer", "Looked at it.\nACCEPTED: cccc the retry is upstream", trusted=True),
        Comment(4, "bot", "REVIEW: APPROVE\nACCEPTED: dddd quoted from an earlier review", trusted=True),
    ], change_authors(["pr-author"], []))
    assert conversation.acceptances == (Acceptance("cccc", "the retry is upstream", "maintainer"),)
    [untrusted, reasonless] = conversation.refused
    assert "aaaa by stranger was ignored" in untrusted and "write access" in untrusted
    assert "bbbb by maintainer was ignored: it gives no reason" in reasonless
    assert conversation.untrusted_ignored == 0  # that count is for REPRODUCTION:/REVIEW-REJECTED:


def test_an_acceptance_dismisses_the_finding_whichever_reviewer_found_it() -> None:
    def make(identifier: str, source: str) -> Finding:
        return Finding(id=identifier, finding_class=FindingClass.CORRECTNESS, severity=Severity.MAJOR,
                       category="c", title="t", body="", source=source, path="a.py", line=1)

    result = apply_acceptances([make("f1", "llm"), make("f2", "builtin")],
                               [Acceptance("f1", "known and tracked", "ann"), Acceptance("f1", "later", "bob")])
    assert [item.dismissed for item in result] == ["accepted by ann: known and tracked", None]


def _blocking_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path


def _only_finding_id(result: CliResult) -> str:
    [only] = result.report()["findings"]
    return str(only["id"])


@needs_conformance
def test_github_a_members_acceptance_approves_and_is_on_the_record(tmp_path: Path) -> None:
    repo = _blocking_repo(tmp_path)
    config = str(fast_retry_config(tmp_path))
    with ForgeServer() as server:
        env = github_environment(server, tmp_path)
        first = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        assert first.returncode == 1, first.stdout + first.stderr
        finding_id = _only_finding_id(first)
        server.state.add_comment(f"ACCEPTED: {finding_id} looks fine to me", "drive-by", "NONE")
        server.state.add_comment(f"ACCEPTED: {finding_id}", "maintainer", "MEMBER")
        not_yet = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        server.state.add_comment(f"ACCEPTED: `{finding_id}` {REASON}", "maintainer", "MEMBER")
        accepted = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
    assert not_yet.returncode == 1, not_yet.stdout
    notes = not_yet.report()["notes"]
    assert any(f"{finding_id} by drive-by was ignored" in note for note in notes)
    assert any(f"{finding_id} by maintainer was ignored: it gives no reason" in note for note in notes)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    report = accepted.report()
    validate_report(report)
    assert report["verdict"] == "approve"
    assert report["findings"][0]["dismissed"] == f"accepted by maintainer: {REASON}"
    assert report["accepted"] == [{"finding_id": finding_id, "author": "maintainer", "reason": REASON,
                                   "applied": True}]
    summary = (accepted.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "### Accepted by people" in summary and f"| maintainer | {REASON} |" in summary
    run = server.state.check_runs[max(server.state.check_runs)]  # the latest of the name is the one shown
    assert run["conclusion"] == "success"
    assert "maintainer" in run["output"]["summary"] and REASON in run["output"]["summary"]
    [comment] = [item["body"] for item in server.state.comments.values() if item["body"].startswith("REVIEW: ")]
    assert comment.startswith("REVIEW: APPROVE") and REASON in comment


@needs_conformance
def test_github_an_acceptance_dismisses_a_model_reviewers_finding(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, extra_branch={"tests/test_calc.py": "def test_divide():\n    pass\n"})
    review = review_document([finding("app/calc.py", 7, title="Division by zero is not handled")],
                             "request_changes")
    with ModelServer([Reply(review=review), Reply(review=review)]) as models, ForgeServer() as server:
        write_config(repo.path, "openai", fast_openai(models.url))
        env = {**github_environment(server, tmp_path), "OPENAI_API_KEY": "sk-test-key-not-real"}
        first = run_cli(repo.path, "run", "--no-verify", env=env)
        assert first.returncode == 1, first.stdout + first.stderr
        finding_id = _only_finding_id(first)
        server.state.add_comment(f"ACCEPTED: {finding_id} b is never zero: the form validates it", "owner",
                                 "OWNER")
        second = run_cli(repo.path, "run", "--no-verify", env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    [accepted] = second.report()["findings"]
    assert (accepted["source"], accepted["dismissed"]) == (
        "openai", "accepted by owner: b is never zero: the form validates it")


def test_gitlab_a_developers_acceptance_counts_and_a_reporters_does_not(tmp_path: Path) -> None:
    repo = _blocking_repo(tmp_path)
    config = str(fast_retry_config(tmp_path))
    with ForgeServer() as server:
        server.state.members.update({5: 20, 6: 30})  # Reporter, Developer
        first = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
        assert first.returncode == 1, first.stdout + first.stderr
        finding_id = _only_finding_id(first)
        server.state.add_note(f"ACCEPTED: {finding_id} a reporter thinks so", 5, "reporter")
        refused = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
        server.state.add_note(f"ACCEPTED: {finding_id} {REASON}", 6, "dev")
        accepted = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
    assert refused.returncode == 1
    assert any(f"{finding_id} by reporter was ignored" in note for note in refused.report()["notes"])
    assert accepted.returncode == 0, accepted.stdout
    assert accepted.report()["accepted"][0]["author"] == "dev"
    note = next(item["body"] for item in server.state.notes.values() if item["body"].startswith("REVIEW: "))
    assert note.startswith("REVIEW: APPROVE") and "### Accepted by people" in note and REASON in note
