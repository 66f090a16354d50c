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
_GIT_EPOCH = 1767225600  # GIT_IDENTITY's dates in seconds, as `git fast-import` takes them


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
    if _imports_as_added(base, branch, message):
        # Hundreds of tests make one: three git processes (the commits in one `git fast-import`)
        # instead of eight; the same commits, SHAs included, as `git add` and `git commit` make.
        git(repo, "init", "-q", "-b", branch_name)
        base_sha, head_sha = _import_commits(repo, base, branch, branch_name, message)
        git(repo, "read-tree", "-u", "--reset", "HEAD")
        return BranchRepo(repo, base_sha, head_sha)
    git(repo, "init", "-q", "-b", "main")
    base_sha = commit(repo, base, "base")
    git(repo, "checkout", "-q", "-b", branch_name)
    head_sha = commit(repo, branch or {}, message) if branch is not None else base_sha
    return BranchRepo(repo, base_sha, head_sha)


# What `git add` would not store byte for byte (ignore and attribute files: filters, line endings,
# ignored paths) or `git commit -m` would refuse: those repositories are made the slow way.
_GIT_CONTROL_NAMES = frozenset({".gitignore", ".gitattributes", ".git", ".gitmodules"})


def _cleaned_message(message: str) -> str:
    """The message as `git commit -m` stores it (its default `whitespace` cleanup)."""
    lines = [line.rstrip() for line in message.split("\n")]
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept) + "\n" if kept else ""


def _imports_as_added(
    base: Mapping[str, FileContent], branch: Mapping[str, FileContent] | None, message: str
) -> bool:
    names = [*base, *(branch or {})]
    if any(part in _GIT_CONTROL_NAMES for name in names for part in name.split("/")):
        return False
    if any(content is None for content in base.values()):
        return False
    if any(content is None and name not in base for name, content in (branch or {}).items()):
        return False  # `git rm` of a file the base lacks fails: the slow way says so
    return branch is None or bool(_cleaned_message(message))


def _quoted(name: str) -> bytes:
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'.encode()


def _import_commits(
    repo: Path,
    base: Mapping[str, FileContent],
    branch: Mapping[str, FileContent] | None,
    branch_name: str,
    message: str,
) -> tuple[str, str]:
    """Commit `base` on `main` and `branch` on `branch_name` in one `git fast-import`, with the
    identity and dates of GIT_IDENTITY; returns both SHAs."""
    stamp = f"{_GIT_EPOCH} +0000"
    people = (f"author {GIT_IDENTITY['GIT_AUTHOR_NAME']} <{GIT_IDENTITY['GIT_AUTHOR_EMAIL']}> {stamp}\n"
              f"committer {GIT_IDENTITY['GIT_COMMITTER_NAME']} <{GIT_IDENTITY['GIT_COMMITTER_EMAIL']}> {stamp}\n")
    stream: list[bytes] = []

    def add_commit(ref: str, mark: int, text: str, files: Mapping[str, FileContent], parent: int | None) -> None:
        data = text.encode()
        stream.append(f"commit {ref}\nmark :{mark}\n{people}data {len(data)}\n".encode() + data + b"\n")
        if parent is not None:
            stream.append(f"from :{parent}\n".encode())
        for name, content in files.items():
            if content is None:
                stream.append(b"D " + _quoted(name) + b"\n")
                continue
            raw = content if isinstance(content, bytes) else content.encode("utf-8")
            stream.append(b"M 100644 inline " + _quoted(name) + f"\ndata {len(raw)}\n".encode() + raw + b"\n")
        stream.append(b"\n")

    add_commit("refs/heads/main", 1, "base\n", base, None)
    if branch is None:
        stream.append(f"reset refs/heads/{branch_name}\nfrom :1\n\n".encode())
    else:
        add_commit(f"refs/heads/{branch_name}", 2, _cleaned_message(message), branch, 1)
    stream.append(b"get-mark :1\n" + (b"get-mark :2\n" if branch is not None else b"get-mark :1\n"))
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    completed = subprocess.run(["git", "fast-import", "--quiet", "--done"], cwd=repo, env=env,
                               input=b"".join(stream) + b"done\n", capture_output=True, check=True)
    base_sha, head_sha = completed.stdout.decode().split()
    return base_sha, head_sha


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
