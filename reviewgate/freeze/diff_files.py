"""git's patch split into one FileChange per file: each file's extended header read (paths,
status, modes, binary), its hunk text kept for diff.py to parse when a reviewer reads it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from reviewgate.freeze.diff import ChangeStatus, FileChange

_C_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}


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

    def build(self, raw_hunks: bytes) -> FileChange:
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
            raw_hunks=raw_hunks,
        )


def _parse_header(header: bytes) -> _FileBuilder:
    """The extended header lines of one file: paths, status, modes, binary."""
    lines = header.split(b"\n")
    old_raw, new_raw = _split_git_header(lines[0][len(b"diff --git ") :])
    current = _FileBuilder(_strip_prefix(old_raw, b"a/"), _strip_prefix(new_raw, b"b/"))
    for line in lines[1:]:
        if line.startswith(b"new file mode "):
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
    return current


def parse_diff(patch: bytes) -> list[FileChange]:
    """Every file of a `git diff -p` output, in git's order. File and hunk boundaries are
    found with `bytes.find` (no Python loop over every line): hunk lines start with ' ',
    '+', '-' or '\\', so neither "\ndiff --git " nor "\n@@ " can occur inside one."""
    starts = [0] if patch.startswith(b"diff --git ") else []
    position = patch.find(b"\ndiff --git ")
    while position >= 0:
        starts.append(position + 1)
        position = patch.find(b"\ndiff --git ", position + 1)
    files: list[FileChange] = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(patch)
        first_hunk = patch.find(b"\n@@ ", start, end)
        header_end = first_hunk + 1 if first_hunk >= 0 else end
        builder = _parse_header(patch[start:header_end].rstrip(b"\n"))
        files.append(builder.build(patch[header_end:end] if first_hunk >= 0 else b""))
    return files


def iter_diff_stream(chunks: Iterable[bytes]) -> Iterator[FileChange]:
    """`parse_diff` over output arriving in chunks: every complete file is yielded as soon as
    the next file's header shows it ended, so the caller works while git still computes.
    Yields the same files as parse_diff on the joined text."""
    marker = b"\ndiff --git "
    pending = bytearray()
    for chunk in chunks:
        searched = max(len(pending) - len(marker) + 1, 0)  # what came before was searched already:
        pending += chunk  # one huge file's diff must not be searched again at every chunk
        cut = pending.rfind(marker, searched)
        if cut > 0:
            # The text is held twice only while it is parsed (a 150 MB file: not three times).
            with memoryview(pending) as view:
                complete, rest = bytes(view[: cut + 1]), bytearray(view[cut + 1 :])
            pending = rest
            files = parse_diff(complete)
            del complete
            yield from files
    complete = bytes(pending)
    del pending
    files = parse_diff(complete)
    del complete
    yield from files
