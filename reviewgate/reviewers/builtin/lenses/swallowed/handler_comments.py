"""The comments in and right above a handler that drops a failure (or above its `try`): what may
say why the failure is dropped on purpose."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.comments import comment_on
from reviewgate.reviewers.builtin.language_table import Language

if TYPE_CHECKING:  # imported where an empty catch is read: a Python-only run never loads it
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource


_INLINE_COMMENT = LazyPattern(r"//[^\n]*|/\*[\s\S]*?\*/")
_COMMENT_MARKERS = LazyPattern(r"^\s*(?://+|/\*+|\*+/?)|\*+/\s*$")


def _comment_text(raw: str) -> str:
    return " ".join(_COMMENT_MARKERS.sub("", part).strip() for part in raw.splitlines()).strip()


# A `try` often follows the line that sets the fallback value (`let recursive = true;`), with the
# comment explaining the fallback above that: look past this many code lines for it.
MAX_LINES_BEFORE_TRY = 2


def comments_above(line: int, lines: list[str], language: Language, reach: int = 0) -> list[str]:
    """The whole-line comments right above a line (or above up to `reach` code lines above it),
    nearest last."""
    found: list[str] = []
    number = line - 1
    while reach > 0 and number >= 1 and comment_on(number, lines[number - 1], language) is None:
        if not lines[number - 1].strip():
            break
        number -= 1
        reach -= 1
    while number >= 1:
        comment = comment_on(number, lines[number - 1], language)
        if comment is None or not comment.whole_line:
            break
        found.insert(0, comment.text)
        number -= 1
    return found


def nearby_comments(
    source: JsSource, match: re.Match[str], lines: list[str], language: Language
) -> tuple[str, str]:
    """The comments in the handler and on its lines; and those right above it or above its `try`."""
    first = source.line_of(match.start())
    last = source.line_of(match.end() - 1)
    inside = [_comment_text(item) for item in _INLINE_COMMENT.findall(source.text[match.start() : match.end()])]
    for number in {first, last}:
        comment = comment_on(number, lines[number - 1], language)
        if comment is not None:
            inside.append(comment.text)
    above = comments_above(first, lines, language)
    closing = source.skip_space_back(match.start() - 1)
    opener = source.pairs.get(closing, -1) if closing >= 0 and source.masked[closing] == "}" else -1
    if opener > 0 and source.masked[:opener].rstrip().endswith("try"):
        above += comments_above(source.line_of(opener), lines, language, MAX_LINES_BEFORE_TRY)
    return (
        "\n".join(dict.fromkeys(text for text in inside if text)),
        "\n".join(dict.fromkeys(text for text in above if text)),
    )
