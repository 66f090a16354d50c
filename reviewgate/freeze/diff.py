"""A change's files, hunks and line numbers, as git's unified diff gives them.

Written against git's own output format (`git diff -p` with extended headers), split on
LF only so CRLF content survives and form feeds or other separators never cut a line.

Hunks are parsed lazily: freezing a change of 200,000 lines must stay within 2x of `git diff`
(benchmarks/freeze_benchmark.py), so `parse_diff` (diff_files.py) only reads each file's headers
and keeps its hunk text; the lines become objects the first time a reviewer reads `hunks`. `added_lines` reads the
added ones straight from that text when nothing has read `hunks` yet.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from reviewgate.text import UTF8_BYTE_ORDER_MARK, UTF16_BYTE_ORDER_MARKS, decode_text

_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

# Very long lines (minified bundles, embedded data) are kept out of prompts: the text
# is cut here, with its length and a digest so the canonical patch hash still sees the change.
LONG_LINE_CHARS = 2_000
# How much of a file's start `opening_text` keeps: where generators put their headers.
OPENING_LINES = 10
OPENING_WINDOW_BYTES = 8192
# A diff line (marker included) this long or shorter is decoded whole by line_text, never cut.
_SHORT_LINE_BYTES = LONG_LINE_CHARS + 1


class ChangeStatus(str, enum.Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"


class LineKind(str, enum.Enum):
    CONTEXT = " "
    ADDED = "+"
    REMOVED = "-"


class DiffLine(NamedTuple):
    """One line of a hunk, with its numbers on the old and the new side (None where it has none)."""

    kind: LineKind
    text: str
    old_line: int | None
    new_line: int | None


class Hunk(NamedTuple):
    """One hunk of a file's diff: where it stands on each side and its lines."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[DiffLine, ...]

    @property
    def new_end(self) -> int:
        return self.new_start + max(self.new_count, 1) - 1


class DiffStats(NamedTuple):
    """Sizes of one file's diff, for exclusions and listings, without parsing its lines."""

    added_lines: int
    diff_bytes: int
    removed_lines: int = 0


class _LazyHunks:
    """The `hunks` field of FileChange: a tuple given to the constructor, or, when it is empty
    and `raw_hunks` holds the file's hunk text, that text parsed on first read and kept."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = self.slot_of(name)

    @staticmethod
    def slot_of(name: str) -> str:
        """Where the instance keeps the field's value."""
        return f"_{name}_value"

    def __get__(self, instance: Any, owner: type | None = None) -> tuple[Hunk, ...]:
        if instance is None:
            return ()  # the dataclass default
        value: tuple[Hunk, ...] = instance.__dict__[self.slot]
        if not value and instance.raw_hunks:
            value = parse_hunks(instance.raw_hunks)
            instance.__dict__[self.slot] = value
        return value

    def __set__(self, instance: Any, value: tuple[Hunk, ...]) -> None:
        instance.__dict__[self.slot] = tuple(value)


@dataclass(frozen=True)
class FileChange:
    """One file of the change. `path` is the new path (the old one for a deletion).
    `raw_hunks` is git's text of the file's hunks when parsed from a diff (see _LazyHunks)."""

    path: str
    old_path: str | None
    status: ChangeStatus
    is_binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    similarity: int | None = None
    hunks: _LazyHunks = _LazyHunks()  # reads as tuple[Hunk, ...]
    raw_hunks: bytes = field(default=b"", compare=False, repr=False)

    @property
    def is_submodule(self) -> bool:
        return self.new_mode == "160000" or self.old_mode == "160000"

    @cached_property
    def stats(self) -> DiffStats:
        if self.raw_hunks:
            # Hunk lines start with ' ', '+', '-' or '\\' and the text starts at an `@@` line,
            # so every "\n+" begins an added line and every "\n-" a removed one.
            return DiffStats(self.raw_hunks.count(b"\n+"), len(self.raw_hunks), self.raw_hunks.count(b"\n-"))
        lines = [line for hunk in self.hunks for line in hunk.lines]
        added = sum(1 for line in lines if line.kind is LineKind.ADDED)
        removed = sum(1 for line in lines if line.kind is LineKind.REMOVED)
        return DiffStats(added, sum(len(line.text) + 2 for line in lines), removed)

    def average_added_line_over(self, limit: int) -> bool:
        """Whether the added lines average more than `limit` characters. A file whose whole
        diff is smaller than `limit` per added line cannot, and is not scanned."""
        stats = self.stats
        if not stats.added_lines or stats.diff_bytes <= limit * stats.added_lines:
            return False
        added = [line.text for hunk in self.hunks for line in hunk.lines if line.kind is LineKind.ADDED]
        return sum(map(len, added)) > limit * len(added)

    @property
    def shows_opening(self) -> bool:
        """Whether the diff shows the file's first line at head (its first hunk starts there)."""
        if not self.raw_hunks:
            return bool(self.hunks) and self.hunks[0].new_start <= 1
        match = _HUNK_HEADER.match(self.raw_hunks)
        return match is not None and int(match.group(3)) <= 1

    @cached_property
    def opening_text(self) -> str | None:
        """The file's first OPENING_LINES lines at head, joined, when the diff shows them (the
        first hunk starts at line 1), else None. Reads and decodes only the start of the text."""
        if not self.shows_opening:
            return None
        if not self.raw_hunks:
            kept = [line.text for line in self.hunks[0].lines if line.kind is not LineKind.REMOVED]
            return "\n".join(kept[:OPENING_LINES])
        return decode_text(b"\n".join(self._opening_bytes))  # from line 1: the byte-order mark goes

    @property
    def opens_as_utf16(self) -> bool:
        """Whether the diff shows the file's first line at head and it starts with a UTF-16
        byte-order mark: text no reader of the change can decode (most such files hold NUL
        bytes and are binary to git already)."""
        if not self.raw_hunks or not self.shows_opening:
            return False
        opening = self._opening_bytes
        return bool(opening) and opening[0].startswith(UTF16_BYTE_ORDER_MARKS)

    @cached_property
    def _opening_bytes(self) -> list[bytes]:
        """The first OPENING_LINES lines at head as git wrote them, from the first hunk's text."""
        start = self.raw_hunks.find(b"\n") + 1
        # Removed lines come before added ones in a block, so look a little further.
        window = self.raw_hunks[start : start + OPENING_WINDOW_BYTES].split(b"\n", 8 * OPENING_LINES)
        found: list[bytes] = []
        for raw in window[: 8 * OPENING_LINES]:
            if len(found) == OPENING_LINES or raw[:2] == b"@@":
                break
            if raw[:1] in (b" ", b"+"):
                found.append(raw[1:])
        return found

    @cached_property
    def canonical_digest(self) -> bytes:
        """SHA-256 of the file's canonical form: path, status, old path, modes, binary flag,
        then the hunk bodies of `canonical_pieces`. `target.canonical_patch_hash` combines them."""
        digest = hashlib.sha256()
        header = [self.path, self.status.value, self.old_path or "", self.old_mode or "", self.new_mode or ""]
        header.append("binary" if self.is_binary else "text")
        digest.update("\0".join(header).encode("utf-8", "surrogateescape") + b"\n")
        for piece in self.canonical_pieces():
            digest.update(piece)
        return digest.digest()

    def canonical_pieces(self) -> Iterator[bytes | memoryview]:
        """The hunk bodies without line numbers or function context (each hunk header becomes
        a bare `@@`), so a rebase that shifts the file's lines keeps the same bytes."""
        if not self.raw_hunks:
            for hunk in self.hunks:
                yield b"@@\n"
                for line in hunk.lines:
                    yield line.kind.value.encode() + line.text.encode("utf-8", "surrogateescape") + b"\n"
            return
        # "\n@@" only starts a hunk header (hunk lines start with ' ', '+', '-', '\\').
        raw = memoryview(self.raw_hunks)
        start = 0
        while start < len(self.raw_hunks):
            body = self.raw_hunks.find(b"\n", start)
            following = self.raw_hunks.find(b"\n@@", start)
            body = len(self.raw_hunks) if body < 0 else body
            end = len(self.raw_hunks) if following < 0 else following + 1
            yield b"@@"
            yield raw[body:end]
            start = end

    def added_lines(self) -> dict[int, str]:
        """New line number -> text of every line the change adds to this file. A copy of a map
        built once: every builtin lens asks for it, so rebuilding it from the hunks each time was
        a measurable part of a large review, and a caller may still change its copy."""
        return dict(self._added_lines)

    @cached_property
    def _added_lines(self) -> dict[int, str]:
        if self.raw_hunks and not self.__dict__[_LazyHunks.slot_of("hunks")]:
            # Hunks not parsed yet: the added lines straight from git's text, without a line object
            # for every line (an appended file's hunks then stay unparsed: no reader wants them).
            return added_lines_of(self.raw_hunks)
        return {
            line.new_line: line.text
            for hunk in self.hunks
            for line in hunk.lines
            if line.kind is LineKind.ADDED and line.new_line is not None
        }

    def may_add(self, needle: bytes) -> bool:
        """Whether an added line could hold `needle` (ASCII, so its decoded text holds it only where
        the bytes do): false when git's text of the hunks lacks it, so a lens looking for one marker
        passes over the file without decoding its lines."""
        if self.raw_hunks:
            return needle in self.raw_hunks
        text = needle.decode("ascii")
        return any(text in line for line in self._added_lines.values())

    def added_line_count(self) -> int:
        """How many lines the change adds to this file (`added_lines` without copying it: every
        lens asks of every file whether it has any)."""
        return len(self._added_lines)

    def added_line_numbers(self) -> set[int]:
        """The numbers of `added_lines` without their texts: a forked worker that reads the texts
        (counting references to them) copies the pages they share with the gate (40 MB at +300k lines)."""
        return set(self._added_lines)

    def changed_line_numbers(self) -> frozenset[int]:
        return frozenset(self.added_lines())

    def hunk_containing(self, new_line: int) -> Hunk | None:
        for hunk in self.hunks:
            if hunk.new_start <= new_line <= hunk.new_end:
                return hunk
        return None


def line_text(body: bytes, first_line: bool = False) -> str:
    """A line's text decoded with replacement (never a crash), cut when very long; the file's
    first line without its byte-order mark (text.decode_text)."""
    if first_line:
        body = body.removeprefix(UTF8_BYTE_ORDER_MARK)
    if len(body) <= LONG_LINE_CHARS:
        return decode_text(body, starts_file=False)
    digest = hashlib.sha256(body).hexdigest()[:16]
    kept = body[:LONG_LINE_CHARS].decode("utf-8", "ignore")
    return f"{kept} … [line cut: {len(body)} bytes, sha256 {digest}]"


def _hunk_header(line: bytes) -> tuple[int, int, int, int]:
    """An `@@ -old_start,old_count +new_start,new_count @@` line's four numbers (a count left out is 1)."""
    match = _HUNK_HEADER.match(line)
    assert match is not None
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    return int(match.group(1)), old_count, int(match.group(3)), new_count


def _parse_hunk(lines: list[bytes], start: int) -> tuple[Hunk, int]:
    old_start, old_count, new_start, new_count = _hunk_header(lines[start])
    old_line, new_line = old_start, new_start
    remaining_old, remaining_new = old_count, new_count
    parsed: list[DiffLine] = []
    index = start + 1
    while index < len(lines) and (remaining_old > 0 or remaining_new > 0):
        raw = lines[index]
        marker = raw[:1]
        text = line_text(raw[1:], first_line=(old_line == 1 and marker != b"+") or (new_line == 1 and marker != b"-"))
        if marker == b"+":
            parsed.append(DiffLine(LineKind.ADDED, text, None, new_line))
            new_line += 1
            remaining_new -= 1
        elif marker == b"-":
            parsed.append(DiffLine(LineKind.REMOVED, text, old_line, None))
            old_line += 1
            remaining_old -= 1
        elif marker == b" " or raw == b"":
            parsed.append(DiffLine(LineKind.CONTEXT, text, old_line, new_line))
            old_line += 1
            new_line += 1
            remaining_old -= 1
            remaining_new -= 1
        elif marker != b"\\":
            break
        index += 1
    while index < len(lines) and lines[index].startswith(b"\\"):
        index += 1  # "\ No newline at end of file"
    return Hunk(old_start, old_count, new_start, new_count, tuple(parsed)), index


def _hunk_added_lines(lines: list[bytes], start: int, added: dict[int, str]) -> int:
    """`_parse_hunk`'s walk over one hunk keeping only its added lines (into `added`), each decoded
    as there; the index of the line after the hunk."""
    _old_start, remaining_old, new_line, remaining_new = _hunk_header(lines[start])
    index, end = start + 1, len(lines)
    while index < end and (remaining_old > 0 or remaining_new > 0):
        raw = lines[index]
        marker = raw[:1]
        if marker == b"+":
            # line_text's common case inline (a short line not opening the file): a call less a line
            short = len(raw) <= _SHORT_LINE_BYTES and new_line != 1
            added[new_line] = raw[1:].decode("utf-8", "replace") if short else line_text(raw[1:], new_line == 1)
            new_line += 1
            remaining_new -= 1
        elif marker == b"-":
            remaining_old -= 1
        elif marker == b" " or raw == b"":
            new_line += 1
            remaining_old -= 1
            remaining_new -= 1
        elif marker != b"\\":
            break
        index += 1
    while index < end and lines[index].startswith(b"\\"):
        index += 1
    return index


def added_lines_of(raw: bytes) -> dict[int, str]:
    """New line number -> text of every added line in one file's hunk text: what `parse_hunks` gives
    for its added lines, without making the other lines' objects."""
    lines = raw.split(b"\n")
    added: dict[int, str] = {}
    index = 0
    while index < len(lines):
        if lines[index].startswith(b"@@ "):
            index = _hunk_added_lines(lines, index, added)
        else:
            index += 1
    return added


def parse_hunks(raw: bytes) -> tuple[Hunk, ...]:
    """Every hunk in one file's hunk text (from its first `@@` line on)."""
    lines = raw.split(b"\n")
    hunks: list[Hunk] = []
    index = 0
    while index < len(lines):
        if lines[index].startswith(b"@@ "):
            hunk, index = _parse_hunk(lines, index)
            hunks.append(hunk)
        else:
            index += 1
    return tuple(hunks)
