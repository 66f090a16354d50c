"""Parse git's unified diff into files, hunks and line numbers.

Written against git's own output format (`git diff -p` with extended headers), split on
LF only so CRLF content survives and form feeds or other separators never cut a line.
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass, field

_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# Very long lines (minified bundles, embedded data) are kept out of prompts (issue 3): the text
# is cut here, with its length and a digest so the canonical patch hash still sees the change.
LONG_LINE_CHARS = 2_000
_C_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}


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


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind
    text: str
    old_line: int | None
    new_line: int | None


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[DiffLine, ...]

    @property
    def new_end(self) -> int:
        return self.new_start + max(self.new_count, 1) - 1


@dataclass(frozen=True)
class FileChange:
    """One file of the change. `path` is the new path (the old one for a deletion)."""

    path: str
    old_path: str | None
    status: ChangeStatus
    is_binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    similarity: int | None = None
    hunks: tuple[Hunk, ...] = field(default_factory=tuple)

    @property
    def is_submodule(self) -> bool:
        return self.new_mode == "160000" or self.old_mode == "160000"

    def added_lines(self) -> dict[int, str]:
        """New line number -> text of every line the change adds to this file."""
        return {
            line.new_line: line.text
            for hunk in self.hunks
            for line in hunk.lines
            if line.kind is LineKind.ADDED and line.new_line is not None
        }

    def changed_line_numbers(self) -> frozenset[int]:
        return frozenset(self.added_lines())

    def hunk_containing(self, new_line: int) -> Hunk | None:
        for hunk in self.hunks:
            if hunk.new_start <= new_line <= hunk.new_end:
                return hunk
        return None


def unquote_path(raw: bytes) -> bytes:
    """Undo git's C-style quoting of a path ("a\\tb", octal escapes for bytes)."""
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2):
        return raw
    body, out, index = raw[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index : index + 1]
        if char != b"\\":
            out += char
            index += 1
            continue
        following = body[index + 1 : index + 2]
        if following in _C_ESCAPES:
            out.append(_C_ESCAPES[following])
            index += 2
        elif following.isdigit():
            out.append(int(body[index + 1 : index + 4], 8))
            index += 4
        else:
            out += following
            index += 2
    return bytes(out)


def decode_path(raw: bytes) -> str:
    """Paths keep undecodable bytes as surrogates so git can be asked about them again."""
    return unquote_path(raw).decode("utf-8", "surrogateescape")


def _strip_prefix(path: bytes, prefix: bytes) -> bytes:
    unquoted = unquote_path(path)
    return unquoted[len(prefix) :] if unquoted.startswith(prefix) else unquoted


def _split_git_header(rest: bytes) -> tuple[bytes, bytes]:
    """`diff --git a/X b/Y`: split where both halves name the same path (true unless renamed,
    and renames also carry `rename from/to` lines, which win)."""
    if rest.startswith(b'"'):
        end = rest.index(b'"', 1)
        while rest[end - 1 : end] == b"\\":
            end = rest.index(b'"', end + 1)
        return rest[: end + 1], rest[end + 2 :]
    half = (len(rest) - 1) // 2
    if rest[half : half + 1] == b" " and rest[2:half] == rest[half + 3 :]:
        return rest[:half], rest[half + 1 :]
    marker = rest.find(b" b/")
    return rest[:marker], rest[marker + 1 :]


class _FileBuilder:
    def __init__(self, old_path: bytes, new_path: bytes) -> None:
        self.old_path = old_path
        self.new_path = new_path
        self.status = ChangeStatus.MODIFIED
        self.is_binary = False
        self.old_mode: str | None = None
        self.new_mode: str | None = None
        self.similarity: int | None = None
        self.hunks: list[Hunk] = []

    def build(self) -> FileChange:
        if self.status is ChangeStatus.DELETED:
            path = decode_path(self.old_path)
            old_path: str | None = path
        else:
            path = decode_path(self.new_path)
            old_path = decode_path(self.old_path) if self.status is not ChangeStatus.ADDED else None
        return FileChange(
            path=path,
            old_path=old_path,
            status=self.status,
            is_binary=self.is_binary,
            old_mode=self.old_mode,
            new_mode=self.new_mode,
            similarity=self.similarity,
            hunks=tuple(self.hunks),
        )


def line_text(body: bytes) -> str:
    """A line's text decoded with replacement (never a crash), cut when very long."""
    if len(body) <= LONG_LINE_CHARS:
        return body.decode("utf-8", "replace")
    digest = hashlib.sha256(body).hexdigest()[:16]
    kept = body[:LONG_LINE_CHARS].decode("utf-8", "ignore")
    return f"{kept} … [line cut: {len(body)} bytes, sha256 {digest}]"


def _parse_hunk(lines: list[bytes], start: int) -> tuple[Hunk, int]:
    match = _HUNK_HEADER.match(lines[start])
    assert match is not None
    old_start, new_start = int(match.group(1)), int(match.group(3))
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    old_line, new_line = old_start, new_start
    remaining_old, remaining_new = old_count, new_count
    parsed: list[DiffLine] = []
    index = start + 1
    while index < len(lines) and (remaining_old > 0 or remaining_new > 0):
        raw = lines[index]
        marker, text = raw[:1], line_text(raw[1:])
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


def parse_diff(patch: bytes) -> list[FileChange]:
    """Every file of a `git diff -p` output, in git's order."""
    lines = patch.split(b"\n")
    files: list[FileChange] = []
    current: _FileBuilder | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith(b"diff --git "):
            if current is not None:
                files.append(current.build())
            old_raw, new_raw = _split_git_header(line[len(b"diff --git ") :])
            current = _FileBuilder(_strip_prefix(old_raw, b"a/"), _strip_prefix(new_raw, b"b/"))
        elif current is None:
            pass  # preamble before the first file header carries nothing we use
        elif line.startswith(b"@@ "):
            hunk, index = _parse_hunk(lines, index)
            current.hunks.append(hunk)
            continue
        elif line.startswith(b"new file mode "):
            current.status = ChangeStatus.ADDED
            current.new_mode = line.split()[-1].decode()
        elif line.startswith(b"deleted file mode "):
            current.status = ChangeStatus.DELETED
            current.old_mode = line.split()[-1].decode()
        elif line.startswith(b"old mode "):
            current.old_mode = line.split()[-1].decode()
        elif line.startswith(b"new mode "):
            current.new_mode = line.split()[-1].decode()
        elif line.startswith(b"index ") and len(line.split()) == 3:
            current.old_mode = current.new_mode = line.split()[-1].decode()
        elif line.startswith(b"rename from "):
            current.status = ChangeStatus.RENAMED
            current.old_path = unquote_path(line[len(b"rename from ") :])
        elif line.startswith(b"rename to "):
            current.new_path = unquote_path(line[len(b"rename to ") :])
        elif line.startswith(b"copy from "):
            current.status = ChangeStatus.COPIED
            current.old_path = unquote_path(line[len(b"copy from ") :])
        elif line.startswith(b"copy to "):
            current.new_path = unquote_path(line[len(b"copy to ") :])
        elif line.startswith(b"similarity index "):
            current.similarity = int(line.split()[-1].rstrip(b"%"))
        elif line.startswith(b"Binary files ") or line == b"GIT binary patch":
            current.is_binary = True
        index += 1
    if current is not None:
        files.append(current.build())
    return files
