"""Suggested changes for the security findings whose fix is mechanical: a developer applies them
in one click (the summary's ```suggestion blocks).

`yaml.load(x)` becomes `yaml.safe_load(x)`, `verify=False` becomes `verify=True`,
`ssl._create_unverified_context()` becomes `ssl.create_default_context()`, and in the C-like
languages `rejectUnauthorized: false` and `InsecureSkipVerify: true` are turned back. Each
suggestion replaces one line the change added, and only that line's offending token.
"""

from __future__ import annotations

import ast
from typing import Any

from reviewgate.lazy_patterns import LazyPattern

# A call to one of these, with no loader given, becomes a call to its safe twin.
_SAFE_TWINS = {
    "yaml.load": "yaml.safe_load",
    "yaml.load_all": "yaml.safe_load_all",
    "yaml.unsafe_load": "yaml.safe_load",
    "yaml.unsafe_load_all": "yaml.safe_load_all",
    "ssl._create_unverified_context": "ssl.create_default_context",
}
_LINE_FIXES = (
    (LazyPattern(r"(\brejectUnauthorized\s*:\s*)false\b"), r"\1true"),
    (LazyPattern(r"(\bInsecureSkipVerify\s*:\s*)true\b"), r"\1false"),
)


def _one_line(line: int, text: str) -> dict[str, Any]:
    return {"start_line": line, "end_line": line, "replacement": text}


def _replace_span(lines: list[str], node: ast.expr, text: str) -> tuple[int, str] | None:
    """The line holding `node` with the node's source replaced by `text` (one-line nodes only)."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return None
    # ast's columns count UTF-8 bytes, not characters.
    source = lines[node.lineno - 1].encode("utf-8", "surrogateescape")
    fixed = source[: node.col_offset] + text.encode("utf-8") + source[node.end_col_offset :]
    return node.lineno, fixed.decode("utf-8", "surrogateescape")


def python_fix(call: ast.Call, dotted_name: str, lines: list[str], added: set[int]) -> dict[str, Any] | None:
    """The suggestion for a flagged Python call, when its fix is mechanical and on an added line."""
    fixed: tuple[int, str] | None = None
    safe_name = _SAFE_TWINS.get(dotted_name)
    loader_given = len(call.args) > 1 or any(item.arg == "Loader" for item in call.keywords)
    if safe_name is not None and not loader_given:
        fixed = _replace_span(lines, call.func, safe_name)
    verify = next((item.value for item in call.keywords if item.arg == "verify"), None)
    if fixed is None and isinstance(verify, ast.Constant) and verify.value is False:
        fixed = _replace_span(lines, verify, "True")
    if fixed is None or fixed[0] not in added:
        return None
    return _one_line(*fixed)


def line_fix(number: int, line: str) -> dict[str, Any] | None:
    """The suggestion for a flagged C-like line (TLS verification turned off), when mechanical."""
    for pattern, replacement in _LINE_FIXES:
        fixed, count = pattern.subn(replacement, line)
        if count == 1:
            return _one_line(number, fixed)
    return None
