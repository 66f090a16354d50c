"""Inline comments on the lines of blocking findings (and of findings that offer a checked
suggested change, applied in one click): a GitHub pull request review with line
comments, or GitLab merge request discussions on the diff (`[github] review_comments = true`,
`[gitlab] discussions = true`). Beside the check run and the summary comment, never instead.

Each push converges on one comment per live finding (forge/inline_plan.py says how): kept,
moved, marked outdated, never piled up. A token that may not write (a fork's pull request)
falls back as the check run does: a note, and the verdict stands.
"""

from __future__ import annotations

from typing import Any

from reviewgate.escaping import markdown_body, markdown_code, markdown_suggestion, markdown_text, mask
from reviewgate.findings import Finding
from reviewgate.forge.conversation import GITHUB_TRUSTED_ASSOCIATIONS
from reviewgate.forge.github_api import GithubApi, is_bot
from reviewgate.forge.gitlab_api import GitlabApi
from reviewgate.forge.http import ForgeDenied, ForgeError
from reviewgate.forge.inline_plan import (
    OUTDATED_MARKER,
    Existing,
    InlinePlan,
    Wanted,
    fingerprint_of,
    is_outdated,
    marker,
    plan_inline_comments,
)
from reviewgate.forge.session import ForgeRun
from reviewgate.report.annotated import annotated
from reviewgate.report.base import SinkContext
from reviewgate.result import GateResult
from reviewgate.text import truncate

# A bound on what one push may post: the summary comment and the check run carry the rest.
MAX_INLINE_COMMENTS = 50
# Comments per review request; GitHub documents no limit, and a smaller request fails smaller.
COMMENTS_PER_REVIEW = 25
# A finding's body in a line comment; the summary comment has it whole.
MAX_BODY_CHARS = 4000
REVIEW_BODY = "reviewgate: comments on the lines of findings that block this change. The summary comment has the verdict."


def suggestion_of(finding: Finding) -> tuple[int, int, str] | None:
    """(first line, last line, replacement) of a checked suggested change, if the finding has one."""
    suggestion = finding.extra.get("suggestion")
    if not isinstance(suggestion, dict):
        return None
    start, end, replacement = suggestion.get("start_line"), suggestion.get("end_line"), suggestion.get("replacement")
    if not isinstance(start, int) or not isinstance(end, int) or not isinstance(replacement, str) or end < start:
        return None
    return start, end, replacement


def commentable(result: GateResult) -> list[Finding]:
    """Blocking findings, and findings offering a one-click fix, on a line the change added: the
    lines both forges accept a comment on."""
    chosen: list[Finding] = []
    for finding in result.findings:
        if finding.dismissed or finding.path is None or finding.line is None:
            continue
        blocking = result.is_blocking(finding)
        if not annotated(finding, blocking) or (not blocking and suggestion_of(finding) is None):
            continue
        change = result.target.file(finding.path)
        if change is not None and finding.line in change.changed_line_numbers():
            chosen.append(finding)
    return chosen


def render_inline(finding: Finding, provider: str) -> str:
    """The marker first (invisible), so only a comment that starts with it counts as ours. A
    suggested change is a block the forge applies in one click: GitHub's on the comment's line
    range, GitLab's `suggestion:-0+N` from the comment's line down."""
    lines = [
        marker(finding.id),
        f"**{finding.severity.value} {finding.finding_class.value}** {markdown_code(finding.rule_id)}: "
        f"{markdown_text(finding.title)}",
    ]
    if finding.body.strip():
        lines += ["", markdown_body(truncate(finding.body.strip(), MAX_BODY_CHARS, "…"))]
    suggestion = suggestion_of(finding)
    if suggestion is not None:
        start, end, replacement = suggestion
        below = None if provider == "github" else end - start
        lines += ["", markdown_suggestion(replacement, below)]
    lines += ["", "_reviewgate keeps this comment up to date on every push._"]
    return mask("\n".join(lines))


def outdated_body(body: str, head_sha: str) -> str:
    if is_outdated(body):
        return body
    return f"{OUTDATED_MARKER}\n**Outdated:** no longer reported as of `{head_sha[:12]}`.\n\n{body}"


def _wanted_one(finding: Finding, provider: str) -> Wanted:
    """On the finding's line; with a suggestion, on the lines it replaces."""
    body = render_inline(finding, provider)
    suggestion = suggestion_of(finding)
    if suggestion is None:
        return Wanted(finding.id, finding.path or "", finding.line or 0, body)
    start, end, _ = suggestion
    if provider == "github":
        return Wanted(finding.id, finding.path or "", end, body, start if start < end else None)
    return Wanted(finding.id, finding.path or "", start, body)


def _wanted(result: GateResult, provider: str) -> tuple[list[Wanted], int]:
    findings = commentable(result)
    wanted = [_wanted_one(finding, provider) for finding in findings[:MAX_INLINE_COMMENTS]]
    return wanted, max(0, len(findings) - MAX_INLINE_COMMENTS)


def _starts_ours(body: str, fingerprint: str) -> bool:
    return body.startswith((marker(fingerprint), f"{OUTDATED_MARKER}\n"))


# --- GitHub ---------------------------------------------------------------------------------------


def _github_existing(items: list[dict[str, Any]]) -> list[Existing]:
    answered = {item.get("in_reply_to_id") for item in items if item.get("in_reply_to_id")}
    existing: list[Existing] = []
    for item in items:
        body = str(item.get("body") or "")
        fingerprint = fingerprint_of(body)
        # Ours: written by the workflow's bot, or by a person with write access whose token the
        # gate was given, and starting with the marker; a reply quoting one is not ours.
        ours = is_bot(item) or item.get("author_association") in GITHUB_TRUSTED_ASSOCIATIONS
        if fingerprint is None or not ours or item.get("in_reply_to_id") or not _starts_ours(body, fingerprint):
            continue
        line = item.get("line")
        existing.append(Existing(
            fingerprint=fingerprint, comment_id=int(item.get("id") or 0), path=str(item.get("path") or ""),
            line=line if isinstance(line, int) else None, body=body, answered=item.get("id") in answered,
            thread_id=str(item.get("node_id") or ""), resolved=is_outdated(body)))
    return existing


def _review_comment(want: Wanted) -> dict[str, Any]:
    comment: dict[str, Any] = {"path": want.path, "line": want.line, "side": "RIGHT", "body": want.body}
    if want.start_line is not None:
        comment.update(start_line=want.start_line, start_side="RIGHT")
    return comment


def _publish_github(forge: ForgeRun, result: GateResult, wanted: list[Wanted], notes: list[str]) -> InlinePlan:
    assert forge.number is not None
    api: GithubApi = forge.github()
    plan = plan_inline_comments(wanted, _github_existing(list(api.review_comments(forge.number))))
    for item in [*plan.duplicates, *plan.delete]:
        api.delete_review_comment(item.comment_id)
    for item, want in plan.edit:
        api.edit_review_comment(item.comment_id, want.body)
    for item in plan.outdate:
        api.edit_review_comment(item.comment_id, outdated_body(item.body, result.target.head_sha))
        if item.thread_id:
            try:
                api.minimize_comment(item.thread_id)
            except ForgeError as error:
                notes.append(f"An outdated line comment was marked but not minimised: {error}.")
    for start in range(0, len(plan.create), COMMENTS_PER_REVIEW):
        batch = plan.create[start:start + COMMENTS_PER_REVIEW]
        api.create_review(forge.number, forge.check_sha, REVIEW_BODY, [_review_comment(want) for want in batch])
    return plan


# --- GitLab ---------------------------------------------------------------------------------------


def _gitlab_existing(discussions: list[dict[str, Any]], username: str) -> list[Existing]:
    existing: list[Existing] = []
    for discussion in discussions:
        notes = [note for note in discussion.get("notes") or [] if isinstance(note, dict)]
        if not notes:
            continue
        first = notes[0]
        body = str(first.get("body") or "")
        fingerprint = fingerprint_of(body)
        author = first.get("author") if isinstance(first.get("author"), dict) else {}
        if fingerprint is None or not username or (author or {}).get("username") != username:
            continue
        if not _starts_ours(body, fingerprint):
            continue
        position = first.get("position") if isinstance(first.get("position"), dict) else {}
        line = (position or {}).get("new_line")
        existing.append(Existing(
            fingerprint=fingerprint, comment_id=int(first.get("id") or 0),
            path=str((position or {}).get("new_path") or ""), line=line if isinstance(line, int) else None,
            body=body, answered=len([note for note in notes if not note.get("system")]) > 1,
            thread_id=str(discussion.get("id") or ""), resolved=bool(first.get("resolved"))))
    return existing


def _publish_gitlab(forge: ForgeRun, result: GateResult, wanted: list[Wanted]) -> InlinePlan:
    assert forge.number is not None
    api: GitlabApi = forge.gitlab()
    iid = forge.number
    plan = plan_inline_comments(wanted, _gitlab_existing(list(api.discussions(iid)), api.current_username()))
    for item in [*plan.duplicates, *plan.delete]:
        api.delete_discussion_note(iid, item.thread_id, item.comment_id)
    for item, want in plan.edit:
        if item.body != want.body:
            api.edit_discussion_note(iid, item.thread_id, item.comment_id, want.body)
        if item.resolved:
            api.resolve_discussion(iid, item.thread_id, False)
    for item in plan.outdate:
        if not is_outdated(item.body):
            api.edit_discussion_note(iid, item.thread_id, item.comment_id,
                                     outdated_body(item.body, result.target.head_sha))
        if not item.resolved:
            api.resolve_discussion(iid, item.thread_id, True)
    if plan.create:
        refs = api.diff_refs(iid)
        if not {"base_sha", "start_sha", "head_sha"} <= refs.keys():
            raise ForgeError(f"GET merge request {iid}: no diff_refs to place a discussion on")
        for want in plan.create:
            change = result.target.file(want.path)
            old_path = change.old_path if change is not None and change.old_path else want.path
            api.create_discussion(iid, want.body, {
                "position_type": "text", "base_sha": refs["base_sha"], "start_sha": refs["start_sha"],
                "head_sha": refs["head_sha"], "old_path": old_path, "new_path": want.path,
                "new_line": want.line})
    return plan


class InlineCommentsSink:
    name = "inline-comments"

    def applies(self, result: GateResult) -> bool:
        forge = result.forge
        return forge is not None and forge.writes_to_pull_request and forge.settings.inline_comments

    def publish(self, result: GateResult, context: SinkContext) -> None:
        forge = result.forge
        assert forge is not None
        place = "line comments" if forge.provider == "github" else "MR discussions"
        wanted, left_out = _wanted(result, forge.provider)
        try:
            if forge.provider == "github":
                plan = _publish_github(forge, result, wanted, context.log.notes)
            else:
                plan = _publish_gitlab(forge, result, wanted)
        except ForgeDenied as error:
            context.log.notes.append(f"The {place} were not published: {error}: the token may not write here "
                                     "(a fork's pull request, or missing pull-requests: write / the api scope). "
                                     "The check and the summary carry every finding; the verdict stands.")
            return
        except ForgeError as error:
            context.log.notes.append(f"The {place} were not all published: {error}. The verdict stands.")
            context.log.failures.append(f"{place}: {error}")
            return
        if left_out:
            context.log.notes.append(f"{left_out} more blocking finding(s) have no line comment "
                                     f"(at most {MAX_INLINE_COMMENTS} per push); the summary lists them.")
        if not plan.empty:
            context.log.notes.append(
                f"{place.capitalize()}: {len(plan.create)} written, {len(plan.edit)} updated, "
                f"{len(plan.outdate)} marked outdated, {len(plan.delete) + len(plan.duplicates)} removed.")
