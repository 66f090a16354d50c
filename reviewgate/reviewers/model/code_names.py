"""Which lines of a file name a symbol in its code: a mention in a comment, a docstring or a
string literal is prose, never a call site (`Options are passed on to route` in a docstring says
nothing of how `route` is called).

Python is read with `tokenize`: a name is code where it is a NAME token. An f-string is one
STRING token before Python 3.12, and its replacement fields are code, so a name inside an
f-string counts as code there. Other languages are not read here: their sites are all kept.
"""

from __future__ import annotations

import io
import re
import tokenize

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_F_PREFIX = re.compile(r"^[A-Za-z]*[fF][A-Za-z]*['\"]")


def python_code_names(text: str) -> dict[str, frozenset[int]] | None:
    """Each name written in a Python file's code, with the lines it stands on; None where the text
    does not tokenize (then every mention counts)."""
    lines: dict[str, set[int]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME:
                lines.setdefault(token.string, set()).add(token.start[0])
            elif token.type == tokenize.STRING and _F_PREFIX.match(token.string):
                for offset, line in enumerate(token.string.split("\n")):
                    for word in _WORD.findall(line):
                        lines.setdefault(word, set()).add(token.start[0] + offset)
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    return {name: frozenset(numbers) for name, numbers in lines.items()}
