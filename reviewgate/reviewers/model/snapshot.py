"""A read-only export of the head tree for an agent CLI, and fingerprints that catch mutation.

The command reviewer "runs in a fresh read-only snapshot of the head tree ... from
which the files the reviewer may not read are removed; the snapshot and the real checkout
are hashed before and after, and any change is a reviewer mutation: verdict blocked".
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tarfile
from collections.abc import Set as AbstractSet
from pathlib import Path

from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.target.git import run_git

_READ_ONLY_FILE = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
_READ_ONLY_DIRECTORY = _READ_ONLY_FILE | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def export_snapshot(repo: Path, commit: str, destination: Path, branch_paths: AbstractSet[str]) -> list[str]:
    """Export `commit` into `destination` (git archive: no .git, nothing of the real checkout),
    remove the withheld files, make it read-only; returns the removed paths."""
    archive = run_git(repo, "archive", "--format=tar", commit).stdout
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "tar_filter"):  # Python 3.10.12+/3.11.4+: refuse links out of the tree
            tar.extractall(destination, filter="tar")
        else:  # pragma: no cover - older interpreters; git archive writes only repository paths
            tar.extractall(destination)
    removed: list[str] = []
    for path in sorted(_walk(destination)):
        if withheld_reason(path, branch_paths) is not None:
            (destination / path).unlink()
            removed.append(path)
    for directory, _, files in os.walk(destination):
        for name in files:
            target = Path(directory) / name
            if not target.is_symlink():
                target.chmod(_READ_ONLY_FILE)
        Path(directory).chmod(_READ_ONLY_DIRECTORY)
    return removed


def remove_snapshot(destination: Path) -> None:
    """Give write permission back first: rmtree cannot delete inside read-only directories."""
    for directory, _, _ in os.walk(destination):
        Path(directory).chmod(stat.S_IRWXU)
    shutil.rmtree(destination, ignore_errors=True)


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    for directory, directories, files in os.walk(root):
        for name in files + [entry for entry in directories if (Path(directory) / entry).is_symlink()]:
            found.append((Path(directory) / name).relative_to(root).as_posix())
    return found


def tree_fingerprint(root: Path) -> str:
    """Every path, mode and content (or link target) under `root`."""
    digest = hashlib.sha256()
    for directory, directories, files in sorted(os.walk(root)):
        directories.sort()
        for name in sorted(files + directories):
            path = Path(directory) / name
            info = path.lstat()
            digest.update(
                f"{path.relative_to(root).as_posix()}\0{info.st_mode:o}\0".encode("utf-8", "surrogateescape")
            )
            if path.is_symlink():
                digest.update(os.readlink(path).encode("utf-8", "surrogateescape"))
            elif path.is_file():
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def checkout_fingerprint(repo: Path) -> str:
    """The real checkout's state as git sees it: HEAD, refs, staged and unstaged changes and
    untracked files with their content (ignored files, such as our own outputs, are left out)."""
    digest = hashlib.sha256()
    for args in (
        ("rev-parse", "HEAD"),
        ("for-each-ref", "--format=%(refname) %(objectname)"),
        ("diff", "--binary", "--no-ext-diff", "--no-textconv", "HEAD"),
        ("diff", "--binary", "--no-ext-diff", "--no-textconv", "--cached"),
    ):
        digest.update(run_git(repo, *args, check=False).stdout)
    untracked = run_git(repo, "ls-files", "-z", "--others", "--exclude-standard").stdout
    for name in sorted(untracked.split(b"\0")):
        if name:
            path = repo / os.fsdecode(name)
            digest.update(name + b"\0")
            if path.is_file() and not path.is_symlink():
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
