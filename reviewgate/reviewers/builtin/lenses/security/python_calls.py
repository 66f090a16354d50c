"""What the security rules read of a Python call and of the module around it: a call's dotted
name and keywords, whether a string is built by formatting and what values go into it, and what
a name was last assigned (a shell or SQL call given a variable for its text)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from reviewgate.reviewers.builtin.python_walk import nodes_of


def literal_text(node: ast.expr) -> str:
    """The constant string parts of a formatted expression (to tell SQL from other text)."""
    return " ".join(
        item.value
        for item in ast.walk(node)
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    )


def is_formatted(node: ast.expr) -> bool:
    """An f-string with a substitution, `"..." % x`, `"..." + x` or `"...".format(x)`."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(value, ast.FormattedValue) for value in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return isinstance(node.left, (ast.Constant, ast.JoinedStr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        sides = (node.left, node.right)
        has_text = any(
            isinstance(side, (ast.Constant, ast.JoinedStr)) or is_formatted(side) for side in sides
        )
        return has_text and not all(isinstance(side, ast.Constant) for side in sides)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return isinstance(node.func.value, ast.Constant)
    return False


def substituted_values(node: ast.expr) -> list[ast.expr]:
    """The values a formatted string takes in: an f-string's fields, the right of `%`, the
    arguments of `.format`, the non-literal sides of `+`."""
    if isinstance(node, ast.JoinedStr):
        return [value.value for value in node.values if isinstance(value, ast.FormattedValue)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return list(node.right.elts) if isinstance(node.right, ast.Tuple) else [node.right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [
            value
            for side in (node.left, node.right)
            if not isinstance(side, ast.Constant)
            for value in (substituted_values(side) if isinstance(side, (ast.JoinedStr, ast.BinOp)) else [side])
        ]
    if isinstance(node, ast.Call):
        return [*node.args, *(keyword.value for keyword in node.keywords)]
    return []


def dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((item.value for item in call.keywords if item.arg == name), None)


def is_constant(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


class PythonModule:
    """The module a call is in, read when a rule first asks: most files are never read whole."""

    def __init__(self, module: Callable[[], ast.Module | None], in_test: bool) -> None:
        self.in_test = in_test
        self._module = module  # the whole module's tree: the calls may come from the touched statements'

    def tree(self) -> ast.Module | None:
        """The whole module's syntax tree (parsed once, python_parsing.py)."""
        return self._module()

    @functools.cached_property
    def assigned_names(self) -> dict[str, list[tuple[int, ast.expr]]]:
        """Every plain assignment of each name in the module, by line: `sql = f"..."; cur.execute(sql)`.
        Found when a call first asks (a shell or SQL call with a name for its text): most files have none."""
        found: dict[str, list[tuple[int, ast.expr]]] = {}
        tree = self._module()
        for node in nodes_of(tree, ast.Assign) if tree is not None else ():
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append((node.lineno, node.value))
        for assignments in found.values():
            assignments.sort(key=lambda item: item[0])
        return found

    def value_of(self, name: ast.Name) -> ast.expr | None:
        """What `name` was last assigned above its use (the nearest assignment, not one of another
        function's that shares the name: `query = "... = %s"` here, `query = "..." % x` elsewhere)."""
        before = [value for line, value in self.assigned_names.get(name.id, ()) if line < name.lineno]
        return before[-1] if before else None

    @functools.cached_property
    def shell_spans(self) -> list[tuple[int, int]]:
        """The top-level functions and classes that use Python's interactive interpreter: a shell,
        whose eval of its user's input is its purpose (interpreter_shells.py)."""
        from reviewgate.reviewers.builtin.lenses.security.interpreter_shells import shell_spans

        tree = self._module()
        return shell_spans(tree) if tree is not None else []

    def in_a_shell(self, call: ast.Call) -> bool:
        return any(first <= call.lineno <= last for first, last in self.shell_spans)

    def formatted(self, node: ast.expr) -> ast.expr | None:
        """The formatted string `node` is, or the one the name it is was last assigned."""
        if is_formatted(node):
            return node
        if isinstance(node, ast.Name):
            value = self.value_of(node)
            return value if value is not None and is_formatted(value) else None
        return None
