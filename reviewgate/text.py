"""Text helpers shared by the sinks."""

from __future__ import annotations


def printable(text: str) -> str:
    """Valid Unicode for output: bytes of a non-UTF-8 path (kept as surrogates so git can be
    asked about them) become U+FFFD instead of crashing an encoder."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def truncate(text: str, limit: int, note: str = "\n\n… truncated") -> str:
    """At most `limit` characters, with the note saying so when anything was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(note))] + note


def truncate_utf8(text: str, limit_bytes: int, note: str = "\n\n… truncated") -> str:
    """At most `limit_bytes` bytes of UTF-8 (limits like GitHub's 1 MiB summary count bytes)."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit_bytes:
        return text
    room = max(0, limit_bytes - len(note.encode("utf-8")))
    return encoded[:room].decode("utf-8", "ignore") + note


def short_sha(sha: str) -> str:
    return sha[:12]


def lines_at(data: bytes, first: int, last: int) -> list[str]:
    """Lines `first` to `last` (1-based, as git numbers them: split on LF only, a CRLF's CR
    dropped) of a file's bytes, decoded with replacement; fewer past the end. Found by counting
    newlines in C block by block, so a line of a 150 MB file costs one pass over its bytes and
    no split of the whole text."""
    position, remaining, block = 0, max(first, 1) - 1, 1 << 16
    while remaining:
        end = min(position + block, len(data))
        count = data.count(b"\n", position, end)
        if count < remaining:
            if end == len(data):
                return []
            position, remaining = end, remaining - count
            continue
        for _ in range(remaining):
            position = data.index(b"\n", position) + 1
        remaining = 0
    lines: list[str] = []
    while len(lines) <= last - max(first, 1) and position < len(data):
        end = data.find(b"\n", position)
        end = len(data) if end < 0 else end
        lines.append(data[position:end].removesuffix(b"\r").decode("utf-8", "replace"))
        position = end + 1
    return lines
