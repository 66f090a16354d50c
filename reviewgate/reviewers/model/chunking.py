"""Split the diff into chunks, the unit the chunk cache answers, with boundaries a push cannot shift.

A chunk is one block of one file's diff: a hunk, cut before each top-level block it adds (a
line at the start of a line after a blank one: a function, a class, a test, a section), so a
test appended to a test file's one long hunk is a chunk of its own and the tests before it keep
theirs. Each cut is decided by the hunk's own text, so a push that changes one block leaves
every other block's chunk byte-identical (the cache keys a chunk without its line numbers:
Chunk.key_text) and the cache answers it without asking; the engine packs the chunks it does
ask about into as few requests as the input budget allows (packing.py), so a small chunk costs
no request of its own. A file without hunks (binary, a rename) is one chunk; a block larger than
the budget alone is "not reviewed", which the engine reports and policy decides on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import groupby

from reviewgate.freeze.diff import DiffLine, FileChange, Hunk, LineKind
from reviewgate.reviewers.model.redaction import Redaction
from reviewgate.reviewers.model.rendering import RenderedFile, render_hunks
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


def _starts_block(line: DiffLine, previous: DiffLine | None) -> bool:
    """An added line that opens a top-level block: text at the start of the line (not a closing
    bracket) after a blank line."""
    text = line.text
    return (line.kind is LineKind.ADDED and previous is not None and not previous.text.strip()
            and bool(text) and not text[0].isspace() and text[0] not in ")]}")


def _piece(hunk: Hunk, lines: list[DiffLine]) -> Hunk:
    new = [line.new_line for line in lines if line.new_line is not None]
    old = [line.old_line for line in lines if line.old_line is not None]
    return Hunk(old[0] if old else hunk.old_start, len(old), new[0] if new else hunk.new_start, len(new), tuple(lines))


def _trimmed(lines: list[DiffLine]) -> list[DiffLine]:
    """The lines without the blank ones at their end (when something else is left)."""
    kept = len(lines)
    while kept > 1 and not lines[kept - 1].text.strip():
        kept -= 1
    return lines[:kept]


def blocks(hunk: Hunk) -> Iterator[Hunk]:
    """The hunk cut before each top-level block it adds (`_starts_block`), once the part before
    it changes a line that is not blank (leading context and blank lines go with the block after
    them). The blank lines between two blocks, and after the last, are in neither: a block added
    before or after another leaves that one's text as it was."""
    current: list[DiffLine] = []
    changed = False
    for line in hunk.lines:
        if changed and _starts_block(line, current[-1]):
            yield _piece(hunk, _trimmed(current))
            current, changed = [], False
        current.append(line)
        changed = changed or (line.kind is not LineKind.CONTEXT and bool(line.text.strip()))
    if current:
        yield _piece(hunk, _trimmed(current))


# With the tools, the unchanged lines either side of a block's changes (git's are three): `read`
# gives the model the rest of the file, and those lines were a fifth of what a diff cost.
DIFF_CONTEXT_LINES_WITH_TOOLS = 1


def around_changes(hunk: Hunk, lines: int) -> Hunk:
    """The hunk with at most `lines` unchanged lines before its first change and after its last
    (the ones between changes stay)."""
    changed = [index for index, line in enumerate(hunk.lines) if line.kind is not LineKind.CONTEXT]
    if not changed:
        return hunk
    return _piece(hunk, list(hunk.lines[max(0, changed[0] - lines):changed[-1] + lines + 1]))


def sent_blocks(hunk: Hunk, context_lines: int | None) -> Iterator[Hunk]:
    """The blocks of a hunk as the chunks send them: with `context_lines`, at most that many
    unchanged lines either side of each block's changes (git's three otherwise)."""
    for block in blocks(hunk):
        yield block if context_lines is None else around_changes(block, context_lines)


def plan_chunks(files: Iterable[FileChange], budget: int, context_lines: int | None = None) -> ChunkPlan:
    """One chunk per block of each file's hunks (`blocks`), in path order, each within `budget`
    estimated tokens; a block over it is listed as not reviewed. `context_lines`: at most that
    many unchanged lines either side of a block's changes (git's three otherwise)."""
    chunks: list[Chunk] = []
    not_reviewed: list[str] = []
    for change in sorted(files, key=lambda item: item.path):
        if not change.hunks:
            chunks.append(Chunk((change,), (render_hunks(change, ()),)))
            continue
        for hunk in change.hunks:
            for block in sent_blocks(hunk, context_lines):
                rendered = render_hunks(change, (block,))
                if rendered.tokens > budget:
                    not_reviewed.append(f"{printable(change.path)} lines {block.new_start}-{block.new_end}"
                                        " (one block larger than the input budget)")
                    continue
                chunks.append(Chunk((replace(change, hunks=(block,), raw_hunks=b""),), (rendered,)))
    return ChunkPlan(tuple(chunks), tuple(not_reviewed))


# On a file some of whose blocks a request leaves out (the cache answered them).
SOME_NOTE = "(some of its changes; the others were reviewed apart)"


def request_diff(chunks: Iterable[Chunk], every_hunk: dict[str, int]) -> str:
    """The diff of chunks asked in one request: each file's header once, over its blocks in
    order, noting when the request holds only some of the file's blocks (`every_hunk`: how many
    blocks each file has in this run)."""
    parts: list[str] = []
    for path, group in groupby((item for chunk in chunks for item in chunk.rendered), key=lambda item: item.path):
        rendered = list(group)
        header = rendered[0].text.split("\n", 1)[0]  # the same on every block of the file
        bodies = [item.text.split("\n", 1)[1] for item in rendered if "\n" in item.text]
        note = f" {SOME_NOTE}" if len(rendered) < every_hunk.get(path, len(rendered)) else ""
        parts.append("\n".join([header + note, *bodies]))
    return "\n\n".join(parts)
