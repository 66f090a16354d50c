"""Text files over the per-file cap (exclusions.MAX_FILE_DIFF_BYTES) still go through the cheap
lenses: a committed key or an `eval` must not pass because the file around it is big.

The model reviewers and the structural lenses (duplication, readability, tests) never see these
files. What reads them, by size of the file's diff:
- up to WHOLE_FILE_LIMIT: the security and swallowed-failure lenses as on any file (each parses
  or reads the file at head once, about a second at this size), and the secrets lens;
- at any size: the line lenses, fed the added lines in pieces of at most PIECE_BYTES, so no
  more than one piece of a file of any size is ever parsed into lines at once. The security
  lens's line rules (JavaScript, TypeScript, Go, Java, C#, Kotlin) read the pieces as well.

Files a built-in exclusion the change can bring on itself leaves out (vendored code, build
output, minified or generated files) are read the same way by the secrets lens alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.common import C_LIKE, language_of
from reviewgate.reviewers.builtin.secrets import SecretsLens
from reviewgate.reviewers.builtin.security import SecurityLens
from reviewgate.reviewers.builtin.swallowed import PythonSwallowedFailureLens
from reviewgate.reviewers.builtin.swallowed_text import OtherLanguagesSwallowedFailureLens
from reviewgate.target.diff import FileChange

WHOLE_FILE_LIMIT = 1_000_000
PIECE_BYTES = 256 * 1024
_HUNK_NEW_START = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)")

_secrets = SecretsLens()
_security = SecurityLens()
_whole_file_lenses = (_security, PythonSwallowedFailureLens(), OtherLanguagesSwallowedFailureLens())


def added_line_pieces(raw_hunks: bytes, piece_bytes: int = PIECE_BYTES) -> Iterator[bytes]:
    """The added lines of one file's hunk text, as hunk text again (each run of added lines a
    hunk with its new line numbers), in pieces of about `piece_bytes`; read line by line."""
    piece = bytearray()
    run: list[bytes] = []
    run_start = new_line = 0

    def close_run() -> None:
        if run:
            piece.extend(b"@@ -0,0 +%d,%d @@\n" % (run_start, len(run)))
            piece.extend(b"".join(run))
            run.clear()

    position, size, run_bytes = 0, len(raw_hunks), 0
    while position < size:
        end = raw_hunks.find(b"\n", position)
        end = size if end < 0 else end + 1
        line = raw_hunks[position:end]
        position = end
        marker = line[:1]
        if line.startswith(b"@@ "):
            close_run()
            run_bytes = 0
            match = _HUNK_NEW_START.match(line)
            new_line = int(match.group(1)) if match else new_line
        elif marker == b"+":
            if not run:
                run_start = new_line
            run.append(line if line.endswith(b"\n") else line + b"\n")
            run_bytes += len(line)
            new_line += 1
        elif marker in (b" ", b"\n"):  # context: on both sides
            close_run()
            run_bytes = 0
            new_line += 1
        elif marker == b"-":
            close_run()
            run_bytes = 0
        if len(piece) + run_bytes >= piece_bytes:
            close_run()
            run_bytes = 0
            yield bytes(piece)
            piece.clear()
    close_run()
    if piece:
        yield bytes(piece)


def pieces_of(change: FileChange) -> Iterator[FileChange]:
    for raw in added_line_pieces(change.raw_hunks):
        yield FileChange(change.path, change.old_path, change.status, raw_hunks=raw)


def on_file(request: ReviewRequest, change: FileChange) -> ReviewRequest:
    """The request as a lens sees it for one file (or one piece of it)."""
    return replace(request, target=replace(request.target, files=(change,)))


def oversized_findings(request: ReviewRequest) -> Iterator[Finding]:
    """What the cheap lenses find in the target's oversized text files."""
    for change in request.target.oversized:
        if change.stats.diff_bytes <= WHOLE_FILE_LIMIT:
            whole = on_file(request, change)
            for lens in _whole_file_lenses:
                yield from lens.check(whole)
        line_lenses: list[SecretsLens | SecurityLens] = [_secrets]
        if change.stats.diff_bytes > WHOLE_FILE_LIMIT and language_of(change.path) in C_LIKE:
            line_lenses.append(_security)  # its rules for these languages read added lines only
        for piece in pieces_of(change):
            for line_lens in line_lenses:
                yield from line_lens.check(on_file(request, piece))


def left_out_findings(request: ReviewRequest) -> Iterator[Finding]:
    """Committed secrets in the files a built-in exclusion the change can bring on itself left
    out (a vendored copy, build output, a "generated" file): nothing else reads them."""
    for change in request.target.left_out:
        for piece in pieces_of(change):
            yield from _secrets.check(on_file(request, piece))
