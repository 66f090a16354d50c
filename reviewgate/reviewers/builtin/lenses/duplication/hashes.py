"""The hashes of a file's windows (fingerprints.py), for many offsets at once.

A window's hash is the polynomial in its bytes, `c[0] + c[1]*B + ... + c[W-1]*B**(W-1)` modulo
2**64 with B = BASE, of which the high 32 bits are kept (the best mixed). The hashes are stored
(index.py), and the same on every machine: unsigned 64-bit arithmetic wraps alike everywhere.

The window length W and the compiled loop are the caller's (fingerprints.py: `WINDOW`, and
`_normalize.window_hashes` where it was built, one C loop, 3.3 million windows of Django +304k
appended in a tenth of a second); the prefix sums here are its definition: with `P[i]` the sum of
`c[j]*B**j` for `j < i`, the window at `i` is `(P[i+W] - P[i]) * B**-i`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Sequence
from itertools import accumulate, repeat
from operator import mul
from typing import TypeAlias

# A file's window hashes, or a set of them sorted: 4-byte unsigned integers ("I" is 4 bytes on
# every platform CPython runs on; index.py stores them little-endian whatever the machine).
Hashes: TypeAlias = "array[int]"
HASH_TYPECODE = "I"
# A compiled `window_hashes` for one window length: the hashes' bytes, native 4-byte integers.
CompiledWindowHashes: TypeAlias = "Callable[[bytes, array[int]], bytes]"
# The base of the polynomial: odd (FNV's 64-bit prime), so it has an inverse modulo 2**64.
BASE = 0x100000001B3
_MASK = (1 << 64) - 1


def no_hashes() -> Hashes:
    return array(HASH_TYPECODE)


class _Powers:
    """B**j and B**-j modulo 2**64 for j below `size`, grown by doubling as longer files come."""

    def __init__(self) -> None:
        self.up: list[int] = [1]
        self.down: list[int] = [1]

    def upto(self, size: int) -> tuple[list[int], list[int]]:
        if len(self.up) < size:
            length = max(size, 2 * len(self.up))
            self.up = _powers_of(BASE, length)
            self.down = _powers_of(pow(BASE, -1, 1 << 64), length)
        return self.up, self.down


def _powers_of(base: int, length: int) -> list[int]:
    return list(accumulate(repeat(base, length - 1), lambda power, factor: power * factor & _MASK, initial=1))


_POWERS = _Powers()


def window_hashes(data: bytes, offsets: Sequence[int], window: int, compiled: CompiledWindowHashes | None) -> Hashes:
    """The hash of the `window` bytes of `data` at each of `offsets` (each at most
    `len(data) - window`): by `compiled` (built for that window length) where given."""
    if not len(offsets):
        return no_hashes()
    at = offsets if isinstance(offsets, array) and offsets.typecode == HASH_TYPECODE else array(HASH_TYPECODE, offsets)
    if compiled is not None:
        hashes = no_hashes()
        hashes.frombytes(compiled(data, at))
        return hashes
    up, down = _POWERS.upto(len(data) + 1)
    prefix = list(accumulate(map(mul, data, up), initial=0))  # unreduced: the difference is exact
    return array(HASH_TYPECODE, [((prefix[i + window] - prefix[i]) * down[i] & _MASK) >> 32 for i in at])


def distinct(values: Collection[int]) -> Hashes:
    """`values` sorted, each once."""
    return array(HASH_TYPECODE, sorted(set(values)))
