"""Which merged pull requests a repository's history holds: the first-parent walk of HEAD, where
a two-parent commit naming a PR is a merged PR (base M^1, head M^2) and a one-parent commit whose
subject ends in `(#N)` is a squash merge (base C^, head C). Everything else is a direct push."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

# GitHub's merge-button subject; the branch is what GITHUB_HEAD_REF held on that PR's runs.
_MERGE_SUBJECT = re.compile(r"^Merge pull request #(?P<number>\d+) from (?P<owner>[^/\s]+)/(?P<branch>\S+)")
# A squash merge (and a merge commit whose subject was edited to the PR title) ends in `(#N)`.
_NUMBER_SUFFIX = re.compile(r"\(#(?P<number>\d+)\)\s*$")


@dataclass(frozen=True)
class PullRequest:
    number: int
    kind: str  # merge | squash
    base: str  # the base commit the PR was reviewed against
    head: str  # the PR's head commit
    head_ref: str | None  # the head branch name where the history records it
    subject: str  # the head commit's subject, as the gate reads it
    merged_commit: str  # the commit on the first-parent history


def git_output(repo: Path, *args: str) -> str:
    completed = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return completed.stdout.decode("utf-8", "replace")


def pull_request_from(commit: str, parents: list[str], subject: str) -> tuple[int, str | None] | None:
    """The PR number and head branch a first-parent commit records, or None for a direct push."""
    if len(parents) == 2:
        merge = _MERGE_SUBJECT.match(subject)
        if merge:
            return int(merge["number"]), merge["branch"]
    suffix = _NUMBER_SUFFIX.search(subject)
    if suffix and len(parents) in (1, 2):
        return int(suffix["number"]), None
    return None


def list_pull_requests(repo: Path, count: int, skip: int = 0) -> list[PullRequest]:
    """The last `count` merged PRs of HEAD's first-parent history after the newest `skip`, newest first."""
    log = git_output(repo, "log", "--first-parent", "--format=%H%x00%P%x00%s", "HEAD")
    found: list[PullRequest] = []
    for line in log.splitlines():
        if len(found) >= count:
            break
        commit, parent_text, subject = line.split("\x00", 2)
        parents = parent_text.split()
        recorded = pull_request_from(commit, parents, subject)
        if recorded is None:
            continue
        number, head_ref = recorded
        if skip > 0:
            skip -= 1
            continue
        if len(parents) == 2:
            head_subject = git_output(repo, "log", "-1", "--format=%s", parents[1]).strip()
            found.append(PullRequest(number, "merge", parents[0], parents[1], head_ref, head_subject, commit))
        else:
            found.append(PullRequest(number, "squash", parents[0], commit, None, subject, commit))
    return found


def pull_request_commits(repo: Path, request: PullRequest) -> list[str]:
    """The commits a PR brought: M^1..M^2 for a merge, the squash commit itself otherwise."""
    if request.kind == "squash":
        return [request.head]
    return git_output(repo, "rev-list", f"{request.base}..{request.head}").split()
