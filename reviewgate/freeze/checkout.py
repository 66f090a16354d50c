"""Blobs read from the checkout instead of from git, and used only when their bytes hash to the
blob id the commit names for their path.

A cold run of the duplicate-code lens reads every file of the tree, and inflating them is most of
what git then costs (64 MB at 4M lines: 0.3 s of git's CPU, the same again to carry them through a
pipe). The checkout usually holds the same bytes already. It is the branch's, though: its code
(an earlier CI step, or the verify run as the gate's user) may have rewritten a file, or put a
symlink, a FIFO or a link into `/proc` where a file was. So:

- every path is opened one component at a time, each relative to the directory above it and with
  O_NOFOLLOW, so no symlink anywhere in it is followed: the file opened is the one at that path
  inside the checkout, or none;
- only a regular file of the blob's exact size is opened (an lstat first, then the opened file's
  own fstat must be the same file), and no more than that size is read: a FIFO, a socket or a
  device is never opened, a file grown to any size costs no more than the blob, and O_NONBLOCK
  keeps a swap to a FIFO between the two from blocking (only a process with CAP_MKNOD, root
  already, could put a device there);
- the bytes are kept only when git's own hash of them (`blob <size>\\0<bytes>`, SHA-1 or SHA-256)
  is the blob id the commit names. Anything else (a rewritten file, line-end or LFS filters, a
  checkout of another commit) is read from git instead, so the result is git's in every case.

When most files of the first reads differ (the checkout is of another commit), the checkout is
left alone for the rest of the reader's life: each failed try costs a read and a hash more.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reviewgate.freeze.git_objects import blob_id

# Tries before the share that matched decides whether the checkout is worth reading at all.
TRIES_BEFORE_JUDGING = 64
# The share of those tries that must have matched for reading to go on.
MATCHING_SHARE_TO_GO_ON = 0.5

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class CheckoutReader:
    """Verified reads of a commit's files from the working tree at `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tried = 0
        self.matched = 0

    def worth_trying(self) -> bool:
        return self.tried < TRIES_BEFORE_JUDGING or self.matched >= self.tried * MATCHING_SHARE_TO_GO_ON

    def read(self, blobs: dict[str, tuple[str, int]]) -> dict[str, bytes]:
        """The bytes of each path (to its blob id and size) that the checkout holds exactly; the
        others are left out, for git to read."""
        found: dict[str, bytes] = {}
        if not blobs or not self.worth_trying():
            return found
        try:
            root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return found  # no checkout here (a bare repository, a removed directory)
        directories = _OpenDirectories(root)
        try:
            for path, (expected, size) in blobs.items():
                if not self.worth_trying():
                    break
                self.tried += 1
                data = _read_regular_file(directories, path, size)
                if data is not None and blob_id(data, len(expected)) == expected:
                    self.matched += 1
                    found[path] = data
        finally:
            directories.close()
        return found


class _OpenDirectories:
    """The directories of the path read last, open from the root down: the tree's paths come
    in git's order, so a directory is opened once for all the files under it."""

    def __init__(self, root: int) -> None:
        self.names: list[str] = []
        self.descriptors: list[int] = [root]

    def of(self, directory: list[str]) -> int | None:
        """A descriptor of `directory` (its components from the root), or None when a component
        is not a directory reached without following a symlink."""
        common = 0
        while common < len(self.names) and common < len(directory) and self.names[common] == directory[common]:
            common += 1
        while len(self.names) > common:
            self.names.pop()
            os.close(self.descriptors.pop())
        for name in directory[common:]:
            try:
                descriptor = os.open(name, _DIRECTORY_FLAGS, dir_fd=self.descriptors[-1])
            except OSError:
                return None
            self.names.append(name)
            self.descriptors.append(descriptor)
        return self.descriptors[-1]

    def close(self) -> None:
        for descriptor in self.descriptors:
            os.close(descriptor)
        self.names, self.descriptors = [], []


def _read_regular_file(directories: _OpenDirectories, path: str, size: int) -> bytes | None:
    """The bytes of the regular file at `path`, when it is one of exactly `size` bytes."""
    *directory, name = path.split("/")
    if any(part in ("", ".", "..") for part in (*directory, name)):
        return None  # not a path git checks out; never resolved against the file system
    parent = directories.of(directory)
    if parent is None:
        return None
    try:
        listed = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISREG(listed.st_mode) or listed.st_size != size:
            return None
        descriptor = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino) or not stat.S_ISREG(opened.st_mode):
            return None
        # The blob's size and no more: bytes that hash to its id are its bytes, whatever follows.
        data = os.read(descriptor, size)
        while len(data) < size and (more := os.read(descriptor, size - len(data))):
            data += more
        return data if len(data) == size else None
    except OSError:
        return None
    finally:
        os.close(descriptor)
