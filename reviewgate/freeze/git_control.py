"""The files of a git directory through which a change to it runs code (hooks, a filter or an
fsmonitor named in config) or changes what git reads (attributes, alternates, grafts, shallow),
as digests: what the gate compares around anything that could write there (the verify, an
agent reviewer)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from reviewgate.freeze.git import GitFailure, run_git

CONTROL_FILES = ("config", "config.worktree", "commondir", "info", "hooks", "objects/info/alternates",
                 "shallow")


def path_digest(path: str, skip: frozenset[str] = frozenset()) -> str:
    """A file's content, a link's target, or a directory's names and contents, recursively
    (less the entries named in `skip`, at any depth)."""
    try:
        if os.path.islink(path):
            return "link:" + os.readlink(path)
        if os.path.isdir(path):
            digest = hashlib.sha256()
            for name in sorted(set(os.listdir(path)) - skip):
                digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
                digest.update(path_digest(os.path.join(path, name), skip).encode("utf-8", "replace") + b"\0")
            return "directory:" + digest.hexdigest()
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return "absent"
    except OSError as error:
        return f"unreadable: {error.strerror}"


def control_digests(repo: Path) -> dict[str, str]:
    """`git <name>` -> digest, for the repository's git directory and its common directory."""
    try:
        listed = run_git(repo, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir").stdout
    except (GitFailure, OSError):
        return {}
    directories = sorted({os.fsdecode(line) for line in listed.split(b"\n") if line})
    digests: dict[str, str] = {}
    for index, directory in enumerate(directories):
        where = "" if index == 0 else f" ({directory})"
        for name in CONTROL_FILES:
            digests[f"git {name}{where}"] = path_digest(os.path.join(directory, name))
    return digests
