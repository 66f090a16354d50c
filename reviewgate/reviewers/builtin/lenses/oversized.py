"""Text files over the per-file cap (exclusions.MAX_FILE_DIFF_BYTES) still go through the cheap
lenses: a committed key or an `eval` must not pass because the file around it is big.

The model reviewers and the structural lenses (duplication, readability, tests) never see these
files. What reads them, by size of the file's diff:
- up to WHOLE_FILE_LIMIT: the security and swallowed-failure lenses as on any file (each parses
  or reads the file at head once, about a second at this size), and the secrets lens;
- at any size: the line lenses. Each names the literals a line needs for any of its rules to
  match (secrets.MAY_HOLD_A_SECRET, security.LINE_RULES_NEED); those are searched for in C over
  the decoded text, and only the added lines holding one (with the lines a rule reads after
  them) are parsed and handed to the lens, in pieces of at most PIECE_BYTES. A file of any size
  costs a few passes at memory speed, not Python work per line. The security lens's line rules
  (JavaScript, TypeScript, Go, Java, C#, Kotlin) read the pieces as well.

Files a built-in exclusion the change can bring on itself leaves out (vendored code, build
output, minified or generated files) are read the same way by the secrets lens alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding
from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import C_LIKE, language_of
from reviewgate.reviewers.builtin.lenses.secrets import LINES_BEFORE_KEY_BODY, MAY_HOLD_A_SECRET, SecretsLens
from reviewgate.reviewers.builtin.lenses.security.lens import LINE_RULES_NEED, SecurityLens
from reviewgate.reviewers.builtin.lenses.security.line_rules import MAX_TEMPLATE_LINES
from reviewgate.reviewers.builtin.lenses.swallowed.other_languages import OtherLanguagesSwallowedFailureLens
from reviewgate.reviewers.builtin.lenses.swallowed.python import PythonSwallowedFailureLens

# A pattern the scan reads lines with: compiled, or compiled on first use (security.LINE_RULES_NEED).
Searched = re.Pattern[str] | LazyPattern

WHOLE_FILE_LIMIT = 1_000_000
PIECE_BYTES = 256 * 1024
REGION_BYTES = 4 << 20  # decoded and searched at once: the memory a file of any size needs

_secrets = SecretsLens()
_security = SecurityLens()
_whole_file_lenses = (_security, PythonSwallowedFailureLens(), OtherLanguagesSwallowedFailureLens())


def matching_pieces(
    raw_hunks: bytes, wanted: Sequence[Sequence[Searched]], following: int = 0,
    piece_bytes: int = PIECE_BYTES, region_bytes: int = REGION_BYTES,
) -> Iterator[bytes]:
    """Hunk text (each run of added lines a hunk with its new line numbers) holding only the added
    lines in which every pattern of one of the `wanted` groups finds something, each with up to
    `following` added lines after it, in pieces of about `piece_bytes`. Each pattern must match
    within one line (the lenses' prefilters); it sees the line with its diff marker. The search
    runs in C over decoded regions of about `region_bytes`; Python touches only the lines found,
    so a file of any size costs a few passes at memory speed and one region of memory."""
    piece = bytearray()
    for new_start, body_start, body_end in _hunk_bodies(raw_hunks):
        # The run being gathered: a later line found inside it (or right after it) extends it,
        # so a line and the `following` lines after it always reach the lens in one piece.
        run_start, run = 0, list[bytes]()
        region_start = body_start
        while region_start < body_end:
            region_end = _line_end(raw_hunks, region_start + region_bytes, body_end)
            region = raw_hunks[region_start:region_end]
            lines = region.split(b"\n")
            if region.endswith(b"\n"):
                lines.pop()  # the empty text after the last line's "\n"
            # A "\n" before every line (the first too), so "\n+" counts the added lines.
            text = "\n" + region.decode("utf-8", "replace")  # "\n" is never part of a UTF-8 sequence
            line_index, line_start, new_line = 0, 1, new_start  # new_line: that of line `line_index`
            for start in _matching_line_starts(text, wanted):
                line_index += text.count("\n", line_start, start)
                new_line += text.count("\n+", line_start - 1, start - 1) + text.count("\n ", line_start - 1, start - 1)
                line_start = start
                if lines[line_index][:1] != b"+":
                    continue
                found = _added_run(raw_hunks, lines, line_index, following, region_end, body_end)
                if run and new_line <= run_start + len(run):
                    run += found[run_start + len(run) - new_line :]
                    continue
                _write_run(piece, run_start, run)
                if len(piece) >= piece_bytes:
                    yield bytes(piece)
                    piece.clear()
                run_start, run = new_line, found
            new_start += text.count("\n+") + text.count("\n ")
            region_start = region_end
        _write_run(piece, run_start, run)
    if piece:
        yield bytes(piece)


def _write_run(piece: bytearray, start: int, run: list[bytes]) -> None:
    if run:
        piece += b"@@ -0,0 +%d,%d @@\n" % (start, len(run))
        piece += b"".join(line + b"\n" for line in run)


def _matching_line_starts(text: str, wanted: Sequence[Sequence[Searched]]) -> list[int]:
    """Where each line (after a "\n") starts that every pattern of one of the `wanted` groups
    finds something in, in order. A group's first pattern is searched through the text; the
    others only in the lines it found."""
    lowered: list[str] = []
    found: set[int] = set()
    for first, *others in wanted:
        searched, pattern = _searchable(text, first, lowered)
        starts = {searched.rfind("\n", 0, match.start()) + 1 for match in _to_line_end(pattern).finditer(searched, 1)}
        for other in others:
            searched, pattern = _searchable(text, other, lowered)
            starts = {start for start in starts if pattern.search(searched, start, _end_of_line(searched, start))}
        found |= starts
    return sorted(found)


def _end_of_line(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _searchable(text: str, pattern: Searched, lowered: list[str]) -> tuple[str, Searched]:
    """The text and pattern to search. An IGNORECASE pattern of lowercase literals is searched
    case-sensitively in the lowered text (ten times faster in `re`): `str.lower` maps the letters
    IGNORECASE equates with them (the Kelvin sign to k) but not the long s, which is replaced.
    When lowering changes the text's length, positions would not line up and the pattern itself
    is used. `lowered` caches the lowered text."""
    if not pattern.flags & re.IGNORECASE or pattern.pattern != pattern.pattern.lower():
        return text, pattern
    if not lowered:
        lowered.append(text.lower().replace("\u017f", "s"))
    if len(lowered[0]) != len(text):
        return text, pattern
    return lowered[0], _case_sensitive(pattern)


@functools.cache
def _case_sensitive(pattern: Searched) -> re.Pattern[str]:
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


@functools.cache
def _to_line_end(pattern: Searched) -> re.Pattern[str]:
    """`pattern` and the rest of its line: one match per line at most, found without Python."""
    return re.compile(f"(?:{pattern.pattern})[^\\n]*", pattern.flags)


_HUNK_HEADER = re.compile(rb"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@[^\n]*(?:\n|$)")


def _hunk_bodies(raw_hunks: bytes) -> Iterator[tuple[int, int, int]]:
    """Each hunk's first new line number and where its lines (after the `@@` line) start and
    end, found with `bytes.find` ("\n@@ " only starts a hunk header); nothing is copied."""
    found = 0 if raw_hunks.startswith(b"@@ ") else raw_hunks.find(b"\n@@ ") + 1
    position: int | None = found if found > 0 or raw_hunks.startswith(b"@@ ") else None
    while position is not None:
        following = raw_hunks.find(b"\n@@ ", position)
        end = len(raw_hunks) if following < 0 else following + 1
        header = _HUNK_HEADER.match(raw_hunks, position)
        if header is not None:
            yield int(header.group(1)), header.end(), end
        position = following + 1 if following >= 0 else None


def _line_end(raw_hunks: bytes, position: int, limit: int) -> int:
    """The end (past its "\n") of the line `position` falls in, at most `limit`."""
    if position >= limit:
        return limit
    cut = raw_hunks.find(b"\n", position, limit)
    return limit if cut < 0 else cut + 1


def _added_run(raw_hunks: bytes, lines: list[bytes], index: int, following: int, region_end: int,
               body_end: int) -> list[bytes]:
    """The added line at `index` and up to `following` added lines right after it, read on
    into the rest of the hunk when the region ends first."""
    later = lines[index + 1 : index + 1 + following]
    position = region_end
    while len(later) < following and position < body_end:
        end = _line_end(raw_hunks, position, body_end)
        later.append(raw_hunks[position:end].rstrip(b"\n"))
        position = end
    run = [lines[index]]
    for line in later:
        if line[:1] != b"+":
            break
        run.append(line)
    return run


def pieces_of(change: FileChange, wanted: Sequence[Sequence[Searched]], following: int = 0) -> Iterator[FileChange]:
    for raw in matching_pieces(change.raw_hunks, wanted, following):
        yield FileChange(change.path, change.old_path, change.status, raw_hunks=raw)


def on_file(request: ReviewRequest, change: FileChange) -> ReviewRequest:
    """The request as a lens sees it for one file (or one piece of it)."""
    return request._replace(target=replace(request.target, files=(change,)))


def oversized_findings(request: ReviewRequest) -> Iterator[Finding]:
    """What the cheap lenses find in the target's oversized text files."""
    for change in request.target.oversized:
        if change.stats.diff_bytes <= WHOLE_FILE_LIMIT:
            whole = on_file(request, change)
            for lens in _whole_file_lenses:
                yield from lens.check(whole)
        yield from _secrets_in_pieces(request, change)
        if change.stats.diff_bytes > WHOLE_FILE_LIMIT and language_of(change.path) in C_LIKE:
            # Its rules for these languages read added lines only.
            for piece in pieces_of(change, ((LINE_RULES_NEED,),), following=MAX_TEMPLATE_LINES):
                yield from _security.check(on_file(request, piece))


def left_out_findings(request: ReviewRequest) -> Iterator[Finding]:
    """Committed secrets in the files a built-in exclusion the change can bring on itself left
    out (a vendored copy, build output, a "generated" file): nothing else reads them."""
    for change in request.target.left_out:
        yield from _secrets_in_pieces(request, change)


def _secrets_in_pieces(request: ReviewRequest, change: FileChange) -> Iterator[Finding]:
    """The secrets lens over the lines of `change` that may hold a secret, each with the lines after
    it that tell a private key's header from a key (its body): without them, a header whose next
    line is `...` in a vendored README reads as a key."""
    for piece in pieces_of(change, MAY_HOLD_A_SECRET, following=LINES_BEFORE_KEY_BODY):
        yield from _secrets.check(on_file(request, piece))
