"""Which lines of a Python file are code and which are prose, and which names its code writes
on each line: a mention in a comment, a docstring or a string literal is prose, never a call site
(`Options are passed on to route` in a docstring says nothing of how `route` is called), and a
line of a docstring or a comment beside a call is not the call's context.

Python is read with `tokenize`: a name is code where it is a NAME token. An f-string is one
STRING token before Python 3.12, and its replacement fields are code, so a name inside an
f-string counts as code there. A line is prose when all it holds is comments and strings that
stand as statements of their own (a docstring, a bare string); a string inside an expression
(a call's message on a line of its own) belongs to that statement's code. Other languages are
not read here: their sites and windows are kept as found.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_F_PREFIX = re.compile(r"^[A-Za-z]*[fF][A-Za-z]*['\"]")
_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})
# A statement made of these alone is prose: a docstring, or a bare string (3.12 splits f-strings).
_STRING_KINDS = frozenset({tokenize.STRING} | {getattr(tokenize, name) for name in
                                               ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                                               if hasattr(tokenize, name)})


@dataclass(frozen=True)
class PythonReading:
    """One Python file read with `tokenize`."""

    names: dict[str, frozenset[int]]  # each name its code writes, with the lines it stands on
    code: frozenset[int]  # lines holding code
    prose: frozenset[int]  # lines holding only comments and statement strings

    def code_window(self, first: int, last: int, line: int) -> tuple[int, int]:
        """The window `first`..`last` around `line` (a line of code), its edges trimmed to the
        code: on each side, the lines past the outermost code line are left out when one of them
        is prose (blank lines alone stay, as found)."""
        return self._edge(range(first, line), line), self._edge(range(last, line, -1), line)

    def _edge(self, inward: range, line: int) -> int:
        """The new edge of one side, walking `inward` from the old one to the site at `line`."""
        prose = False
        for number in inward:
            if number in self.code:
                return number if prose else inward.start
            prose = prose or number in self.prose
        return line if prose else inward.start


def read_python(text: str) -> PythonReading | None:
    """The file's code and prose lines and names; None where the text does not tokenize (then
    every mention counts, and every line)."""
    names: dict[str, set[int]] = {}
    code: set[int] = set()
    prose: set[int] = set()
    statement: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME:
                names.setdefault(token.string, set()).add(token.start[0])
            elif token.type == tokenize.STRING and _F_PREFIX.match(token.string):
                for offset, line in enumerate(token.string.split("\n")):
                    for word in _WORD.findall(line):
                        names.setdefault(word, set()).add(token.start[0] + offset)
            if token.type == tokenize.COMMENT:
                prose.add(token.start[0])
            elif token.type not in _LAYOUT:
                statement.append(token)
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and statement:
                spanned = {number for item in statement for number in range(item.start[0], item.end[0] + 1)}
                (prose if all(item.type in _STRING_KINDS for item in statement) else code).update(spanned)
                statement = []
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    return PythonReading({name: frozenset(numbers) for name, numbers in names.items()},
                         frozenset(code), frozenset(prose - code))
