"""JavaScript and TypeScript source with strings and comments blanked, for lenses that match
brackets and look for calls: offsets and line numbers stay those of the original text.

A scanner, not a parser: regular-expression literals are not recognized (a quote inside one
blanks the rest of its line), which costs a missed finding there, never a wrong line.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.comments import defused_comment_openers

_PARTS = LazyPattern(
    r"/(?:/[^\n]*|\*[\s\S]*?\*/)|`(?:[^`\\]|\\.)*`|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
)
_NOT_NEWLINE = LazyPattern(r"[^\n]")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_BRACKET = LazyPattern(r"[()\[\]{}]")
_NEWLINE = LazyPattern(r"\n")


def _blank(match: re.Match[str]) -> str:
    part = match.group(0)
    if part.startswith("/"):
        return _NOT_NEWLINE.sub(" ", part)  # a comment: gone
    # A string keeps its quotes, so `''` still reads as a value and `x('a')` as a call with one.
    return part[0] + _NOT_NEWLINE.sub(" ", part[1:-1]) + part[-1]


@dataclass(frozen=True)
class JsSource:
    """A JavaScript file read once for every lens: its text, strings and comments blanked, its brackets paired."""

    text: str  # the original
    masked: str  # strings' contents and comments blanked, same length
    pairs: dict[int, int]  # offset of each bracket to the offset of its partner, both ways
    line_starts: tuple[int, ...]

    def line_of(self, offset: int) -> int:
        """1-based line number of an offset."""
        return bisect.bisect_right(self.line_starts, offset)

    def line_text(self, number: int) -> str:
        start = self.line_starts[number - 1]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)]

    def skip_space(self, offset: int) -> int:
        while offset < len(self.masked) and self.masked[offset].isspace():
            offset += 1
        return offset

    def skip_space_back(self, offset: int) -> int:
        """The offset of the last non-space character at or before `offset`, or -1."""
        while offset >= 0 and self.masked[offset].isspace():
            offset -= 1
        return offset


@functools.lru_cache(maxsize=16)
def read_js(text: str) -> JsSource:
    # The `/*` that no `*/` follows defused first: `_PARTS` tried each to the end of the file (1 MB
    # of them: 8 minutes). The stand-in is blanked with a string's or a comment's
    # content, and put back where it stayed code, so the masked text is the same.
    defused, stand_in = defused_comment_openers(text)
    masked = _PARTS.sub(_blank, defused)
    if stand_in is not None:
        masked = masked.replace(stand_in, "*")
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for match in _BRACKET.finditer(masked):
        index = match.start()
        char = masked[index]
        if char in _OPENERS:
            stack.append(index)
        elif stack and _OPENERS[masked[stack[-1]]] == char:
            opener = stack.pop()
            pairs[opener] = index
            pairs[index] = opener
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    return JsSource(text, masked, pairs, tuple(starts))


# Async declarations, read from each `async` keyword (the regex engine skips to it): after it
# `function name(` or a method's `name(`; before it `name = ` / `name: ` (an arrow bound to a name).
_ASYNC = LazyPattern(r"\basync\b")
_NAMED_AFTER = LazyPattern(r"\s+(?:function\s*\*?\s*|\*\s*)?(?P<name>#?[\w$]+)\s*[(<]")
_BOUND_BEFORE = LazyPattern(r"(?P<name>#?[\w$]+)\s*(?::\s*[^=;\n]{1,80})?[=:]\s*$")
_KEYWORDS = frozenset({"function", "if", "for", "while", "switch", "catch", "return", "await"})


def async_names(source: JsSource) -> dict[str, int]:
    """Functions and methods declared `async` in the file, by name, with the offset of their
    body's opening brace (-1 for an arrow with an expression body)."""
    masked = source.masked
    names: dict[str, int] = {}
    for keyword in _ASYNC.finditer(masked):
        after = _NAMED_AFTER.match(masked, keyword.end())
        if after is not None and after.group("name") not in _KEYWORDS:
            names.setdefault(after.group("name"), _body_start(source, after.end()))
            continue
        before = _BOUND_BEFORE.search(masked, max(0, keyword.start() - 120), keyword.start())
        if before is not None and before.group("name") not in _KEYWORDS:
            names.setdefault(before.group("name"), _body_start(source, keyword.end()))
    return names


_PARAMETERS_OR_ARROW = LazyPattern(r"\s*(?:<[^(){};]{0,200}>\s*)?(?:\(|(?P<single>[\w$]+)\s*=>\s*(?P<brace>\{)?)")
_BODY_AFTER_PARAMETERS = LazyPattern(r"\s*(?::[^{=;]{0,200}?)?\s*(?:=>\s*)?\{")


def _body_start(source: JsSource, offset: int) -> int:
    """The `{` of the body of the function whose declaration ends at `offset` (its name or the
    `async` keyword), after its parameters and return type; -1 for an expression body."""
    masked = source.masked
    start = offset - 1 if masked[offset - 1 : offset] in {"(", "<"} else offset
    match = _PARAMETERS_OR_ARROW.match(masked, start)
    if match is None:
        return -1
    if match.group("single") is not None:
        return match.start("brace") if match.group("brace") else -1
    opener = match.end() - 1
    if opener not in source.pairs:
        return -1
    body = _BODY_AFTER_PARAMETERS.match(masked, source.pairs[opener] + 1)
    return body.end() - 1 if body else -1


def never_rejects(source: JsSource, body_open: int) -> bool:
    """The function's whole body is one try/catch whose handler does not rethrow: its promise
    cannot reject (cheap to tell, and the common way to write a fire-and-forget task)."""
    if body_open < 0 or body_open not in source.pairs:
        return False
    body = source.masked[body_open + 1 : source.pairs[body_open]].strip()
    if not body.startswith("try"):
        return False
    try_open = source.masked.find("{", body_open + 1)
    if try_open not in source.pairs:
        return False
    rest = source.masked[source.pairs[try_open] + 1 : source.pairs[body_open]]
    return re.match(r"\s*catch\b", rest) is not None and "throw" not in rest


def call_chain_end(source: JsSource, offset: int, limit: int = 4000) -> int:
    """Where the expression that starts at `offset` ends: names, `.`/`?.`/`!` member access,
    calls, indexing, and generics, across lines when the next line continues the chain."""
    masked = source.masked
    end = min(len(masked), offset + limit)
    index = offset
    while index < end:
        char = masked[index]
        if char in "([" and index in source.pairs:
            index = source.pairs[index] + 1
        elif char.isalnum() or char in "_$#.!?":
            if char == "?" and masked[index : index + 2] != "?.":
                break
            index += 1
        elif char.isspace():
            following = source.skip_space(index)
            if following < end and masked[following] == "." or masked[following : following + 2] == "?.":
                index = following
            else:
                break
        else:
            break
    return index
