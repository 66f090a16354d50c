"""Large diffs: split into chunks that fit `max_input_tokens`, related files together.

First drop deletion-only hunks; then group files by directory and pack
the groups; a file that cannot fit alone is reviewed in parts (runs of hunks); a single hunk
that cannot fit is "not reviewed", which the engine reports and policy decides on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
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


def _group_key(change: FileChange) -> str:
    return str(PurePosixPath(change.path).parent)


def plan_chunks(files: Iterable[FileChange], budget: int) -> ChunkPlan:
    """Chunks whose rendered diff each fits `budget` estimated tokens."""
    changes = list(files)
    for drop in (False, True):
        rendered = [render_file(change, drop_deletions=drop) for change in changes]
        if sum(item.tokens for item in rendered) <= budget:
            return ChunkPlan((Chunk(tuple(changes), tuple(rendered)),) if changes else ())
    chunks: list[Chunk] = []
    not_reviewed: list[str] = []
    pending_files: list[FileChange] = []
    pending: list[RenderedFile] = []

    def flush() -> None:
        if pending:
            chunks.append(Chunk(tuple(pending_files), tuple(pending)))
            pending_files.clear()
            pending.clear()

    ordered = sorted(
        zip(changes, rendered, strict=True), key=lambda pair: (_group_key(pair[0]), pair[0].path)
    )
    previous_group: str | None = None
    for change, item in ordered:
        group = _group_key(change)
        used = sum(existing.tokens for existing in pending)
        if item.tokens > budget:
            flush()
            parts, skipped = _parts(change, budget)
            chunks += [Chunk((change,), (part,)) for part in parts]
            not_reviewed += skipped
        elif used + item.tokens > budget or (group != previous_group and used > budget // 2):
            # a new directory starts a new chunk once this one is half full: related files together
            flush()
            pending_files.append(change)
            pending.append(item)
        else:
            pending_files.append(change)
            pending.append(item)
        previous_group = group
    flush()
    return ChunkPlan(tuple(chunks), tuple(not_reviewed))
