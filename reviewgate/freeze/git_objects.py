"""git's object names, computed and checked here: what a blob's bytes must hash to."""

from __future__ import annotations

import hashlib


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
