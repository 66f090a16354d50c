"""The lines of a comment that are its author's own words, as Markdown shows them.

A quote (`> ACCEPTED: …`, and the lines a quote's paragraph runs on into), a fenced code block
(``` or ~~~, any length), an indented code block (four spaces or a tab) and an HTML comment
(`<!-- … -->`) show someone else's words, an example or nothing: a request in them is not the
author's. Stricter than CommonMark where it is unsure (any line indented four spaces is left
out, list continuations too): a request that is not read can be written again plainly.
"""

from __future__ import annotations

import re

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # an unclosed one hides the rest
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}>")


def _without_html_comments(body: str) -> str:
    """Each comment becomes its line breaks, so the lines around it keep their places."""
    return _HTML_COMMENT.sub(lambda match: "\n" * match.group(0).count("\n"), body)


def _indent(line: str) -> int:
    width = 0
    for character in line:
        if character == " ":
            width += 1
        elif character == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def own_lines(body: str) -> list[str]:
    """The lines outside quotes, code blocks and HTML comments, each stripped."""
    lines: list[str] = []
    fence: str | None = None  # the opening fence while inside a fenced block
    in_quote = False  # inside a quote's paragraph: an unmarked line continues it
    for line in _without_html_comments(body).splitlines():
        if fence is not None:
            closing = _FENCE.match(line)
            # A closing fence: the same character, at least as long, nothing after it.
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = None
            continue
        if not line.strip():
            in_quote = False
            continue
        opening = _FENCE.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in line.strip().lstrip("`")):
            fence, in_quote = opening.group(1), False
            continue
        if _QUOTE.match(line):
            in_quote = True
            continue
        if in_quote or _indent(line) >= 4:
            continue
        lines.append(line.strip())
    return lines
