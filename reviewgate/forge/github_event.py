"""The pull request number from GitHub's event payload ($GITHUB_EVENT_PATH).

Pure reader of a path, tested against captured payloads; the CI context parser (ci/github.py)
may fill CiContext.pull_request_number itself, which then wins.
"""

from __future__ import annotations

import json
from pathlib import Path


def pull_request_number(event_path: str | None) -> int | None:
    """`pull_request.number` (pull_request, pull_request_target) or `issue.number` when the
    issue is a PR (issue_comment); None for pushes and unreadable payloads."""
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(event, dict):
        return None
    pull = event.get("pull_request")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        return int(pull["number"])
    issue = event.get("issue")
    if isinstance(issue, dict) and "pull_request" in issue and isinstance(issue.get("number"), int):
        return int(issue["number"])
    return None
