"""The DRY lens's fingerprints of each file, kept between runs by the file's content.

A file's fingerprints depend on its bytes alone, so they are stored under git's blob id of the
file (the SHA-1 of its content, which `git ls-tree` lists for free) in a directory named by the
fingerprint format version: `<cache dir>/dry-index/v<format>/`. A run computes them only for the
blobs it has not seen and writes them as one pack file (creating a file costs more than filling
it: one pack, not one file per blob). An entry is the sorted distinct hashes (hashes.py) of the
file's line-start windows, 4 bytes each. A pack carries its format and a checksum of its content, and is
sealed with the run's cache key (cache_trust.py): a pack that does not check out (damaged, or
written by anyone but the gate: a branch, its verify, another job sharing the cache) is left aside
and its blobs are computed again, never trusted.

When a run finds more than MAX_PACKS packs it writes the entries of its own tree as one pack and
removes the packs it read (and damaged ones), so the cache holds about one tree's worth, not every
tree ever seen.

Nothing in an entry says anything about a path, a branch or a verdict: a run of the gate can only
add the entries of its own blobs, and those are what any run computes from the same bytes.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewgate.cache_trust import ReviewCache
from reviewgate.context import ReviewRequest
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import FINGERPRINT_FORMAT
from reviewgate.reviewers.builtin.lenses.duplication.hashes import HASH_TYPECODE, Hashes, distinct, no_hashes

SUBDIRECTORY = "dry-index"
MAX_PACKS = 8
_MAGIC = b"RGDX"
_HEADER = struct.Struct("<4sIII")  # magic, fingerprint format, entry count, CRC-32 of the rest
_ENTRY = struct.Struct("<20sI")  # blob id, how many hashes
# Stored little-endian whatever the machine, so a cache restored on another machine still reads.
_SWAPPED = sys.byteorder != "little"


def _little_endian(values: Hashes) -> Hashes:
    """`values` in the other byte order, a copy, where the machine is not little-endian."""
    if _SWAPPED:
        values = array(HASH_TYPECODE, values)
        values.byteswap()
    return values


def _pack(entries: dict[str, Hashes]) -> bytes:
    table, hashes = [], []
    for blob, values in sorted(entries.items()):
        table.append(_ENTRY.pack(bytes.fromhex(blob), len(values)))
        hashes.append(_little_endian(values).tobytes())
    body = b"".join(table) + b"".join(hashes)
    return _HEADER.pack(_MAGIC, FINGERPRINT_FORMAT, len(table), zlib.crc32(body)) + body


def _unpack(data: bytes) -> dict[str, Hashes] | None:
    """The entries of a pack, or None when it is not a whole pack of this format."""
    if len(data) < _HEADER.size:
        return None
    magic, version, count, checksum = _HEADER.unpack_from(data)
    body = memoryview(data)[_HEADER.size :]
    if magic != _MAGIC or version != FINGERPRINT_FORMAT or zlib.crc32(body) != checksum:
        return None
    offset = count * _ENTRY.size
    if offset > len(body):
        return None
    entries: dict[str, Hashes] = {}
    for blob, length in _ENTRY.iter_unpack(body[:offset]):
        if offset + 4 * length > len(body):
            return None
        values = no_hashes()
        values.frombytes(body[offset : offset + 4 * length])
        entries[blob.hex()] = _little_endian(values)
        offset += 4 * length
    return entries if offset == len(body) else None


@dataclass
class BlobIndex:
    """The stored fingerprints, by blob id, in `cache`; a cache that is off keeps nothing."""

    cache: ReviewCache
    _stored: dict[str, Hashes] | None = None
    _packs: list[Path] = field(default_factory=list)
    _new: dict[str, Hashes] = field(default_factory=dict)
    _used: dict[str, Hashes] = field(default_factory=dict)

    @classmethod
    def for_request(cls, request: ReviewRequest) -> BlobIndex:
        """The index in the run's review cache (`[cache] dir`, `--cache-dir`)."""
        return cls(request.cache)

    @property
    def directory(self) -> Path | None:
        if self.cache.directory is None:
            return None
        return self.cache.directory / SUBDIRECTORY / f"v{FINGERPRINT_FORMAT}"

    def _read_packs(self) -> dict[str, Hashes]:
        if self._stored is None:
            self._stored = {}
            if self.directory is not None:
                for pack in sorted(self.directory.glob("*.pack")):
                    # None too when a concurrent run's compaction removed it: its blobs are recomputed.
                    data = self.cache.read("dry-pack", pack)
                    entries = None if data is None else _unpack(data)
                    if entries is not None:
                        self._stored.update(entries)
                    self._packs.append(pack)  # a damaged or forged one too: compaction removes it
        return self._stored

    def load(self, blob: str) -> Hashes | None:
        """The window hashes of the file whose content is `blob`, or None when not stored."""
        values = self._read_packs().get(blob)
        if values is not None:
            self._used[blob] = values
        return values

    def add(self, blob: str, digests: Sequence[int]) -> Hashes:
        """Hashes computed in this run, written by `save`: the file's entry, as `load` gives it."""
        values = distinct(digests)
        if len(blob) == 40:
            self._new[blob] = self._used[blob] = values
        return values

    def save(self) -> None:
        """Write what this run computed as one pack (or, past MAX_PACKS, this tree's entries as the
        only pack). A cache that cannot be written (read-only, full) costs the next run the time
        to compute them again, nothing else."""
        directory = self.directory
        if directory is None or not self._new:
            return
        compact = len(self._packs) >= MAX_PACKS
        entries = self._used if compact else self._new
        data = _pack(entries)
        try:
            # The cache directory ignores itself in git, whichever cache makes it first: never
            # part of a change, even under `--include-dirty`.
            written = directory / f"{hashlib.sha256(data).hexdigest()[:32]}.pack"
            self.cache.write("dry-pack", written, data)
            if compact:
                for pack in self._packs:
                    if pack != written:
                        self.cache.remove(pack)
        except OSError:
            return
