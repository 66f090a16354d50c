"""Text helpers shared by the sinks."""

from __future__ import annotations

from collections.abc import Iterable

# What some editors (Windows ones especially) write at the start of a UTF-8 file.
UTF8_BYTE_ORDER_MARK = b"\xef\xbb\xbf"
# A UTF-16 file's first two bytes (little-endian, big-endian): text the lenses cannot read as UTF-8.
UTF16_BYTE_ORDER_MARKS = (b"\xff\xfe", b"\xfe\xff")

# What `ast.parse` raises for text CPython would not compile either: a syntax error, a NUL byte
# (ValueError), and nesting deeper than its parser or its tree builder allows: RecursionError for
# an expression of 30,000 terms, MemoryError for a chain of 20,000 `elif`. The branch's files are
# untrusted, so none of these may end a review: such text reads as text that does not parse.
UNPARSABLE: tuple[type[Exception], ...] = (SyntaxError, ValueError, RecursionError, MemoryError)


def printable(text: str) -> str:
    """Valid Unicode for output: bytes of a non-UTF-8 path (kept as surrogates so git can be
    asked about them) become U+FFFD instead of crashing an encoder."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def decode_text(data: bytes, *, starts_file: bool = True) -> str:
    """A file's bytes (or one of its lines) as every reader of the change decodes them: UTF-8,
    undecodable bytes as U+FFFD, and at the start of a file a UTF-8 byte-order mark dropped. The
    mark is no character of the text (Python and editors skip it); left in, `ast` refuses the
    first line and a whole file escapes the lenses. Line numbers stay: it is inside line 1."""
    if starts_file:
        data = data.removeprefix(UTF8_BYTE_ORDER_MARK)
    return data.decode("utf-8", "replace")


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


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """`; did you mean 'max_rounds'?` when `typed` looks like a typo of one of `known`, else
    nothing: for the line about an unknown flag, config key or branch."""
    import difflib  # only when something was mistyped: not on every start

    names = list(known)
    if typed in names:  # not a typo: what it names exists (it failed for another reason)
        return ""
    close = difflib.get_close_matches(typed, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


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
