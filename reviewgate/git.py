"""The one way reviewgate runs git: a fixed environment so output never depends on user config."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reviewgate.errors import UsageError

# Settings that make git's output the same whatever the user's or the runner's config says.
# safe.directory: container actions mount a workspace owned by another user; this applies
# to our own calls only (command-line scope) and never touches anyone's config file.
_FIXED_CONFIG = (
    "core.quotepath=off",
    "color.ui=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "core.pager=cat",
    "safe.directory=*",
)


def git_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "LC_ALL": "C",
            "LANG": "C",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
        }
    )
    for name in ("GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return env


@dataclass(frozen=True)
class GitFailure(Exception):
    """A git command that failed; keeps everything needed to explain it."""

    args_run: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes

    def __str__(self) -> str:
        message = self.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit code {self.returncode}"
        return f"git {' '.join(self.args_run)}: {detail}"


def run_git(
    repo: Path, *args: str, input_bytes: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    command = ["git"]
    for setting in _FIXED_CONFIG:
        command += ["-c", setting]
    command += list(args)
    completed = subprocess.run(
        command, cwd=repo, env=git_environment(), input=input_bytes, capture_output=True, check=False
    )
    if check and completed.returncode != 0:
        raise GitFailure(tuple(args), completed.returncode, completed.stdout, completed.stderr)
    return completed


def git_text(repo: Path, *args: str) -> str:
    """Output of a git command that prints one value, such as a SHA."""
    return run_git(repo, *args).stdout.decode("utf-8", "surrogateescape").strip()


def repository_root(start: Path) -> Path:
    """The top of the work tree containing `start`, or a usage error saying it is not one."""
    if not start.is_dir():
        raise UsageError(f"{start}: not a directory")
    completed = run_git(start, "rev-parse", "--show-toplevel", check=False)
    if completed.returncode != 0:
        raise UsageError(f"{start}: not a git repository (run reviewgate inside a git checkout)")
    return Path(completed.stdout.decode("utf-8", "surrogateescape").strip())


def resolve_commit(repo: Path, ref: str) -> str | None:
    """The commit SHA a ref names, or None when it names no commit."""
    completed = run_git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("ascii").strip()


class TreeReader:
    """Reads files as they are in one commit, whatever is checked out; cached per path."""

    def __init__(self, repo: Path, commit: str) -> None:
        self.repo = repo
        self.commit = commit
        self._cache: dict[str, bytes | None] = {}

    def read_bytes(self, path: str) -> bytes | None:
        if path not in self._cache:
            completed = run_git(self.repo, "cat-file", "blob", f"{self.commit}:{path}", check=False)
            self._cache[path] = completed.stdout if completed.returncode == 0 else None
        return self._cache[path]

    def read_text(self, path: str) -> str | None:
        data = self.read_bytes(path)
        return None if data is None else data.decode("utf-8", "replace")

    def list_files(self) -> list[str]:
        output = run_git(self.repo, "ls-tree", "-r", "-z", "--name-only", self.commit).stdout
        return [name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name]

    def read_many(self, paths: list[str], max_bytes: int | None = None) -> dict[str, bytes]:
        """Many files at this commit in one `git cat-file --batch` process instead of one process
        per file (a 500,000-line repository has thousands). Files larger than `max_bytes` and
        non-blobs (submodules) are left out; the result is not cached."""
        wanted = set(paths)
        listing = run_git(self.repo, "ls-tree", "-r", "-z", "--long", self.commit).stdout
        blobs: list[tuple[str, str]] = []
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, raw_name = entry.partition(b"\t")
            _mode, kind, sha, listed_size = meta.split()
            name = raw_name.decode("utf-8", "surrogateescape")
            if kind != b"blob" or name not in wanted:
                continue
            if max_bytes is not None and int(listed_size) > max_bytes:
                continue
            blobs.append((name, sha.decode("ascii")))
        request = "".join(f"{sha}\n" for _, sha in blobs).encode("ascii")
        output = run_git(self.repo, "cat-file", "--batch", input_bytes=request).stdout
        contents: dict[str, bytes] = {}
        offset = 0
        for name, _sha in blobs:
            header_end = output.index(b"\n", offset)
            size = int(output[offset:header_end].split()[2])
            start = header_end + 1
            contents[name] = output[start : start + size]
            offset = start + size + 1  # the batch format ends every object with a newline
        return contents
