"""A Python module's top-level statements told apart without parsing it, and the syntax tree of
only those a change adds whole.

A change that appends functions to an existing module gives the lenses nothing to read in the
module's other statements: each reports only what spans an added line, and the function shapes of
statements at both sides alike compare equal. Parsing them was most of the parse of such a change
(94,000 of 198,000 lines at Django +104k appended). The statements are told apart from the text:
a top-level statement starts on a line that begins at column 0 outside any string, comment or
bracket, that no backslash continues into, and that is not a clause of the statement before it
(`else:`, `except ...:`) or the statement a decorator line stands on. The tree of the touched
statements is then checked to start exactly where the text said, else the caller parses it all.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Collection
from typing import NamedTuple

from reviewgate.reviewers.builtin.changed_lines import AddedSpans
from reviewgate.reviewers.builtin.languages.python_shapes import first_line
from reviewgate.text import UNPARSABLE

# Comments, then string literals as Python's tokenizer reads them (a backslash escapes any
# character, a newline included; a triple-quoted string ends at the first unescaped closing
# triple). Prefixes (`rb`, `f`) are letters before the quote and need no branch of their own.
_COMMENT_OR_STRING = re.compile(
    r"(#[^\n]*"
    r'|"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"
    r'|"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"'
    r"|'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*')"
)
# The newline before a line that begins with code at column 0 (blank, indented and comment lines
# do not): led by its literal, which the engine scans for, where a multi-line `^` was tried at
# every character (five times slower).
_BEFORE_COLUMN_ZERO = re.compile(r"\n(?=[^\s#])")
# The clauses that continue a compound statement at its own indentation.
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
# A `def` or `class` keyword and the name after it, each pattern led by its literal (which the
# engine searches for, where an alternation was tried at every character).
_DEFINED_NAMES = (re.compile(r"def[ \t]+(\w+)"), re.compile(r"class[ \t]+(\w+)"))


def _blanked(source: str) -> str:
    """`source` with each comment gone and each string one `"`, every newline kept. The lines a
    string continues onto start with `#`, which no other line of the blanked text holds: code to
    the statement's extent, and never a statement's start (the line where a triple-quoted string
    ends, `\"\"\".strip()`, is none)."""
    pieces = _COMMENT_OR_STRING.split(source)
    pieces[1::2] = [("" if piece[0] == "#" else '"') + "\n#" * piece.count("\n") for piece in pieces[1::2]]
    return "".join(pieces)


class Statements(NamedTuple):
    """Where each top-level statement's text lies: its first line (its decorators') and its last
    line that holds code, 1-based, and where it starts in the blanked text (comments and strings
    blanked), which is kept too."""

    spans: list[tuple[int, int]]
    offsets: list[int]
    blanked: str


def top_level_statements(source: str) -> Statements | None:
    """The module's top-level statements; None when its lines cannot be told apart as Python's
    tokenizer would (a carriage return alone ends a line there, a NUL stops the parse, and one
    `__future__` import changes the grammar of every statement)."""
    if "\0" in source or "barry_as_FLUFL" in source or source.count("\r") != source.count("\r\n"):
        return None
    blanked = _blanked(source)
    count, endswith = blanked.count, blanked.endswith
    # Every bracket as a round one: two counts a line instead of six.
    brackets = blanked.replace("[", "(").replace("{", "(").replace("]", ")").replace("}", ")").count
    starts, offsets = [1], [0]
    depth, line, previous, decorated = 0, 1, 0, blanked.startswith("@")
    for match in _BEFORE_COLUMN_ZERO.finditer(blanked):
        at = match.end()
        line += count("\n", previous, at)
        depth += brackets("(", previous, at) - brackets(")", previous, at)
        previous = at
        if depth != 0 or endswith("\\\n", 0, at) or endswith("\\\r\n", 0, at) or _CLAUSE.match(blanked, at):
            continue
        if decorated:  # the definition a decorator (or a run of them) stands on
            decorated = blanked[at] == "@"
            continue
        decorated = blanked[at] == "@"
        starts.append(line)
        offsets.append(at)
    spans = []
    for start, first, after in zip(starts, offsets, [*offsets[1:], len(blanked)], strict=True):
        # Blank and comment lines after a statement belong to none.
        spans.append((start, start + count("\n", first, first + len(blanked[first:after].rstrip()))))
    return Statements(spans, offsets, blanked)


class TouchedModule:
    """The tree of the statements a change adds whole, and where the other statements lie."""

    def __init__(self, tree: ast.Module, others: list[tuple[int, int]], blanked: str) -> None:
        self.tree = tree
        self._others = others  # where each run of other statements starts and ends in `blanked`
        self._blanked = blanked

    @functools.cached_property
    def other_names(self) -> frozenset[str]:
        """The names the other statements define (`def` and `class` at any depth, read from the
        blanked text: a superset), asked only for function shapes."""
        text = "\n".join(self._blanked[start:end] for start, end in self._others)
        return frozenset(name for pattern in _DEFINED_NAMES for name in pattern.findall(text))


def touched_module(source: str, path: str, added: Collection[int]) -> TouchedModule | None:
    """The top-level statements holding an added line, parsed alone, when each of them is added
    whole (its lines from the first to the last that holds code); None when one is not, when the
    text cannot be split, or when the parsed statements do not start where the text said (then the
    whole module is the caller's to parse)."""
    statements = top_level_statements(source)
    if statements is None:
        return None
    spans = AddedSpans(added)
    touched: list[int] = []  # indices into statements.spans
    for index, (start, end) in enumerate(statements.spans):
        count = spans.count(start, end)
        if count == end - start + 1:
            touched.append(index)
        elif count:
            return None  # a statement the change edits: its function shapes need the base side
    lines = source.split("\n")
    body: list[ast.stmt] = []
    for first, last in _runs(statements.spans, touched):
        piece = "\n" * (first - 1) + "\n".join(lines[first - 1 : last])
        try:
            body += ast.parse(piece, filename=path).body
        except UNPARSABLE:
            return None
    starts = list(dict.fromkeys(first_line(statement) for statement in body))  # `a = 1; b = 2` is one span
    if starts != [statements.spans[index][0] for index in touched]:
        return None
    kept = set(touched)
    ends = [*statements.offsets[1:], len(statements.blanked)]
    others = _runs(list(zip(statements.offsets, ends, strict=True)), [index for index in range(len(ends)) if index not in kept])
    return TouchedModule(ast.Module(body=body, type_ignores=[]), others, statements.blanked)


def _runs(spans: list[tuple[int, int]], chosen: list[int]) -> list[tuple[int, int]]:
    """The chosen statements that follow each other with no other statement between them, as runs
    from the first one's start to the last one's end (lines or offsets): an appended stretch of
    functions is one piece to parse, not one each behind its own run of newlines."""
    runs: list[tuple[int, int]] = []
    previous = -2
    for index in chosen:
        start, end = spans[index]
        if index == previous + 1:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
        previous = index
    return runs
