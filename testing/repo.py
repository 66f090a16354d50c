"""Make real git repositories in temporary directories, from dicts of files."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# A value of None deletes the file on that branch; bytes are written as they are.
FileContent = str | bytes | None

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    completed = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return completed.stdout.decode("utf-8", "surrogateescape").strip()


def write_files(repo: Path, files: Mapping[str, FileContent]) -> None:
    for name, content in files.items():
        path = repo / name
        if content is None:
            git(repo, "rm", "-q", "--", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


def commit(repo: Path, files: Mapping[str, FileContent], message: str = "change") -> str:
    """Write the files, commit them all, return the new commit's SHA."""
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@dataclass(frozen=True)
class BranchRepo:
    path: Path
    base_sha: str
    head_sha: str


def make_repo(
    root: Path,
    base: Mapping[str, FileContent],
    branch: Mapping[str, FileContent] | None = None,
    *,
    branch_name: str = "feature",
    message: str = "feature work",
) -> BranchRepo:
    """A repository whose `main` holds `base` and whose checked-out `branch_name` adds `branch`."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    base_sha = commit(repo, base, "base")
    git(repo, "checkout", "-q", "-b", branch_name)
    head_sha = commit(repo, branch or {}, message) if branch is not None else base_sha
    return BranchRepo(repo, base_sha, head_sha)


def commit_to_base(repo: Path, files: Mapping[str, FileContent], base: str = "main") -> str:
    """Commit `files` on `base` and rebase the checked-out branch onto it, so they are part of
    the target side (the review policy is read there, never from the branch). Returns the new
    head SHA."""
    branch = git(repo, "rev-parse", "--abbrev-ref", "HEAD")
    git(repo, "checkout", "-q", base)
    commit(repo, files, "policy on the target side")
    git(repo, "checkout", "-q", branch)
    git(repo, "rebase", "-q", base)
    return git(repo, "rev-parse", "HEAD")


def write_base_config(repo: Path, text: str, name: str = ".reviewgate.toml") -> str:
    """The repository's review config, committed on the target side (`main`)."""
    return commit_to_base(repo, {name: text})
