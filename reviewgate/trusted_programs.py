"""The programs the gate runs after the verify, found and sealed before it.

The verify executes the branch under review: whatever it can write (as a normal user: the
user's `~/.local/bin`, first on PATH on GitHub's runners; as root: what its dedicated uid owns
or what is writable by all) may hold a program the gate would run afterwards with its token and
keys. So each such program is resolved to an absolute path before the verify runs, refused when
the verify's principal could replace it (as root, where the verify is another uid), and
fingerprinted (device, inode, size, times, sha256); just before it runs the fingerprint is taken
again, and any change blocks.

The check is on the path as found and on the file it resolves to, and on every directory above
either: a directory the verify can write lets it swap the entry for its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import NamedTuple

from reviewgate.errors import BlockedError

_SHEBANG_BYTES = 256  # a `#!` line longer than this is not one the kernel reads either (BINPRM_BUF_SIZE)


class UntrustedProgram(BlockedError):
    """A program the gate may not run: the one-line reason names it (exit 3)."""


class Fingerprint(NamedTuple):
    """What a program file was when it was sealed."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int  # set by the kernel on every write: no user can put it back
    sha256: str


def fingerprint(path: Path, *, content: bool = True) -> Fingerprint:
    """A program only its owner may read (mode 711), or one sealed without `content`, is sealed
    by its status alone: the change time still moves with any write."""
    info = path.stat()
    if not content:
        return Fingerprint(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, "")
    digest = hashlib.sha256()
    try:
        with path.open("rb") as program:
            for block in iter(lambda: program.read(1 << 20), b""):
                digest.update(block)
    except PermissionError:
        return Fingerprint(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, "")
    return Fingerprint(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, digest.hexdigest())


def _verify_uid(uid: int) -> bool:
    # Imported here: a local run's system programs are root's, and never load the verify's module.
    from reviewgate.verify.principal import VERIFY_UID_COUNT, VERIFY_UID_FIRST

    return VERIFY_UID_FIRST <= uid < VERIFY_UID_FIRST + VERIFY_UID_COUNT


def _writable_by_verify(path: Path, *, directory: bool) -> bool:
    """Whether the verify's dedicated uid (no groups but its own gid) can write `path` as root
    runs it. A sticky directory writable by all (/tmp) lets it add entries, never replace
    another's: that is not a way in to an entry the verify does not own."""
    info = path.lstat()
    if (info.st_uid != 0 and _verify_uid(info.st_uid)) or \
            (info.st_gid != 0 and info.st_mode & stat.S_IWGRP and _verify_uid(info.st_gid)):
        return True
    writable_by_others = bool(info.st_mode & stat.S_IWOTH) and not stat.S_ISLNK(info.st_mode)
    return writable_by_others and not (directory and info.st_mode & stat.S_ISVTX)


def verify_can_replace(path: Path) -> Path | None:
    """The first of `path` (as found and resolved) and the directories above it that the verify
    could write, or None. As a normal user the verify is the same user: nothing is refused here,
    and the fingerprint taken before the verify catches a change instead."""
    if os.geteuid() != 0:
        return None
    for candidate in dict.fromkeys((path, Path(os.path.realpath(path)))):
        if _writable_by_verify(candidate, directory=False):
            return candidate
        for parent in candidate.parents:
            if _writable_by_verify(parent, directory=True):
                return parent
    return None


def interpreter(path: Path) -> str | None:
    """The program a `#!` script names (`/usr/bin/env node`: `node`), which runs it too."""
    try:
        with path.open("rb") as script:
            head = script.read(_SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        rest = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        return rest[0] if rest else None
    return words[0]


class TrustedProgram(NamedTuple):
    """A program resolved before the verify: its absolute path and what it was then."""

    name: str  # as configured
    path: Path
    fingerprint: Fingerprint

    def check(self, *, content: bool = True) -> None:
        """Just before it runs: still the same file, or UntrustedProgram. Without `content`, the
        status alone (device, inode, size, times): any write or replacement changes the change
        time, which no user can set back, so a program run hundreds of times (git) is not hashed
        each time."""
        try:
            # A program sealed by its status (no hash) is checked by its status.
            now = fingerprint(self.path, content=content and bool(self.fingerprint.sha256))
            if not content or not self.fingerprint.sha256:
                now = now._replace(sha256=self.fingerprint.sha256)
        except OSError as error:
            raise UntrustedProgram(f"{self.name!r} ({self.path}) cannot be read any more: "
                                   f"{error.strerror or error}") from None
        if now != self.fingerprint:
            raise UntrustedProgram(f"{self.name!r} ({self.path}) changed after it was resolved before the verify; "
                                   "the changed program is not run") from None


def resolve(name: str, search_path: str | None = None, *, content: bool = True) -> TrustedProgram:
    """`name` (a bare name looked up on PATH, or a path) as an absolute, sealed program; without
    `content` sealed by its status alone (no hash: what every run pays for git)."""
    found = shutil.which(name, path=search_path) if os.sep not in name else name
    if found is None or not Path(found).is_file():
        raise UntrustedProgram(f"{name!r}: not found on PATH" if os.sep not in name else f"{name!r}: no such program")
    path = Path(os.path.abspath(found))
    writable = verify_can_replace(path)
    if writable is not None:
        raise UntrustedProgram(f"{name!r} ({path}) is not run: {writable} is writable by the verify's principal, "
                               "which could replace it; install it where only root can write")
    return TrustedProgram(name, path, fingerprint(path, content=content))


def resolve_with_interpreter(name: str, search_path: str | None = None) -> tuple[TrustedProgram, ...]:
    """The program and, for a script, the interpreter its `#!` line names: both run."""
    program = resolve(name, search_path)
    named = interpreter(program.path)
    return (program,) if named is None else (program, resolve(named, search_path))
