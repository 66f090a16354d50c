"""Nobody overrules their own finding: an ACCEPTED: or REVIEW-REJECTED: counts only from a
trusted person who wrote none of the change (not the PR/MR author, not a commit's author or
committer), only in the comment's own lines, and not when someone else (or someone unknown)
edited the words in. Real runs against the GitHub and GitLab stand-ins, on real repositories."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reviewgate.cache_keys import now_text
from reviewgate.config import ReviewerSettings
from reviewgate.context import Rejection
from reviewgate.forge.conversation import changed_after_creation
from reviewgate.forge.own_text import own_lines
from reviewgate.reviewers import openai
from testing.changes import BLOCKING_CHANGE
from testing.cli import run_cli
from testing.forge_server import (
    EDITED_AT,
    MR_AUTHOR,
    MR_AUTHOR_EMAIL,
    PR_AUTHOR,
    WRITTEN_AT,
    ForgeServer,
    conformance_dir,
    fast_retry_config,
    github_commit,
    github_environment,
    gitlab_environment,
)
from testing.model_repo import BRANCH_CALC, calc_repo, chunk_store, review_request
from testing.model_server import ModelServer, Reply, finding, review_document
from testing.repo import commit, make_repo

needs_conformance = pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent")
REASON = "the name comes from a fixed allow-list"
REJECTION = "REVIEW-REJECTED: load.py:2 the name is checked against the allow-list first"


def test_only_the_comments_own_lines_are_read() -> None:
    body = "\n".join([
        "I read it.",
        "> ACCEPTED: q1 quoted",
        "this line runs on inside the quote",
        "",
        "```python", "ACCEPTED: f1 in a fence", "```",
        "````", "```", "ACCEPTED: f2 a shorter fence does not close a longer one", "````",
        "~~~", "ACCEPTED: f3 tildes", "~~~",
        "    ACCEPTED: i1 indented code",
        "\tACCEPTED: i2 a tab",
        "<!-- ACCEPTED: h1 hidden", "ACCEPTED: h2 still hidden -->",
        "  ACCEPTED: own1 my own words",
        "``` ACCEPTED: not a fence: a backtick fence cannot have a backtick after it `",
        "```",
        "ACCEPTED: u1 a fence left open hides the rest",
    ])
    assert own_lines(body) == [
        "I read it.", "ACCEPTED: own1 my own words",
        "``` ACCEPTED: not a fence: a backtick fence cannot have a backtick after it `",
    ]


def test_an_edit_is_a_change_of_moment_not_of_spelling() -> None:
    assert not changed_after_creation("2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00")
    assert not changed_after_creation("2017-03-21T13:30:35.307Z", "2017-03-21T13:30:35.307Z")
    assert changed_after_creation("2019-08-29T17:31:17.886Z", "2019-08-29T17:31:17.889Z")
    assert not changed_after_creation("2026-01-01T00:00:00Z", None)


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path


@dataclass(frozen=True)
class _Run:
    """What one run left, read before the next run writes over it."""

    returncode: int
    stdout: str
    report: dict[str, Any]
    summary: str

    @property
    def notes(self) -> list[str]:
        return [str(note) for note in self.report["notes"]]

    @property
    def finding_id(self) -> str:
        [only] = self.report["findings"]
        return str(only["id"])


def _gate(repo: Path, config: str, env: dict[str, str]) -> _Run:
    result = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
    return _Run(result.returncode, result.stdout + result.stderr, result.report(),
                (result.output_dir / "summary.md").read_text(encoding="utf-8"))


class _GithubRuns:
    """Runs of the gate on one pull request of the stand-in, the finding's id learnt from the first."""

    def __init__(self, tmp_path: Path, server: ForgeServer) -> None:
        self.repo, self.server = _repo(tmp_path), server
        self.config = str(fast_retry_config(tmp_path))
        self.env = github_environment(server, tmp_path)
        first = self.run()
        assert first.returncode == 1, first.stdout
        self.finding_id = first.finding_id

    def run(self) -> _Run:
        return _gate(self.repo, self.config, self.env)


@needs_conformance
def test_github_the_pr_author_as_collaborator_cannot_accept_or_reject_their_own_finding(tmp_path: Path) -> None:
    with ForgeServer() as server:
        runs = _GithubRuns(tmp_path, server)
        server.state.add_comment(f"ACCEPTED: {runs.finding_id} {REASON}", PR_AUTHOR, "COLLABORATOR")
        server.state.add_comment(REJECTION, PR_AUTHOR, "COLLABORATOR")
        refused = runs.run()
        server.state.add_comment(f"ACCEPTED: {runs.finding_id} {REASON}", "maintainer", "MEMBER")
        accepted = runs.run()
    assert refused.returncode == 1, refused.stdout
    assert refused.report["accepted"] == []
    assert refused.report["findings"][0]["dismissed"] is None
    notes = refused.notes
    assert any(f"ACCEPTED: {runs.finding_id} by {PR_AUTHOR} was ignored: {PR_AUTHOR} wrote this change" in note
               for note in notes)
    assert any(f"REVIEW-REJECTED: load.py:2 by {PR_AUTHOR} sets no finding aside" in note for note in notes)
    assert f"{PR_AUTHOR} wrote this change" in refused.summary
    # Someone who wrote none of it may: the record names them.
    assert accepted.returncode == 0, accepted.stdout
    assert accepted.report["accepted"] == [
        {"finding_id": runs.finding_id, "author": "maintainer", "reason": REASON, "applied": True}]
    # The lookups: the pull request and its commits, once a comment asks to overrule.
    assert server.state.posts("GET", r"/pulls/7$") and server.state.posts("GET", r"/pulls/7/commits$")


@needs_conformance
def test_github_a_commit_author_who_is_a_member_cannot_accept_the_finding(tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.pull_commits.append(github_commit("helper", committer="helper"))
        runs = _GithubRuns(tmp_path, server)
        server.state.add_comment(f"ACCEPTED: {runs.finding_id} {REASON}", "Helper", "MEMBER")
        refused = runs.run()
    assert refused.returncode == 1, refused.stdout
    assert any("by Helper was ignored: Helper wrote this change" in note for note in refused.notes)


@needs_conformance
def test_github_an_acceptance_in_a_quote_or_a_code_block_is_not_read(tmp_path: Path) -> None:
    with ForgeServer() as server:
        runs = _GithubRuns(tmp_path, server)
        server.state.add_comment(f"> ACCEPTED: {runs.finding_id} {REASON}\n\nI would not say that.",
                                 "maintainer", "OWNER")
        server.state.add_comment(f"To overrule, write:\n\n```\nACCEPTED: {runs.finding_id} {REASON}\n```",
                                 "maintainer", "OWNER")
        server.state.add_comment(f"Like this:\n\n    REVIEW-REJECTED: load.py:2 {REASON}", "maintainer", "OWNER")
        result = runs.run()
    assert result.returncode == 1, result.stdout
    assert result.report["accepted"] == [] and result.report["findings"][0]["dismissed"] is None


@needs_conformance
def test_github_words_edited_into_a_maintainers_comment_do_not_count(tmp_path: Path) -> None:
    with ForgeServer() as server:
        runs = _GithubRuns(tmp_path, server)
        state = server.state
        edited = state.add_comment("Looks fine to me.", "maintainer", "OWNER")
        state.edit_comment(edited, f"ACCEPTED: {runs.finding_id} {REASON}", PR_AUTHOR)
        by_someone_else = runs.run()
        # REST alone: GraphQL answers with errors (a GitHub Enterprise Server without it, say).
        state.scripted.append(("POST", r"^/graphql$", 200, {}, {"errors": [{"message": "unavailable"}]}))
        rest_only = runs.run()
        # The maintainer's own edit of their own comment: the words are theirs.
        state.comment_edits[state.comments[edited]["node_id"]] = ["maintainer"]
        own_edit = runs.run()
    assert by_someone_else.returncode == 1, by_someone_else.stdout
    assert any(f"by maintainer was ignored: the comment was edited by {PR_AUTHOR} after it was written" in note
               for note in by_someone_else.notes)
    assert rest_only.returncode == 1, rest_only.stdout
    assert any("the comment was edited after it was written; the editor is unknown" in note
               for note in rest_only.notes)
    assert own_edit.returncode == 0, own_edit.stdout
    assert own_edit.report["accepted"][0]["author"] == "maintainer"


@needs_conformance
def test_github_when_the_commits_cannot_all_be_listed_nobody_overrules(tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.page_size = 100
        server.state.pull_commits += [github_commit(PR_AUTHOR) for _ in range(250)]  # 251: the API lists 250
        runs = _GithubRuns(tmp_path, server)
        server.state.add_comment(f"ACCEPTED: {runs.finding_id} {REASON}", "maintainer", "OWNER")
        result = runs.run()
    assert result.returncode == 1, result.stdout
    assert any("who wrote the change is not known (the pull request has 251 commits and the API lists 250)"
               in note for note in result.notes)


def _gitlab_run(repo: Path, config: str, server: ForgeServer) -> _Run:
    return _gate(repo, config, gitlab_environment(server))


def test_gitlab_the_authors_and_committers_notes_overrule_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = str(fast_retry_config(tmp_path))
    with ForgeServer() as server:
        state = server.state
        state.members.update({MR_AUTHOR["id"]: 40, 6: 30, 8: 40})  # the author and a committer: trusted
        state.users[6] = {"id": 6, "username": "dev", "public_email": "Dev@Example.com"}
        state.users[8] = {"id": 8, "username": "lead"}
        state.mr_commits.append({"author_email": MR_AUTHOR_EMAIL, "committer_email": "dev@example.com"})
        first = _gitlab_run(repo, config, server)
        finding_id = first.finding_id
        state.add_note(f"ACCEPTED: {finding_id} {REASON}", MR_AUTHOR["id"], MR_AUTHOR["username"])
        state.add_note(REJECTION, MR_AUTHOR["id"], MR_AUTHOR["username"])
        state.add_note(f"ACCEPTED: {finding_id} {REASON}", 6, "dev")
        state.add_note(f"> ACCEPTED: {finding_id} {REASON}", 8, "lead")
        state.add_note(f"ACCEPTED: {finding_id} {REASON}", 8, "lead", updated_at=EDITED_AT)
        refused = _gitlab_run(repo, config, server)
        state.add_note(f"ACCEPTED: {finding_id} {REASON}", 8, "lead", updated_at=WRITTEN_AT)
        accepted = _gitlab_run(repo, config, server)
    assert refused.returncode == 1, refused.stdout
    assert refused.report["findings"][0]["dismissed"] is None
    notes = refused.notes
    assert any("by mr-author was ignored: mr-author wrote this change" in note for note in notes)
    assert any("REVIEW-REJECTED: load.py:2 by mr-author sets no finding aside" in note for note in notes)
    assert any("by dev was ignored: dev wrote this change" in note for note in notes)
    assert any("by lead was ignored: the comment was edited after it was written; the editor is unknown" in note
               for note in notes)
    assert accepted.returncode == 0, accepted.stdout
    assert accepted.report["accepted"][0]["author"] == "lead"


def test_gitlab_an_edit_by_someone_else_is_named(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = str(fast_retry_config(tmp_path))
    with ForgeServer() as server:
        server.state.members.update({8: 40})
        server.state.users[8] = {"id": 8, "username": "lead"}
        finding_id = _gitlab_run(repo, config, server).finding_id
        note = server.state.add_note(f"ACCEPTED: {finding_id} {REASON}", 8, "lead", updated_at=EDITED_AT)
        server.state.notes[note]["last_edited_by"] = {"id": 4, "username": "mr-author"}
        refused = _gitlab_run(repo, config, server)
        server.state.notes[note]["last_edited_by"] = {"id": 8, "username": "lead"}
        own_edit = _gitlab_run(repo, config, server)
    assert refused.returncode == 1
    assert any("the comment was edited by mr-author after it was written" in item for item in refused.notes)
    assert own_edit.returncode == 0, own_edit.stdout


def test_the_authors_rejection_is_read_by_the_model_and_sets_nothing_aside(tmp_path: Path) -> None:
    """A remembered model finding stays answered only by someone who did not write the change;
    the author's answer reaches the model, which judges it."""
    repo = calc_repo(tmp_path)
    first_review = review_document([finding("app/calc.py", 7, title="Division by zero")], "request_changes")
    again = review_document([finding("app/calc.py", 9, title="b may be zero")], "request_changes")
    store = chunk_store(tmp_path / "cache", "llm")
    with ModelServer([Reply(review=first_review), Reply(review=again)]) as server:
        reviewer = openai.build(ReviewerSettings(
            name="llm", provider="openai", model="test-model", base_url=f"{server.url}/v1", api_key_env="",
            timeout=5.0, options={"retries": 0, "verify_findings": False}))
        reviewer.review(review_request(repo.path), store)
        answer = Rejection("app/calc.py", 7, "callers never pass zero", PR_AUTHOR, created_at=now_text())
        commit(repo.path, {"app/calc.py": "# two lines\n# above\n" + BRANCH_CALC}, "shift everything down")
        second = reviewer.review(review_request(repo.path, rejections=(answer,)), store)
    assert "REVIEW-REJECTED: app/calc.py:7 callers never pass zero" in server.posts()[1].text
    assert [(item.line, item.dismissed) for item in second.findings] == [(9, None)]
