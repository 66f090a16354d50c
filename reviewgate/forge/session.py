"""The forge side of one run, opened before the review: where to publish, what the
conversation says, what the last summary comment recorded, and the check run started.

Never fails the gate: anything the forge refuses or cannot answer becomes a note, and the
review goes on without it (publishing failures never change the verdict). Bad `[github]` /
`[gitlab]` config is the exception: a ConfigError (exit 2), raised before anything is posted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from reviewgate.ci.context import CiContext
from reviewgate.config import Config
from reviewgate.forge.authorship import github_authorship, gitlab_authorship
from reviewgate.forge.conversation import Comment, Conversation, is_conversation_request, read_conversation
from reviewgate.forge.github_api import GithubApi, github_comment, is_bot
from reviewgate.forge.gitlab_api import GitlabApi
from reviewgate.forge.http import Budget, ForgeDenied, ForgeError
from reviewgate.forge.metadata import CommentMetadata, is_summary_comment, parse_metadata
from reviewgate.forge.settings import ForgeSettings, parse_forge_settings
from reviewgate.freeze.freeze import FrozenTarget

JOB_TOKEN_NOTE = (
    "GitLab: only CI_JOB_TOKEN is available, and it cannot read or write merge request notes; "
    "set GITLAB_TOKEN (a token with the api scope) for the MR note. The note was skipped."
)


def external_id(target: FrozenTarget) -> str:
    """Binds a check run to the exact tree reviewed: head SHA and canonical patch hash."""
    return f"{target.head_sha}:{target.patch_sha256}"


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ForgeRun:
    provider: str  # github | gitlab
    settings: ForgeSettings
    api_url: str
    repository: str
    number: int | None  # PR number / MR iid; None outside a PR (a push): no comment then
    token: str | None = field(default=None, repr=False)
    check_sha: str = ""  # the commit the check run is shown on (the PR head)
    check_run_id: int | None = None
    # The conclusion of a check run already completed for this exact head SHA and patch.
    existing_conclusion: str | None = None
    check_run_problem: str | None = None  # why the check run could not be started
    check_run_denied: bool = False
    comment_id: int | None = None
    # The comments could not be listed: our summary comment may exist unseen, so none is posted
    # (a second one would break "one comment per PR").
    comments_unread: bool = False
    previous: CommentMetadata | None = None
    conversation: Conversation = Conversation()
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Shared by every client this run makes (replace() keeps the same object): one budget.
    budget: Budget = field(default_factory=Budget, compare=False, repr=False)

    @property
    def writes_to_pull_request(self) -> bool:
        """A token and a PR/MR to write on: what every sink that comments needs."""
        return self.token is not None and self.number is not None

    def github(self) -> GithubApi:
        return GithubApi(self.api_url, self.repository, self.token or "", self.settings.retry, self.budget)

    def gitlab(self) -> GitlabApi:
        return GitlabApi(self.api_url, self.repository, self.token or "", self.settings.retry, self.budget)


def in_progress_body(
    settings: ForgeSettings, target: FrozenTarget, check_sha: str, details_url: str | None
) -> dict[str, Any]:
    """The create body of a check run started on the PR head, bound to the reviewed head and patch."""
    body: dict[str, Any] = {
        "name": settings.check_name, "head_sha": check_sha, "external_id": external_id(target),
        "status": "in_progress", "started_at": utc_now(),
    }
    if details_url:
        body["details_url"] = details_url
    return body


def _start_check_run(api: GithubApi, settings: ForgeSettings, target: FrozenTarget, check_sha: str,
                     details_url: str | None) -> tuple[int | None, str | None]:
    """(id, existing conclusion): the run already made for this head and patch when there is
    one (a re-run), else a new one `in_progress` on the head SHA."""
    for run in api.check_runs_for(check_sha, settings.check_name):
        if run.get("external_id") == external_id(target) and isinstance(run.get("id"), int):
            if run.get("status") == "completed":
                return int(run["id"]), str(run.get("conclusion") or "")
            return int(run["id"]), None
    created = api.create_check_run(in_progress_body(settings, target, check_sha, details_url))
    return (int(created["id"]) if isinstance(created.get("id"), int) else None), None


def _summary_comment(comments: list[tuple[Comment, bool]]) -> tuple[int | None, CommentMetadata | None]:
    """Our comment: the first with the marker among those `ours` says we wrote. Anyone else's
    copy of the marker is ignored, so it cannot reset the round history."""
    for comment, ours in comments:
        if is_summary_comment(comment.body) and ours:
            return comment.id, parse_metadata(comment.body)
    return None, None


def _github_summary_candidates(issue_comments: list[dict[str, Any]], trusted_logins: tuple[str, ...]
                               ) -> list[tuple[Comment, bool]]:
    """Bot comments first (GITHUB_TOKEN writes as github-actions[bot]); then, for a personal
    token, a trusted author's comment that starts as ours does (`REVIEW: `), which a person
    quoting our comment (`> REVIEW: ...`) does not."""
    comments = [(github_comment(item, trusted_logins), is_bot(item)) for item in issue_comments]
    bots = [(comment, True) for comment, bot in comments if bot]
    people = [(comment, comment.trusted and comment.body.startswith("REVIEW: "))
              for comment, bot in comments if not bot]
    return bots + people


def _open_github(context: CiContext, settings: ForgeSettings, target: FrozenTarget,
                 env: Mapping[str, str]) -> ForgeRun:
    token = env.get("GITHUB_TOKEN") or None
    number = context.pull_request_number
    # The reviewed head is the PR's head (ci/events.py), the commit the check run belongs on.
    run = ForgeRun("github", settings, context.api_url or "https://api.github.com", context.repository or "",
                   number, token, check_sha=target.head_sha, budget=Budget(settings.publish_timeout))
    if token is None or not context.repository:
        return _with(run, notes=("GitHub: no GITHUB_TOKEN (input github-token) or repository; "
                                 "no check run and no PR comment.",))
    api = run.github()
    changes: dict[str, Any] = {}
    if settings.check_run:
        try:
            changes["check_run_id"], changes["existing_conclusion"] = _start_check_run(
                api, settings, target, run.check_sha, context.run_url)
        except ForgeDenied as error:
            changes.update(check_run_problem=str(error), check_run_denied=True)
        except ForgeError as error:
            changes["check_run_problem"] = str(error)
    if number is not None:
        try:
            issue_comments = list(api.issue_comments(number))
            review_comments = list(api.review_comments(number))
            comment_id, previous = _summary_comment(
                _github_summary_candidates(issue_comments, settings.trusted_authors))
            every_comment = [*issue_comments, *review_comments]
            authors, comments = github_authorship(
                api, number, every_comment, [github_comment(item, settings.trusted_authors) for item in every_comment])
            conversation = read_conversation(comments, authors)
            changes.update(comment_id=comment_id, previous=previous, conversation=conversation)
        except ForgeError as error:
            changes.update(comments_unread=True, notes=(
                f"GitHub: could not read the PR conversation ({error}); reviewed without "
                "REPRODUCTION:/REVIEW-REJECTED: comments and without the round history.",))
    return _with(run, **changes)


def _open_gitlab(context: CiContext, settings: ForgeSettings, env: Mapping[str, str]) -> ForgeRun:
    token = env.get("GITLAB_TOKEN") or None
    run = ForgeRun("gitlab", settings, context.api_url or "", context.repository or "",
                   context.pull_request_number, token, budget=Budget(settings.publish_timeout))
    if token is None:
        if env.get("CI_JOB_TOKEN") and run.number is not None:
            return _with(run, notes=(JOB_TOKEN_NOTE,))
        return run
    if run.number is None or not run.api_url or not run.repository:
        return run
    api = run.gitlab()
    try:
        username = api.current_username()
        notes = [item for item in api.notes(run.number) if not item.get("system")]
        comments: list[tuple[Comment, bool]] = []
        for item in notes:
            body = str(item.get("body") or "")
            relevant = is_conversation_request(body) and not is_summary_comment(body)
            # Member look-ups only for notes whose author's trust matters.
            comment = api.comment(item, settings.trusted_authors) if relevant else Comment(
                int(item.get("id") or 0), "", body, False)
            author = item.get("author") if isinstance(item.get("author"), dict) else {}
            comments.append((comment, bool(username) and (author or {}).get("username") == username))
        comment_id, previous = _summary_comment(comments)
        authors, read = gitlab_authorship(api, run.number, notes, [comment for comment, _ in comments])
        return _with(run, comment_id=comment_id, previous=previous, conversation=read_conversation(read, authors))
    except ForgeError as error:
        return _with(run, comments_unread=True, notes=(
            f"GitLab: could not read the MR notes ({error}); reviewed without "
            "REPRODUCTION:/REVIEW-REJECTED: notes and without the round history.",))


def _with(run: ForgeRun, **changes: Any) -> ForgeRun:
    return replace(run, **changes)


def open_forge(context: CiContext, config: Config, target: FrozenTarget,
               environ: Mapping[str, str], *, read_only: bool = False) -> ForgeRun | None:
    """None when not on a forge (a local run). `read_only` (a shard, which posts nothing): the
    conversation is read for the reviewers, no check run is started."""
    if context.is_github:
        settings = parse_forge_settings(config.sections, "github", config.source)
        if read_only:
            settings = replace(settings, check_run=False)
        return _open_github(context, settings, target, environ)
    if context.is_gitlab:
        settings = parse_forge_settings(config.sections, "gitlab", config.source)
        return _open_gitlab(context, settings, environ)
    return None

