"""CI conditions for tests: captured event payloads with real SHAs swapped in, shallow clones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testing.repo import git

PAYLOADS = Path(__file__).resolve().parents[1] / "tests" / "payloads"
# The placeholder SHAs the captured payloads carry (see tests/payloads/README.md).
PLACEHOLDER_BASE = "1" * 40
PLACEHOLDER_HEAD = "2" * 40
PLACEHOLDER_MERGE = "3" * 40


def load_payload(name: str, **shas: str) -> dict[str, Any]:
    """A captured payload with placeholders replaced: base=..., head=..., merge=...."""
    text = (PAYLOADS / name).read_text(encoding="utf-8")
    for key, placeholder in (
        ("base", PLACEHOLDER_BASE),
        ("head", PLACEHOLDER_HEAD),
        ("merge", PLACEHOLDER_MERGE),
    ):
        if key in shas:
            text = text.replace(placeholder, shas[key])
    data: dict[str, Any] = json.loads(text)
    return data


def github_env(directory: Path, event_name: str, payload: dict[str, Any], **extra: str) -> dict[str, str]:
    """The variables a GitHub runner sets, with the event written where GITHUB_EVENT_PATH points."""
    event_path = directory / f"event-{event_name}.json"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        **extra,
    }


def shallow_clone(source: Path, destination: Path, branch: str, depth: int = 1) -> Path:
    """`git clone --depth N --branch B file://source`, as actions/checkout or GitLab's GIT_DEPTH do."""
    git(
        source.parent,
        "clone",
        "-q",
        f"--depth={depth}",
        "--branch",
        branch,
        f"file://{source}",
        str(destination),
    )
    return destination


def bare_origin(repo: Path) -> Path:
    """A bare repository beside `repo`, standing in for the forge's copy: `repo`'s remote
    `origin`, with every branch of `repo` pushed to it. CI clones are made from it."""
    origin = repo.parent / "origin.git"
    git(repo.parent, "init", "-q", "--bare", "-b", "main", str(origin))
    git(repo, "remote", "add", "origin", f"file://{origin}")
    git(repo, "push", "-q", "origin", "--all")
    return origin


def push_payload(branch: str, before: str, after: str, *, forced: bool = False) -> dict[str, Any]:
    """GitHub's `push` event for `branch` of a repository whose default branch is `main`;
    `before` all zeros for a push that creates the branch."""
    payload = load_payload("github_push.json", base=before, head=after)
    payload.update(ref=f"refs/heads/{branch}", forced=forced, created=set(before) == {"0"})
    return payload
