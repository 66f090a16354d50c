"""A read-only export of the head tree for an agent CLI, and fingerprints that catch mutation.

The command reviewer "runs in a fresh read-only snapshot of the head tree ... from
which the files the reviewer may not read are removed; the snapshot and the real checkout
are hashed before and after, and any change is a reviewer mutation: verdict blocked".
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Set as AbstractSet
from pathlib import Path

from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.target.git import read_blobs, run_git
from reviewgate.target.git_control import control_digests

_READ_ONLY_FILE = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
_READ_ONLY_DIRECTORY = _READ_ONLY_FILE | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def export_snapshot(repo: Path, commit: str, destination: Path, branch_paths: AbstractSet[str]) -> list[str]:
    """Write the files of `commit` into `destination` (no .git, nothing of the real checkout),
    remove the withheld files, make it read-only; returns the removed paths.

    The files are the blobs' bytes, written here: `git archive` would apply the tree's own
    `.gitattributes` (an `export-ignore` hides a file from the agent, `export-subst` rewrites
    it, a `filter=` runs a smudge command from the repository's config)."""
    destination.mkdir(parents=True)
    root = os.fsencode(destination)
    entries = _tree_entries(repo, commit)
    contents = read_blobs(repo, [sha for mode, sha, _ in entries if mode != "160000"])
    written = iter(contents)
    links: set[bytes] = set()
    for mode, _sha, raw_name in entries:
        data = b"" if mode == "160000" else next(written)
        parts = raw_name.split(b"/")
        if any(b"/".join(parts[:length]) in links for length in range(1, len(parts))):
            continue  # under a link (a hand-made tree): writing there could leave the snapshot
        target = os.path.join(root, raw_name)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if mode == "160000":  # a submodule: an empty directory, as a checkout without it has
                os.makedirs(target, exist_ok=True)
            elif mode == "120000":
                os.symlink(data, target)
                links.add(raw_name)
            else:
                with open(target, "wb") as handle:
                    handle.write(data)
        except OSError:
            continue  # a hand-made tree naming one path twice (file and directory): no checkout has it
    removed: list[str] = []
    for path in sorted(_walk(destination)):
        if withheld_reason(path, branch_paths) is not None:
            (destination / path).unlink()
            removed.append(path)
    for directory, _, files in os.walk(destination):
        for name in files:
            target_path = Path(directory) / name
            if not target_path.is_symlink():
                target_path.chmod(_READ_ONLY_FILE)
        Path(directory).chmod(_READ_ONLY_DIRECTORY)
    return removed


def _tree_entries(repo: Path, commit: str) -> list[tuple[str, str, bytes]]:
    """(mode, object id, path bytes) of every file of `commit`. A path git would never check out
    (an empty, `.`, `..` or `.git` part: only a hand-made tree holds one) is left out, so nothing
    is written outside the snapshot."""
    listing = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", commit).stdout
    entries: list[tuple[str, str, bytes]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, _kind, sha = meta.decode("ascii").split()
        if any(part in (b"", b".", b"..") or part.lower() == b".git" for part in name.split(b"/")):
            continue
        entries.append((mode, sha, name))
    return entries


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
    """The real checkout's state: HEAD, refs, the index's entries, each tracked file's status
    (mode, size, times, inode: any write changes its change time), untracked files with their
    content (ignored files, such as our own outputs, are left out), and the repository's own
    control files (config, hooks, info/: where an agent would plant a filter, a hook or an
    fsmonitor for the gate's later git calls to run).

    Read without any git command that opens the work tree's files: `git diff` against the work
    tree would run the clean filter a changed config names, before the change is seen."""
    digest = hashlib.sha256()
    for control, value in sorted(control_digests(repo).items()):
        digest.update(f"{control}\0{value}\0".encode("utf-8", "surrogateescape"))
    for args in (("rev-parse", "HEAD"), ("for-each-ref", "--format=%(refname) %(objectname)")):
        digest.update(run_git(repo, *args, check=False).stdout)
    # The index's entries (mode, blob, stage, path), and each tracked file's status in the work tree.
    for entry in run_git(repo, "ls-files", "-z", "--stage").stdout.split(b"\0"):
        if entry:
            name = entry.partition(b"\t")[2]
            digest.update(entry + b"\0" + _status(os.path.join(os.fsencode(repo), name)))
    untracked = run_git(repo, "ls-files", "-z", "--others", "--exclude-standard").stdout
    for name in sorted(untracked.split(b"\0")):
        if name:
            path = repo / os.fsdecode(name)
            digest.update(name + b"\0")
            if path.is_file() and not path.is_symlink():
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _status(path: bytes) -> bytes:
    try:
        info = os.lstat(path)
    except OSError:
        return b"missing"
    return f"{info.st_mode:o} {info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino}".encode()
