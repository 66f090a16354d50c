"""The pull request facts in GitHub's event payload ($GITHUB_EVENT_PATH): its number and head.

Pure readers of a path, tested against captured payloads; the CI context parser (ci/github.py)
may fill CiContext.pull_request_number itself, which then wins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PullRequestEvent:
    number: int | None = None
    # The PR's head commit. On `pull_request` events the checkout is a merge commit, which a
    # check run cannot be shown on: the check run goes on this SHA instead.
    head_sha: str | None = None


def _read(event_path: str | None) -> dict[str, Any]:
    if not event_path:
        return {}
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return event if isinstance(event, dict) else {}


def read_pull_request_event(event_path: str | None) -> PullRequestEvent:
    """`pull_request.number` / `.head.sha` (pull_request, pull_request_target), or
    `issue.number` when the issue is a PR (issue_comment); empty for pushes and unreadable files."""
    event = _read(event_path)
    pull = event.get("pull_request")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        head = pull.get("head")
        sha = head.get("sha") if isinstance(head, dict) else None
        return PullRequestEvent(int(pull["number"]), sha if isinstance(sha, str) and sha else None)
    issue = event.get("issue")
    if isinstance(issue, dict) and "pull_request" in issue and isinstance(issue.get("number"), int):
        return PullRequestEvent(int(issue["number"]))
    return PullRequestEvent()
