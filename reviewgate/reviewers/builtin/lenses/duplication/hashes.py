"""The hashes of a file's windows (fingerprints.py), for many offsets at once.

A window's hash is the polynomial in its bytes, `c[0] + c[1]*B + ... + c[W-1]*B**(W-1)` modulo
2**64 with B odd, of which the high 32 bits are kept (the best mixed). With `P[i]` the sum of
`c[j]*B**j` for `j < i`, the window at `i` is `(P[i+W] - P[i]) * B**-i`: a handful of passes over
the file for every window of it, where CRC-32 took a C call a window (0.6 s for the 3.3 million
windows of Django +304k appended). The hashes are stored (index.py), and the same on every
machine: unsigned 64-bit arithmetic wraps alike everywhere.

numpy is imported with this module, only for a change that may repeat code (search.py).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import BASE, WINDOW

Hashes = npt.NDArray[np.uint32]  # a file's window hashes, or a set of them sorted
_MODULUS = 1 << 64


class _Powers:
    """B**j and B**-j modulo 2**64 for j below `size`, grown by doubling as longer files come."""

    def __init__(self) -> None:
        self.up = np.ones(1, dtype=np.uint64)
        self.down = np.ones(1, dtype=np.uint64)

    def upto(self, size: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
        if self.up.size < size:
            length = max(size, 2 * self.up.size)
            self.up = _powers_of(BASE, length)
            self.down = _powers_of(pow(BASE, -1, _MODULUS), length)
        return self.up, self.down


def _powers_of(base: int, length: int) -> npt.NDArray[np.uint64]:
    """base**j modulo 2**64 for j below `length`: products of unsigned 64-bit numbers wrap."""
    powers = np.empty(length, dtype=np.uint64)
    powers[0] = 1
    if length > 1:
        np.cumprod(np.full(length - 1, base, dtype=np.uint64), out=powers[1:])
    return powers


_POWERS = _Powers()


def window_hashes(data: bytes, offsets: npt.NDArray[np.integer] | list[int]) -> Hashes:
    """The hash of the WINDOW bytes of `data` at each of `offsets` (each at most
    `len(data) - WINDOW`)."""
    if not len(offsets):
        return np.zeros(0, dtype=np.uint32)
    up, down = _POWERS.upto(len(data) + 1)
    prefix = np.zeros(len(data) + 1, dtype=np.uint64)
    np.cumsum(np.frombuffer(data, dtype=np.uint8) * up[: len(data)], out=prefix[1:])
    at = np.asarray(offsets, dtype=np.int64)
    hashes: Hashes = (((prefix[at + WINDOW] - prefix[at]) * down[at]) >> np.uint64(32)).astype(np.uint32)
    return hashes


def distinct(values: Hashes) -> Hashes:
    """`values` sorted, each once, by sorting: `np.unique` hashes them (numpy 2.3 on), 0.8-1.0 s
    against 0.05 s for 1.3 million hashes, and 22 us against 5 us for a file's 250."""
    values = np.sort(values)
    if not values.size:
        return values
    first = np.empty(values.size, dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    kept: Hashes = values[first]
    return kept
