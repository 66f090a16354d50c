"""Which base and head a CI run says to review: pure functions over an event payload or a
job's variables, so tests feed them captured payloads (read at the edge in github.py/gitlab.py).

GitHub payload shapes: "Webhook events and payloads" (pull_request, push, merge_group,
workflow_dispatch, schedule). GitLab: "Predefined CI/CD variables" (CI_MERGE_REQUEST_*,
CI_COMMIT_BEFORE_SHA, CI_DEFAULT_BRANCH).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from reviewgate.errors import UsageError

# A commit id: 40 hex digits (SHA-1) or 64 (SHA-256 repositories, git 2.29+).
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")

# Events whose head is the pull request's own head commit, never GITHUB_SHA (the test merge).
PULL_REQUEST_EVENTS = (
    "pull_request",
    "pull_request_target",
    "pull_request_review",
    "pull_request_review_comment",
)
# GitLab's merged-results and merge-train pipelines run on a synthetic merge commit.
GITLAB_MERGE_EVENT_TYPES = ("merged_result", "merge_train")


@dataclass(frozen=True)
class EventRefs:
    """What the event says: a base commit or a branch to take the merge-base with, a head,
    and the variable each came from (printed by `reviewgate freeze`)."""

    base_sha: str | None = None
    base_source: str | None = None
    base_branch: str | None = None
    head_sha: str | None = None
    head_source: str | None = None
    default_branch: str | None = None
    is_fork: bool = False
    pull_request_number: int | None = None

    def context_fields(self) -> dict[str, Any]:
        """The CiContext fields of the same names (every field of this record is one)."""
        return asdict(self)


def is_zero_sha(value: str | None) -> bool:
    """GitHub's `before` on a new branch and GitLab's CI_COMMIT_BEFORE_SHA on a first
    pipeline are all zeros: there is no previous commit."""
    return bool(value) and set(value or "") == {"0"}


def commit_sha(value: Any, where: str) -> str | None:
    """A commit SHA from untrusted CI data, or None when absent or all zeros. Anything else
    is refused here so it can never reach git's command line as an option."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _SHA.match(value.lower()):
        raise UsageError(f"{where}: expected a commit SHA (40 or 64 hex digits), got {str(value)[:80]!r}")
    return None if is_zero_sha(value) else value.lower()


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def commented_pull_request(event: Mapping[str, Any]) -> int | None:
    """The pull request an `issue_comment` event is about (a comment on a plain issue has none):
    a `VERIFY:` comment names its PR only this way."""
    issue = _table(event, "issue")
    number = issue.get("number")
    return number if "pull_request" in issue and isinstance(number, int) else None


def pushed_branch(ref: str | None) -> str | None:
    """The branch a push updated (`refs/heads/<name>`); None for a tag or no ref."""
    return ref.removeprefix("refs/heads/") if ref and ref.startswith("refs/heads/") else None


def push_refs(
    branch: str | None,
    default_branch: str | None,
    before: str | None,
    *,
    before_source: str,
    branch_source: str,
    target_source: str,
    head_sha: str | None,
    head_source: str | None,
) -> EventRefs:
    """Base and head for a push (a GitHub `push` event, a GitLab branch pipeline). A branch is
    judged against its target, the default branch: its whole change, with the policy read at
    the merge base on the target side. Never against `before`, the branch's own previous push:
    that would read the policy at a commit of the branch under review (a push that relaxes
    `fail_on` would approve the next one) and review only the last push's diff.

    A push to the default branch itself compares with `before`, the target's own previous tip
    (after a force-push, their merge base is an ancestor of it, still the target's history). A
    push that creates the default branch (`before` all zeros; GitLab's scheduled and manual
    pipelines too) has no earlier target commit: the head is the target, and there is no change
    against it to review."""
    if branch is not None and branch == default_branch and before:
        return EventRefs(
            before,
            f"{before_source}: the previous tip of the default branch {branch} ({target_source})",
            None,
            head_sha,
            head_source,
            default_branch,
        )
    if branch is None:
        pushed = "a tag or no branch"
    elif branch == default_branch:
        pushed = f"the default branch {branch} with no previous tip ({before_source} is all zeros or unset)"
    else:
        pushed = f"branch {branch} ({branch_source})"
    return EventRefs(
        None,
        f"push to {pushed}: merge-base with the target branch, {target_source}",
        default_branch,
        head_sha,
        head_source,
        default_branch,
    )


def github_refs(
    event_name: str | None, event: Mapping[str, Any], env: Mapping[str, str], where: str
) -> EventRefs:
    """Base and head for one GitHub Actions run. `where` names the event file in errors."""
    repository = _table(event, "repository")
    default_branch = _text(repository, "default_branch")
    current_sha = commit_sha(env.get("GITHUB_SHA"), "GITHUB_SHA")
    if event_name in PULL_REQUEST_EVENTS and "pull_request" in event:
        pull = _table(event, "pull_request")
        base, head = _table(pull, "base"), _table(pull, "head")
        number = pull.get("number", event.get("number"))
        return EventRefs(
            base_sha=commit_sha(base.get("sha"), f"{where}: pull_request.base.sha"),
            base_source=f"{event_name} event: pull_request.base.sha",
            base_branch=_text(base, "ref"),
            head_sha=commit_sha(head.get("sha"), f"{where}: pull_request.head.sha"),
            head_source=f"{event_name} event: pull_request.head.sha (GITHUB_SHA is the test merge commit)",
            default_branch=default_branch,
            is_fork=_text(_table(head, "repo"), "full_name") != _text(_table(base, "repo"), "full_name"),
            pull_request_number=number if isinstance(number, int) else None,
        )
    if event_name == "push":
        head_sha = commit_sha(event.get("after"), f"{where}: after") or current_sha
        head_source = "push event: after" if event.get("after") else "GITHUB_SHA"
        before = commit_sha(event.get("before"), f"{where}: before")
        forced = "; forced: from its merge base with after" if event.get("forced") else ""
        return push_refs(
            pushed_branch(_text(event, "ref")),
            default_branch,
            before,
            before_source=f"push event: before{forced}",
            branch_source="push event: ref",
            target_source="repository.default_branch",
            head_sha=head_sha,
            head_source=head_source,
        )
    if event_name == "merge_group":
        group = _table(event, "merge_group")
        return EventRefs(
            commit_sha(group.get("base_sha"), f"{where}: merge_group.base_sha"),
            "merge_group event: merge_group.base_sha",
            None,
            commit_sha(group.get("head_sha"), f"{where}: merge_group.head_sha") or current_sha,
            "merge_group event: merge_group.head_sha",
            default_branch,
        )
    base_input = _text(_table(event, "inputs"), "base")
    if event_name == "workflow_dispatch" and base_input:
        # A branch, tag or SHA the person typed: resolved by git like a --base flag.
        return EventRefs(
            None,
            "workflow_dispatch event: inputs.base",
            base_input,
            current_sha,
            "GITHUB_SHA",
            default_branch,
        )
    return EventRefs(
        None,
        f"{event_name or 'unknown'} event: merge-base with the default branch",
        default_branch,
        current_sha,
        "GITHUB_SHA" if current_sha else None,
        default_branch,
    )


def gitlab_refs(env: Mapping[str, str]) -> EventRefs:
    """Base and head for one GitLab CI job, from its predefined variables."""
    default_branch = env.get("CI_DEFAULT_BRANCH") or None
    current_sha = commit_sha(env.get("CI_COMMIT_SHA"), "CI_COMMIT_SHA")
    number = env.get("CI_MERGE_REQUEST_IID", "")
    merge_request = int(number) if number.isdigit() else None
    if env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA"):
        base_sha = commit_sha(env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA"), "CI_MERGE_REQUEST_DIFF_BASE_SHA")
        head_sha, head_source = current_sha, "CI_COMMIT_SHA"
        if env.get("CI_MERGE_REQUEST_EVENT_TYPE") in GITLAB_MERGE_EVENT_TYPES:
            # CI_COMMIT_SHA is the synthetic merge; the author's commit is the source branch head.
            head_sha = commit_sha(
                env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"), "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"
            )
            head_source = "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA (CI_COMMIT_SHA is the merged result)"
            if head_sha is None:
                raise UsageError(
                    "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: expected the source branch head in a "
                    f"{env.get('CI_MERGE_REQUEST_EVENT_TYPE')} pipeline, got nothing"
                )
        return EventRefs(
            base_sha,
            "CI_MERGE_REQUEST_DIFF_BASE_SHA",
            env.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME") or None,
            head_sha,
            head_source,
            default_branch,
            is_fork=env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "")
            != env.get("CI_MERGE_REQUEST_PROJECT_ID", ""),
            pull_request_number=merge_request,
        )
    # A branch (or tag) pipeline: judged against the default branch like a GitHub push.
    before = commit_sha(env.get("CI_COMMIT_BEFORE_SHA"), "CI_COMMIT_BEFORE_SHA")
    refs = push_refs(
        env.get("CI_COMMIT_BRANCH") or None,
        default_branch,
        before,
        before_source="CI_COMMIT_BEFORE_SHA",
        branch_source="CI_COMMIT_BRANCH",
        target_source="CI_DEFAULT_BRANCH",
        head_sha=current_sha,
        head_source="CI_COMMIT_SHA" if current_sha else None,
    )
    return replace(refs, pull_request_number=merge_request)
