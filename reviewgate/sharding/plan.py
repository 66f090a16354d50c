"""The shard plan: which part of a frozen change each of N CI jobs reviews (`run --shard I/N`).

The plan is a pure function of the frozen target and N, so every machine that froze the same
change computes the same one, and `reviewgate merge` can recompute it to check the shards:

- the items are the reviewed files (after exclusions) and the oversized text files the line
  lenses read, each weighed by its added lines plus one (a file without additions, a deletion or
  a binary file, still costs a little to look at);
- sorted by weight, heaviest first, ties by path;
- each in turn goes to the lightest shard so far, ties to the lowest shard number.

Shard 1 also does the work that reads the change as a whole (the verify, the cross-file lenses,
reviewers that cannot split their work): see docs/sharding.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from reviewgate.context import ReviewScope
from reviewgate.errors import UsageError
from reviewgate.freeze.diff import FileChange
from reviewgate.freeze.freeze import FrozenTarget

# The shard that does the whole-change work, 1-based.
WHOLE_CHANGE_SHARD = 1
PLAN_FORMAT = 1  # bump when the algorithm changes: shards of another version then refuse to merge
_SHARD_TEXT = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class ShardSpec:
    index: int  # 1-based
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"

    @property
    def whole_change(self) -> bool:
        return self.index == WHOLE_CHANGE_SHARD


def parse_shard(text: str, source: str = "--shard") -> ShardSpec:
    """`I/N` with 1 <= I <= N; anything else is a usage error naming `source` and the value."""
    match = _SHARD_TEXT.fullmatch(text.strip())
    if match is not None:
        index, total = int(match.group(1)), int(match.group(2))
        if 1 <= index <= total:
            return ShardSpec(index, total)
    raise UsageError(f"{source}: {text!r} is not I/N with 1 <= I <= N (e.g. 2/4: the 2nd of 4 shards)")


@dataclass(frozen=True)
class ShardPlan:
    patch_sha256: str
    parts: tuple[tuple[str, ...], ...]  # parts[i]: the paths of shard i+1, sorted

    @property
    def total(self) -> int:
        return len(self.parts)

    @property
    def sha256(self) -> str:
        document = {"format": PLAN_FORMAT, "patch_sha256": self.patch_sha256, "parts": self.parts}
        return hashlib.sha256(json.dumps(document, ensure_ascii=True).encode("ascii")).hexdigest()

    def paths(self, shard: ShardSpec) -> tuple[str, ...]:
        return self.parts[shard.index - 1]

    def scope(self, shard: ShardSpec) -> ReviewScope:
        return ReviewScope(frozenset(self.paths(shard)), shard.whole_change)


def weight(change: FileChange) -> int:
    return change.stats.added_lines + 1


def plan_shards(target: FrozenTarget, total: int) -> ShardPlan:
    items = sorted(((weight(change), change.path) for change in (*target.files, *target.oversized)),
                   key=lambda item: (-item[0], item[1]))
    loads = [0] * total
    parts: list[list[str]] = [[] for _ in range(total)]
    for size, path in items:
        lightest = min(range(total), key=lambda index: (loads[index], index))
        loads[lightest] += size
        parts[lightest].append(path)
    return ShardPlan(target.patch_sha256, tuple(tuple(sorted(part)) for part in parts))
