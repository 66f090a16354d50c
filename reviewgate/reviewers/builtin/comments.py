"""Comments on added lines, by each language's comment syntax."""

from __future__ import annotations

from itertools import chain
from typing import NamedTuple

from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import HASH_COMMENT, SLASH_COMMENT, Language, language_of

# What may stand for the `*` of a `/*` that cannot open a comment (`defused_comment_openers`): the
# first of these the text lacks, then of the private-use code points, then a lone surrogate, which
# no text read from a file holds (decode_text replaces what is not UTF-8).
_STAND_INS = "\x00\x02\x03"


_PRIVATE_USE = range(0xE000, 0xF900)


def defused_comment_openers(text: str) -> tuple[str, str | None]:
    """`text` with the `*` of every `/*` that begins after the last `*/` replaced by a character
    the text lacks (returned; None when nothing was replaced). No such opener can start a block
    comment, yet the pattern tries each to the end of the text before passing on: a file of them
    cost the square of its length (30 KB of `/*` lines, 4 s; 900 KB, hours). Replaced, a pattern
    whose only use of `*` is its block comments finds the same matches at the same offsets (one
    character for one): the stand-in, like `*`, is plain text inside a string, a line comment or
    an escape, and a `/` before it starts nothing, as before a `*` that no `*/` follows. Read
    what a match holds from the original text, or put `*` back with `str.replace`."""
    last_closer = text.rfind("*/")
    first = text.find("/*", last_closer + 1)
    if first == -1:
        return text, None
    candidates = chain(_STAND_INS, map(chr, _PRIVATE_USE), "\ud800")
    stand_in = next((character for character in candidates if character not in text), None)
    if stand_in is None:
        return text, None  # a text made to hold every stand-in: searched as it is
    return text[:first] + text[first:].replace("/*", "/" + stand_in), stand_in


class Comment(NamedTuple):
    """The text of a comment on one line, without its marker."""

    line: int
    text: str
    whole_line: bool  # nothing but the comment on that line


_QUOTES = LazyPattern(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`")


def _outside_strings(line: str, marker: str) -> int:
    """Where `marker` starts outside a string literal on this line, or -1."""
    if marker not in line:
        return -1  # blanking only puts spaces where strings were: no marker appears (most lines)
    blanked = _QUOTES.sub(lambda match: " " * len(match.group(0)), line)
    index = blanked.find(marker)
    while marker == "//" and index > 0 and blanked[index - 1] == ":":  # a URL, not a comment
        index = blanked.find(marker, index + 2)
    return index


def _line_comment(line_number: int, text: str, marker: str) -> Comment | None:
    """The comment that `marker` opens outside string literals, and whether it is alone on the line."""
    index = _outside_strings(text, marker)
    if index < 0:
        return None
    body = text[index + len(marker) :].strip()
    if marker == "//":
        body = body.removeprefix("/").strip()  # `/// doc comment`
    return Comment(line_number, body, not text[:index].strip())


def comment_on(line_number: int, text: str, language: Language) -> Comment | None:
    """The comment on a source line, for the languages whose comment syntax we know."""
    stripped = text.strip()
    if language in HASH_COMMENT:
        return None if stripped.startswith("#!") else _line_comment(line_number, text, "#")
    if language is Language.SQL:
        return _line_comment(line_number, text, "--")
    if language in SLASH_COMMENT:
        if stripped.startswith(("/*", "*")) and not stripped.startswith("*/"):
            body = stripped.lstrip("/*").removesuffix("*/").strip()
            return Comment(line_number, body, True)
        return _line_comment(line_number, text, "//")
    return None


# The text a line needs for `comment_on` to find a comment in the languages with one line marker:
# tested on every added line first (a C-level `in`), so most lines never reach comment_on.
_COMMENT_MARKERS = {**dict.fromkeys(HASH_COMMENT, "#"), Language.SQL: "--"}


def added_comments(change: FileChange) -> list[Comment]:
    language = language_of(change.path)
    found = []
    marker = _COMMENT_MARKERS.get(language)
    added = change.added_lines()
    numbers = sorted(added if marker is None else [number for number, text in added.items() if marker in text])
    for number in numbers:
        text = added[number]
        comment = comment_on(number, text, language)
        if comment is not None and comment.text:
            found.append(comment)
    return found
