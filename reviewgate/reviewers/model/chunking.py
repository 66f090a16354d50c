"""Split the diff into chunks that fit `max_input_tokens`, with boundaries a push cannot shift.

A chunk is one directory's changed files when they are small together (GROUP_TOKENS: related
files side by side), else each file alone (deletion-only hunks dropped first when that makes it
fit); a file whose diff is larger than RUN_TOKENS is reviewed in runs of hunks that end where a
hunk's own text says (_ends_run), and a file that cannot fit alone in parts (runs of hunks that
fit). Boundaries depend only on the files of one directory: a push that changes one file leaves
every other directory's chunk byte-identical, so the chunk cache (review_cache.py) answers them
without a request; in a directory whose changes are larger than GROUP_TOKENS, every other
file's chunk too; and in a large file, every run the push does not touch (the cache keys a
chunk without its line numbers: Chunk.key_text). A single hunk that cannot fit is "not
reviewed", which the engine reports and policy decides on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from reviewgate.reviewers.model.redaction import Redaction
from reviewgate.reviewers.model.rendering import RenderedFile, render_file, render_hunks
from reviewgate.target.diff import FileChange, Hunk
from reviewgate.text import printable


@dataclass(frozen=True)
class Chunk:
    files: tuple[FileChange, ...]
    rendered: tuple[RenderedFile, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(item.text for item in self.rendered)

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.rendered)

    @property
    def redactions(self) -> tuple[Redaction, ...]:
        return tuple(found for item in self.rendered for found in item.redactions)

    @property
    def key_text(self) -> str:
        """`text` without line numbers: what the chunk cache keys on (positions are rebased)."""
        return "\n\n".join(item.key_text for item in self.rendered)

    @property
    def spans(self) -> dict[str, tuple[tuple[int, int], ...]]:
        """Where each file's hunks stand in this chunk: path -> (first, last) new-file lines."""
        return {item.path: item.spans for item in self.rendered}


@dataclass(frozen=True)
class ChunkPlan:
    chunks: tuple[Chunk, ...]
    not_reviewed: tuple[str, ...] = field(default_factory=tuple)


def _parts(change: FileChange, budget: int) -> tuple[list[RenderedFile], list[str]]:
    """A file too large for one chunk, as runs of whole hunks that each fit."""
    runs: list[list[Hunk]] = []
    skipped: list[str] = []
    for hunk in change.hunks:
        if render_hunks(change, (hunk,)).tokens > budget:
            skipped.append(
                f"{printable(change.path)} lines {hunk.new_start}-{hunk.new_end}"
                " (one hunk larger than the input budget)"
            )
            continue
        if runs and render_hunks(change, (*runs[-1], hunk)).tokens <= budget:
            runs[-1].append(hunk)
        else:
            runs.append([hunk])
    rendered = [
        render_hunks(change, tuple(run), f"(part {index} of {len(runs)})")
        for index, run in enumerate(runs, start=1)
    ]
    return rendered, skipped


def _ends_run(change: FileChange, hunk: Hunk) -> bool:
    """Whether a run of hunks ends after this one: decided by its own text alone, so a push that
    changes, adds or shifts other hunks moves no cut but the ones beside its own hunks."""
    digest = hashlib.sha256(render_hunks(change, (hunk,)).key_text.encode("utf-8", "surrogateescape")).digest()
    return digest[0] % RUN_HUNKS == 0


def _runs(change: FileChange, whole: RenderedFile) -> list[Chunk]:
    """A file's diff as runs of hunks cut at content-defined places (_ends_run). Each run's
    chunk holds the file with only its hunks: the context it is given follows its own symbols,
    so a push to another run of the file changes neither its diff nor its context."""
    runs: list[list[Hunk]] = [[]]
    for hunk in change.hunks:
        runs[-1].append(hunk)
        if _ends_run(change, hunk):
            runs.append([])
    runs = [run for run in runs if run]
    if len(runs) == 1:
        return [Chunk((change,), (whole,))]
    return [Chunk((replace(change, hunks=tuple(run), raw_hunks=b""),), (render_hunks(change, tuple(run), RUN_NOTE),))
            for run in runs]


def _group_key(change: FileChange) -> str:
    return str(PurePosixPath(change.path).parent)


def _fitting(changes: list[FileChange], budget: int) -> Chunk | None:
    """The files as one chunk, deletion-only hunks left out if that is what makes it fit."""
    for drop in (False, True):
        rendered = [render_file(change, drop_deletions=drop) for change in changes]
        if sum(item.tokens for item in rendered) <= budget:
            return Chunk(tuple(changes), tuple(rendered))
    return None


# A directory's files share one request while their diff is this small (about 10,000
# characters): the instructions and context are paid once for them, and a push that changes one
# of them re-sends little. Past it each file is its own chunk, so a push re-sends only its files.
GROUP_TOKENS = 2_500
# A file's diff larger than this (about 16,000 characters) is reviewed in runs of hunks, so a push
# that changes one hunk re-sends its run, not the whole file's diff.
RUN_TOKENS = 4_000
# About how many hunks a run holds: a run ends after a hunk whose digest is 0 modulo this.
RUN_HUNKS = 8
# The same words on every run (no "part 2 of 5"): a run's text must not depend on how many
# others there are, or one new run would make every run of the file miss the cache.
RUN_NOTE = "(some of its hunks; the others are reviewed in other requests)"


def plan_chunks(files: Iterable[FileChange], budget: int) -> ChunkPlan:
    """Chunks whose rendered diff each fits `budget` estimated tokens, in path order."""
    groups: dict[str, list[FileChange]] = {}
    for change in sorted(files, key=lambda item: item.path):
        groups.setdefault(_group_key(change), []).append(change)
    chunks: list[Chunk] = []
    not_reviewed: list[str] = []
    for group in sorted(groups):
        together = _fitting(groups[group], min(budget, GROUP_TOKENS))
        if together is not None:
            chunks.append(together)
            continue
        for change in groups[group]:
            whole = render_file(change)
            if whole.tokens <= budget:  # rendered once: a large file in runs, else whole
                chunks += _runs(change, whole) if whole.tokens > RUN_TOKENS else [Chunk((change,), (whole,))]
                continue
            alone = _fitting([change], budget)  # with deletion-only hunks left out
            if alone is not None:
                chunks.append(alone)
                continue
            parts, skipped = _parts(change, budget)
            chunks += [Chunk((change,), (part,)) for part in parts]
            not_reviewed += skipped
    return ChunkPlan(tuple(chunks), tuple(not_reviewed))
