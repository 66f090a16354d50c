"""Read a file the app under review left in its tree (its JUnit results): bounded, whatever the
app made of the path.

The app chooses what is at the path. Opened with O_NONBLOCK (a FIFO would otherwise hold open()
until the job's timeout) and O_NOFOLLOW (a link is refused, not followed); then fstat must say a
regular file, the file actually opened must lie in the verify's tree (checked on the open file,
so a directory swapped for a link after any check cannot lead elsewhere), and no more than
`limit` bytes are read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path


class ReadBackError(Exception):
    """Why the file was not read, as a clause for the verify's notes."""


@dataclass(frozen=True)
class ReadBack:
    data: bytes
    modified: float  # st_mtime of the file read


def read_back(path: Path, within: Path, limit: int) -> ReadBack:
    """The bytes of the regular file `path` inside `within`, at most `limit` of them.
    FileNotFoundError when there is none; ReadBackError for anything else that is not one."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise
    except OSError as error:
        if os.path.islink(path):
            raise ReadBackError("is a link; only a regular file is read") from None
        raise ReadBackError(f"cannot be opened: {error.strerror or error}") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise ReadBackError("is not a regular file (a FIFO, a device or a directory is not read)")
        if not _opened_within(handle, path, within):
            raise ReadBackError("leads outside the verify's tree")
        if info.st_size > limit:
            raise ReadBackError(f"is {info.st_size} bytes, over the {limit} bytes read back")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(handle, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ReadBackError(f"grew past the {limit} bytes read back while it was read")
        return ReadBack(b"".join(chunks), info.st_mtime)
    finally:
        os.close(handle)


def _opened_within(handle: int, path: Path, within: Path) -> bool:
    """Whether the open file's own path (what the kernel resolved) is under `within`."""
    try:
        opened = os.readlink(f"/proc/self/fd/{handle}")
    except OSError:  # no /proc here: the path resolved again is the best left
        opened = os.path.realpath(path)
    return Path(opened).is_relative_to(os.path.realpath(within))
