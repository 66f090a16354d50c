"""Whether a change says it is a fix: its branch name or head commit subject starts with
fix/bug/hotfix. Only deterministic lenses read this; it never reaches a
model's prompt, because the subject is the author's own words about the change."""

from __future__ import annotations

import re
from pathlib import Path

from reviewgate.freeze.commit_names import checked_out_branch, commit_subject
from reviewgate.freeze.git import run_git
from reviewgate.lazy_patterns import LazyPattern

# "fix", "fixes", "fixed", "bug", "bugfix", "hotfix", then a separator or the end: `fix/login`,
# `bugfix-123`, `fix: handle None`, `Fix(api): ...`. "fixture" or "buggy" are not fixes.
_FIX_WORDS = LazyPattern(r"^(?:fix(?:es|ed)?|bug(?:fix)?|hotfix)(?:$|[/\-_:(\s!#.])", re.IGNORECASE)


def says_fix(text: str) -> bool:
    return bool(_FIX_WORDS.match(text.strip()))


def branch_name(repo: Path, head: str) -> str | None:
    """The branch being reviewed: `--head` when it names a branch, else the checked-out branch."""
    if head != "HEAD":
        completed = run_git(
            repo, "rev-parse", "--verify", "--quiet", "--symbolic-full-name", head, check=False
        )
        full = completed.stdout.decode("utf-8", "surrogateescape").strip()
        for prefix in ("refs/heads/", "refs/remotes/"):
            if full.startswith(prefix):
                name = full.removeprefix(prefix)
                return name.split("/", 1)[1] if prefix == "refs/remotes/" and "/" in name else name
        return None
    return checked_out_branch(repo)


def head_subject(repo: Path, head_sha: str) -> str:
    return commit_subject(repo, head_sha).strip()


def is_marked_as_fix(repo: Path, head_sha: str, head: str = "HEAD", branch: str | None = None) -> bool:
    """`branch` is the CI's name for the head branch when it knows one (a detached checkout has none)."""
    name = branch or branch_name(repo, head)
    return (name is not None and says_fix(name)) or says_fix(head_subject(repo, head_sha))
