"""How much logic a stretch of normalized code holds: its decisions (`if`, a loop, `and`, `&&`, a
`catch`), its calls and its arithmetic. A short definition copied whole is a second place to fix
the next bug when it is dense with these; a body of plain assignments and returns of the same
length is not (`duplicates.py` asks this only of whole definitions under MIN_CHARACTERS)."""

from __future__ import annotations

import re

from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import IDENTIFIER_MARK

# Keywords and operators stay as written in the normalized text, names are marks, strings `"`,
# numbers `0` and no space is left, so each pattern reads the code's own tokens.
_DECISION = re.compile(r"(?<![\w$])(?:if|elif|for|while|case|catch|except|and|or)(?![\w$])|&&|\|\||\?(?![.?])")
# A name followed by `(`, less the definition's own name (`def a(`, `func a(`, `function a(`).
_CALL = re.compile(r"(?<!def)(?<!func)(?<!fun)(?<!fn)(?<!function)" + IDENTIFIER_MARK + r"\(")
# A binary operator between two operands (`*args`, `-1` and `->` are none).
_ARITHMETIC = re.compile(r"(?<=[" + IDENTIFIER_MARK + r"\"0)\]])(?:[-+*/%]|<<|>>)=?(?=[" + IDENTIFIER_MARK + r"\"0(\[-])")


def substance(normalized_code: str) -> int:
    """The decisions, calls and arithmetic operators in `normalized_code`."""
    return (len(_DECISION.findall(normalized_code)) + len(_CALL.findall(normalized_code))
            + len(_ARITHMETIC.findall(normalized_code)))
