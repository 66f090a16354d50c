"""The frozen diff as the reviewer reads it: new-file line numbers on every line it may cite.

"The frozen diff as new-file hunks with line numbers". A deletion-only hunk is sent like any
other: each block of a hunk is a chunk of its own, and the chunks share requests up to the
input budget (chunking.py), so dropping one would save no request. Secrets are masked line by
line on the way (redaction.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewgate.freeze.diff import ChangeStatus, FileChange, Hunk, LineKind
from reviewgate.reviewers.model.redaction import Redaction, redact_line
from reviewgate.text import printable

# The usual rule of thumb for English and code with BPE tokenizers: about four characters a
# token (OpenAI, "What are tokens and how to count them"). An estimate is enough to budget.
CHARACTERS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return len(text) // CHARACTERS_PER_TOKEN + 1


def numbered_line(number: int | None, text: str, marker: str = "") -> str:
    """A line as the diff and the context show it: `+12| text`, ` 13| text`, `-| text` (a removed
    line has no new-file number), `40| text` in an excerpt. Not padded to a column: a model reads
    the number, not the alignment, and the padding was a tenth of what a request's lines cost."""
    return f"{marker}{'' if number is None else number}| {text}"


@dataclass(frozen=True)
class RenderedFile:
    path: str
    text: str
    redactions: tuple[Redaction, ...]
    # `text` without its line numbers (the cache key: a push that only shifts these hunks leaves
    # it alone), and where each hunk stood: (first, last) new-file line, in order.
    key_text: str = ""
    spans: tuple[tuple[int, int], ...] = ()

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def _header(change: FileChange) -> str:
    status = change.status.value
    if change.status in (ChangeStatus.RENAMED, ChangeStatus.COPIED) and change.old_path:
        status += f" from {printable(change.old_path)}"
    return f"=== FILE {printable(change.path)} ({status}) ==="


def render_hunks(change: FileChange, hunks: tuple[Hunk, ...], note: str = "") -> RenderedFile:
    """`+12| text` for an added line, ` 13| text` for context, `-| text` for a removed one."""
    out = [_header(change) + (f" {note}" if note else "")]
    key = list(out)
    redactions: list[Redaction] = []
    if change.is_binary:
        out.append("(binary file: content not shown)")
        key.append(out[-1])
    for hunk in hunks:
        # Each numbered line says where it stands, so the mark only separates hunks; it names the
        # place only for a hunk of removed lines alone, which carry no number.
        numbered = any(line.new_line is not None for line in hunk.lines)
        out.append("@@" if numbered else f"@@ new lines {hunk.new_start}-{hunk.new_end} @@")
        key.append("@@")
        for line in hunk.lines:
            text, kinds = redact_line(printable(line.text))
            redactions += [Redaction(change.path, line.new_line or line.old_line, kind) for kind in kinds]
            marker = {LineKind.ADDED: "+", LineKind.REMOVED: "-", LineKind.CONTEXT: " "}[line.kind]
            out.append(numbered_line(line.new_line, text, marker))
            key.append(f"{marker}| {text}")
    spans = tuple((hunk.new_start, hunk.new_end) for hunk in hunks)
    return RenderedFile(change.path, "\n".join(out), tuple(redactions), "\n".join(key), spans)
