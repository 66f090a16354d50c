"""Proof that what the gate reads back from its cache is what the gate wrote.

A cache entry's name is a content key anyone can compute, so a branch (files committed under the
cache directory), the verify (the branch's own code, run by the gate) or a cache shared between
branches could otherwise hand the gate a faked model answer or a DRY pack that hides a copy.
Every entry therefore ends in an HMAC-SHA256 tag over its kind, its name and its exact bytes,
made with a key the branch's code never sees: `REVIEWGATE_CACHE_KEY` when set (a CI secret,
never passed to the verify), else 32 random bytes in `<cache dir>/.key`, created mode 0600 by
the first run. An entry whose tag does not check out (none, another key, another name) is a
miss: computed again and overwritten, never trusted, never an error.

The key is read once per run, before the verify, and held in memory. A cache directory that is
tracked in git, is a symlink or is reached through a symlink in the repository is not used at
all for the run (docs/security.md, "Caches").
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from reviewgate.file_writing import write_atomic
from reviewgate.own_directories import symlink_below, symlink_on_the_way, symlink_phrase, tracked_paths
from reviewgate.workspace_owner import give_to, owner_to_inherit

CACHE_KEY_VARIABLE = "REVIEWGATE_CACHE_KEY"
KEY_FILE = ".key"
KEY_BYTES = 32
# An entry's last line: its tag in hex (64 characters), then a newline.
_TAG_LINE_BYTES = 2 * hashlib.sha256().digest_size + 1


class CacheWarning(UserWarning):
    """The cache is not used for this run (printed as one line, said in the summary)."""


class ReviewCache(NamedTuple):
    """Where this run's cache lives and the key that seals its entries; no directory when caching is off."""

    directory: Path | None  # None: caching is off
    key: bytes = b""  # never printed: left out of the repr below
    refused: str = ""  # why caching is off for this run, when the directory was refused

    def __repr__(self) -> str:
        return f"ReviewCache(directory={self.directory!r}, refused={self.refused!r})"

    def seal(self, kind: str, name: str, data: bytes) -> bytes:
        """`data` as stored: followed by its tag line."""
        return data + self._tag(kind, name, data) + b"\n"

    def unseal(self, kind: str, name: str, stored: bytes) -> bytes | None:
        """The data of an entry this gate's key sealed under `kind` and `name`; None otherwise."""
        import hmac  # only when an entry is read

        if not self.key or len(stored) < _TAG_LINE_BYTES or not stored.endswith(b"\n"):
            return None
        data, tag = stored[:-_TAG_LINE_BYTES], stored[-_TAG_LINE_BYTES:-1]
        return data if hmac.compare_digest(tag, self._tag(kind, name, data)) else None

    def read(self, kind: str, path: Path) -> bytes | None:
        """The data of the entry at `path` (in the directory) when this gate's key sealed it
        there; None when absent, unproven, or not a plain file reached without a symlink (a
        restored cache may hold a link to anything: it is never followed)."""
        if self.directory is None or symlink_below(self.directory, path):
            return None
        try:
            stored = _read_plain_file(path)
        except OSError:
            return None
        return None if stored is None else self.unseal(kind, self._name(path), stored)

    def write(self, kind: str, path: Path, data: bytes) -> None:
        """Seal `data` and write it whole at `path`, never through a symlink; the directory is
        made on first write with its own `.gitignore`. OSError when the disk (or a link) refuses."""
        from reviewgate.report.files import create_own_directory  # the report package imports the gate

        assert self.directory is not None, "a cache that is off stores nothing"
        create_own_directory(self.directory)
        link = symlink_below(self.directory, path.parent)
        if link is not None:
            raise OSError(errno.ELOOP, f"{link} is a symlink, never written through")
        write_atomic(path, self.seal(kind, self._name(path), data))

    def remove(self, path: Path) -> None:
        """Remove the entry at `path` (a link itself, never what it points to)."""
        if self.directory is not None and symlink_below(self.directory, path.parent) is None:
            path.unlink(missing_ok=True)

    def _name(self, path: Path) -> str:
        """What an entry's seal binds it to besides its kind: its place in the cache directory."""
        assert self.directory is not None
        return path.relative_to(self.directory).as_posix()

    def _tag(self, kind: str, name: str, data: bytes) -> bytes:
        import hmac

        mac = hmac.new(self.key, digestmod=hashlib.sha256)
        # Lengths first: ("a", "bc") and ("ab", "c") are two different entries.
        mac.update(f"reviewgate-cache {len(kind)}:{kind} {len(name)}:{name}\n".encode("utf-8", "surrogateescape"))
        mac.update(data)
        return mac.hexdigest().encode("ascii")


NO_CACHE = ReviewCache(None)


def _read_plain_file(path: Path, limit: int = -1) -> bytes | None:
    """The bytes of a regular file, never through a symlink (O_NOFOLLOW raises OSError); None
    for anything else in its place. O_NONBLOCK: a FIFO there must not hang the run on open."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(limit) if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else None


def open_cache(directory: Path | None, repo: Path, environ: Mapping[str, str]) -> ReviewCache:
    """The cache at `directory` with this run's key; caching off (with a warning) when the
    directory cannot be trusted to be the gate's."""
    if directory is None:
        return NO_CACHE
    refused = ""
    link = symlink_on_the_way(repo, directory)
    if link is not None:
        refused = f"{directory} {symlink_phrase(directory, link)}"
    elif os.path.lexists(directory):
        tracked = tracked_paths(repo, directory)
        if tracked is None:
            refused = f"could not ask git whether {directory} is tracked"
        elif tracked:
            refused = f"{directory} is tracked in git ({tracked[0]}{' and more' if len(tracked) > 1 else ''})"
    if refused:
        message = f"the review cache is off for this run: {refused}; it was not read"
        warnings.warn(message, CacheWarning, stacklevel=2)
        return ReviewCache(None, refused=message)
    secret = environ.get(CACHE_KEY_VARIABLE, "")
    key = secret.encode("utf-8", "surrogateescape") if secret else _key_file(directory, repo)
    return ReviewCache(directory, key)


def _key_file(directory: Path, repo: Path) -> bytes:
    """The key kept in the cache directory, made on first use. A key that cannot be read or
    kept is a fresh one for this run alone: every entry then misses, nothing is trusted."""
    path = directory / KEY_FILE
    for _ in range(2):
        damaged = True
        try:
            key = _read_plain_file(path, KEY_BYTES + 1)
            if key is not None and len(key) == KEY_BYTES:
                return key
        except FileNotFoundError:
            damaged = False
        except OSError:
            pass  # a symlink in its place (O_NOFOLLOW refuses it) or unreadable: replaced below
        try:
            return _new_key_file(directory, path, repo, replace=damaged)
        except FileExistsError:
            continue  # a concurrent run made it first: read theirs
        except OSError:
            break  # a read-only cache: nothing is stored either
    return os.urandom(KEY_BYTES)


def _new_key_file(directory: Path, path: Path, repo: Path, *, replace: bool) -> bytes:
    """Write a new key beside `path`, then link it into place: a reader never sees half a key,
    and of two runs making one at once, the first link wins (FileExistsError for the other). A
    damaged key or a symlink in its place (`replace`) is removed first (the link itself, never
    its target): every entry sealed with the old key then misses once."""
    from reviewgate.report.files import create_own_directory  # the report package imports the gate

    create_own_directory(directory)
    if replace:
        path.unlink(missing_ok=True)
    key = os.urandom(KEY_BYTES)
    temporary = directory / f"{KEY_FILE}.{os.getpid()}.{key[:4].hex()}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            # actions/cache saves it as the checkout's owner; 0600 keeps every other user out.
            with contextlib.suppress(OSError):
                give_to(handle.fileno(), owner_to_inherit(repo))
            handle.write(key)
        os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return key
