"""git's object names, computed and checked here: what a blob's bytes must hash to, and the blobs
a `git cat-file --batch` answers with, each checked as it is read."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import threading
from typing import IO

# What is passed over of a blob too large to keep is read and dropped in pieces this large.
_SKIP_BYTES = 1 << 20


class StoreTampered(Exception):
    """A blob whose bytes do not hash to its name: the object store was rewritten after the freeze."""


def blob_id(data: bytes, id_length: int = 40) -> str:
    """git's id of a blob of these bytes, in the repository's hash (SHA-1: 40 hex digits, SHA-256: 64)."""
    hashed = (hashlib.sha256 if id_length == 64 else hashlib.sha1)(b"blob %d\0" % len(data), usedforsecurity=False)
    hashed.update(data)  # not joined to the header: a copy of a large file less
    return hashed.hexdigest()


def checked_blob(object_id: bytes, data: bytes) -> bytes:
    """`data` as git returned it for `object_id`, after checking that it hashes to that id: git
    trusts its loose objects, so one rewritten in place (same name, new bytes: the verify runs
    the branch's code beside the store) would otherwise be reviewed in the original's place."""
    if blob_id(data, len(object_id)).encode() != object_id:
        raise StoreTampered(f"git object {object_id.decode('ascii', 'replace')} does not hold the bytes it names: "
                            "the repository's object store was changed after the freeze")
    return data


def answer_batch(process: subprocess.Popen[bytes], names: list[str], max_bytes: int) -> dict[str, bytes] | None:
    """The blobs `names` name (none holds a newline), by name, from a `git cat-file --batch`
    process: the request written by a thread while the answer is read (git stops reading it while
    its answer fills the pipe), and the process waited for. Missing names and non-blobs are left
    out, and blobs over `max_bytes` too, read past without being kept. None when the answer is cut
    short (git failed: its exit code says why)."""
    assert process.stdin is not None and process.stdout is not None
    request = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
    writer = threading.Thread(target=_write_request, args=(process.stdin, request), daemon=True)
    writer.start()
    try:
        return _read_answers(process.stdout, names, max_bytes)
    finally:
        process.stdout.close()
        writer.join()
        process.wait()


def _write_request(stdin: IO[bytes], request: bytes) -> None:
    with contextlib.suppress(BrokenPipeError):  # git ended early: its exit code says why
        stdin.write(request)
    with contextlib.suppress(BrokenPipeError):  # the pipe is closed even when its flush fails
        stdin.close()


def _read_answers(stdout: IO[bytes], names: list[str], max_bytes: int) -> dict[str, bytes] | None:
    found: dict[str, bytes] = {}
    for name in names:
        header = stdout.readline()
        if not header.endswith(b"\n"):
            return None
        fields = header[:-1].split(b" ")
        if len(fields) != 3 or not fields[2].isdigit():
            continue  # "<name> missing" (or ambiguous): no content follows
        size = int(fields[2])
        if fields[1] == b"blob" and size <= max_bytes:
            data = stdout.read(size)
            if len(data) != size:
                return None
            found[name] = checked_blob(fields[0], data)
        else:
            while size > 0:
                skipped = len(stdout.read(min(size, _SKIP_BYTES)))
                if not skipped:
                    return None
                size -= skipped
        if stdout.read(1) != b"\n":  # the batch format ends every object with a newline
            return None
    return found
