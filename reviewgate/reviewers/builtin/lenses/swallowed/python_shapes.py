"""What a swallowing Python handler is part of, when that says the failure is dropped by design:
the shapes catch_context.py reads in the other languages, read here from the syntax tree.

- a yes/no question whose failure is its "no": the handler returns `False` where the try block
  returns the answer (`try: return stream.isatty()`) or the code right after it returns `True`
  (`try: stream.read(0)` / `except Exception: return False` / `return True`). A handler that
  returns `True`, or a default that looks like a result (`{}`, `None`), still hides the failure;
- best-effort clean-up: the try block is one call that closes, cancels or releases something
  (`self.detach()`, `sock.close()`), or the handler is in a `__del__`, where Python only prints
  what escapes;
- a value left unset: the try block ends by assigning a name, the handler does nothing, and the
  statement right after the try tests that name (`if result is None:`), so the failure is handled
  there.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from reviewgate.reviewers.builtin.languages.python_flow import leaf_name
from reviewgate.reviewers.builtin.lenses.swallowed.catch_context import CLEANUP_REASON, CLEANUP_VERBS

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Place(NamedTuple):
    """Where a handler stands: its `try`, the statement after that `try` in the same block (None
    when the try ends it) and the innermost function holding it (None at module level)."""

    try_node: ast.stmt
    after: ast.stmt | None
    function: ast.FunctionDef | ast.AsyncFunctionDef | None


def place_of(tree: ast.Module, handler: ast.ExceptHandler) -> Place | None:
    """The handler's place in `tree`; None when no `try` holds it (it is not from this tree)."""
    return _search(tree, handler, None)


def _search(
    node: ast.AST, handler: ast.ExceptHandler, function: ast.FunctionDef | ast.AsyncFunctionDef | None
) -> Place | None:
    # The blocks of a statement, each a list of statements: a try's `after` is its neighbour there.
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(node, field, None)
        if not isinstance(block, list):
            continue
        for index, child in enumerate(block):
            if any(item is handler for item in getattr(child, "handlers", ())):
                after = block[index + 1] if index + 1 < len(block) else None
                return Place(child, after, function)
            if isinstance(child, (ast.stmt, ast.ExceptHandler)):
                found = _search(child, handler, child if isinstance(child, _FUNCTIONS) else function)
                if found is not None:
                    return found
    for case in getattr(node, "cases", ()):  # `match` statements hold their blocks in cases
        found = _search(case, handler, function)
        if found is not None:
            return found
    return None


def deliberate_shape(place: Place, handler: ast.ExceptHandler) -> str | None:
    """Why the swallowing `handler` drops the failure by design, or None."""
    tried = getattr(place.try_node, "body", [])
    if not tried:
        return None
    last = tried[-1]
    if len(handler.body) == 1 and _returns(handler.body[0], False) and (
        (isinstance(last, ast.Return) and last.value is not None) or _returns(place.after, True)
    ):
        return (
            "the function answers a yes/no question and a failure is its no: the handler returns `False` "
            "where the try block or the code right after it gives the answer"
        )
    if place.function is not None and place.function.name == "__del__":
        return "a finalizer's clean-up is best effort: Python only prints what escapes `__del__`"
    if len(tried) == 1 and _cleanup(tried[0]):
        return CLEANUP_REASON
    unset = _assigned_name(last)
    if unset is not None and _handler_does_nothing(handler) and _tests_name(place.after, unset):
        return (
            f"a failure leaves `{unset}` unset, and the statement right after the try tests it, so the "
            "failure is handled there"
        )
    return None


def _returns(statement: ast.stmt | None, value: bool) -> bool:
    """`return False` (or `return True`): the statement returns that constant."""
    return (
        isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant)
        and statement.value.value is value
    )


def _cleanup(statement: ast.stmt) -> bool:
    """`self.detach()`, `sock.close()`: undoing or releasing something."""
    if not isinstance(statement, ast.Expr):
        return False
    value = statement.value.value if isinstance(statement.value, ast.Await) else statement.value
    return isinstance(value, ast.Call) and leaf_name(value) in CLEANUP_VERBS


def _assigned_name(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        return statement.target.id
    return None


def _handler_does_nothing(handler: ast.ExceptHandler) -> bool:
    return len(handler.body) == 1 and isinstance(handler.body[0], ast.Pass)


def _tests_name(statement: ast.stmt | None, name: str) -> bool:
    """`if name is None:`, `if not name:`, `if name is not None:`: the next statement decides on it."""
    if not isinstance(statement, ast.If):
        return False
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(statement.test))
