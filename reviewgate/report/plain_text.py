"""Markdown a finding carries (code spans, emphasis, links, fences, quotes) as the plain text
shown where Markdown is not rendered: GitHub annotations (workflow commands and the check run's)
and SARIF's `message.text`. One helper, so every plain-text sink reads the same."""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

_CODE_SPAN = LazyPattern(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_FENCE_LINE = LazyPattern(r"^[ \t]*(?:`{3,}|~{3,})[^\n]*$\n?", re.MULTILINE)
_IMAGE = LazyPattern(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = LazyPattern(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
# Emphasis with `*` only: `_` and `__` are kept, since names like `__init__` or `_private` are
# far more common in a finding's text than underscore emphasis. Not inside a word (`2*3*4`).
_STRONG = LazyPattern(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = LazyPattern(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_HEADING = LazyPattern(r"^[ \t]{0,3}#{1,6}[ \t]+", re.MULTILINE)
_QUOTE = LazyPattern(r"^[ \t]{0,3}>[ \t]?", re.MULTILINE)
_ESCAPE = LazyPattern(r"\\([\\`*_{}\[\]()#+\-.!|>~])")


# A backslash-escaped character is held as its private-use twin (plane 15) while the markers
# around it are read, so `\\*` is never taken for emphasis.
_ESCAPED_BASE = 0xF0000
_HELD_ESCAPE = LazyPattern("[\U000F0000-\U000F007F]")


def _prose(text: str) -> str:
    text = _ESCAPE.sub(lambda match: chr(_ESCAPED_BASE + ord(match.group(1))), text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(lambda match: match.group(1) if match.group(1) == match.group(2) else
                     f"{match.group(1)} ({match.group(2)})", text)
    text = _STRONG.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return _HELD_ESCAPE.sub(lambda match: chr(ord(match.group(0)) - _ESCAPED_BASE), text)


# Stands in for a code span while the prose around it is rewritten: private-use characters, which
# no finding's Markdown means as text.
_HELD = LazyPattern("\ue000(\\d+)\ue001")
_PLACEHOLDERS = LazyPattern("[\ue000\ue001\U000F0000-\U000F007F]")  # taken out of the input first


def markdown_to_plain(text: str) -> str:
    """`Use `x` at **a.py:4**, see [docs](https://…)` → `Use x at a.py:4, see docs (https://…)`.
    Code (spans and fenced blocks) is kept as written, only its markers dropped."""
    text = _QUOTE.sub("", _HEADING.sub("", _FENCE_LINE.sub("", text)))
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        code = match.group(2)
        held.append(code.strip() if code.startswith(" ") and code.endswith(" ") else code)
        return f"\ue000{len(held) - 1}\ue001"

    prose = _prose(_CODE_SPAN.sub(hold, _PLACEHOLDERS.sub("", text)))
    return _HELD.sub(lambda match: held[int(match.group(1))], prose)
