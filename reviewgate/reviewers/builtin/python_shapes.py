"""Python functions by `ast`: what the tests lens compares between the merge base and head.

The body key leaves out what does not change behaviour: positions and formatting, comments,
docstrings, annotations (parameters, returns, `x: int = 1`), `if TYPE_CHECKING:` blocks, the
text of string literals, and the names of local variables (numbered in order of appearance).
"""

from __future__ import annotations

import ast

from reviewgate.reviewers.builtin.shapes import FunctionShape, Shapes, add_shape

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SKIPPED_FIELDS = frozenset({"annotation", "returns", "type_comment", "type_params", "ctx", "kind"})


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and any(
        isinstance(side, ast.Name) and side.id == "__name__" for side in (test.left, *test.comparators)
    )


def _has_docstring(body: list[ast.stmt]) -> bool:
    first = body[0] if body else None
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def _is_public(qualified: list[str]) -> bool:
    return not any(part.startswith("_") and not part.endswith("__") for part in qualified)


class _BodyWalker:
    """One walk of a function: its normalised text, branch and statement counts. Nested
    functions and classes are shapes of their own: here they stand as their name only."""

    def __init__(self, local_names: set[str]) -> None:
        self.local_names = local_names
        self.numbers: dict[str, int] = {}
        self.parts: list[str] = []
        self.branches = 0
        self.statements = 0

    def statements_of(self, body: list[ast.stmt]) -> None:
        for statement in body[1:] if _has_docstring(body) else body:
            self.node(statement)

    def node(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            self.statements += 1
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            self.parts.append(f"<def {node.name}>")
            return
        if isinstance(node, ast.If):
            if _is_type_checking(node.test):
                self.statements -= 1
                return
            self.branches += 1
        elif isinstance(node, (ast.IfExp, ast.While, ast.For, ast.AsyncFor, ast.ExceptHandler, ast.match_case)):
            self.branches += 1
        elif isinstance(node, ast.BoolOp):
            self.branches += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            self.branches += 1 + len(node.ifs)
        elif isinstance(node, ast.AnnAssign):
            if node.value is None:  # a bare declaration: typing only
                self.statements -= 1
                return
            self.parts.append("Assign(")  # the same text as the assignment without its annotation
            self.node(node.target)
            self.parts.append(";")
            self.node(node.value)
            self.parts.append(")")
            return
        elif isinstance(node, ast.Constant):
            self.parts.append("Str" if isinstance(node.value, str) else repr(node.value))
            return
        elif isinstance(node, ast.Name):
            self.parts.append(self._name(node.id))
            return
        elif isinstance(node, ast.arg):
            self.parts.append(self._name(node.arg))
            return
        self.parts.append(type(node).__name__ + "(")
        for field in node._fields:
            if field in _SKIPPED_FIELDS:
                continue
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                self.node(value)
            elif isinstance(value, list):
                if field == "body" and value and isinstance(value[0], ast.stmt):
                    self.statements_of(value)
                    self.parts.append(";")
                    continue
                for item in value:
                    if isinstance(item, ast.AST):
                        self.node(item)
                    else:
                        self.parts.append(repr(item))
                self.parts.append(";")
            elif value is not None:
                self.parts.append(repr(value))
        self.parts.append(")")

    def _name(self, name: str) -> str:
        if name not in self.local_names:
            return name
        return f"v{self.numbers.setdefault(name, len(self.numbers))}"


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters and names the function assigns: renaming them changes nothing outside."""
    arguments = function.args
    names = {
        item.arg
        for item in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
        if item is not None
    }
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[str, str], ...]:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = list(zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True))
    pairs += [(item, value) for item, value in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if value]
    return tuple((item.arg, ast.unparse(value)) for item, value in pairs)


def _shape(function: ast.FunctionDef | ast.AsyncFunctionDef, qualified: list[str]) -> FunctionShape:
    walker = _BodyWalker(_local_names(function))
    for decorator in function.decorator_list:
        walker.node(decorator)
    walker.parts.append("|")
    for _name, value in _defaults(function):
        walker.parts.append(value)
    walker.parts.append("|")
    walker.statements_of(function.body)
    return FunctionShape(
        name=".".join(qualified),
        line=function.lineno,
        end_line=function.end_lineno or function.lineno,
        body=" ".join(walker.parts),
        branches=walker.branches,
        statements=walker.statements,
        public=_is_public(qualified),
        defaults=_defaults(function),
    )


def python_shapes(tree: ast.Module) -> Shapes:
    """Every function and method, nested ones under their enclosing names."""
    shapes: Shapes = {}
    stack: list[tuple[ast.AST, list[str]]] = [(tree, [])]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                qualified = [*prefix, child.name]
                add_shape(shapes, _shape(child, qualified))
                stack.append((child, qualified))
            elif isinstance(child, ast.ClassDef):
                stack.append((child, [*prefix, child.name]))
            elif isinstance(child, ast.If) and (_is_type_checking(child.test) or _is_main_guard(child.test)):
                continue  # imports for type checkers; a script's entry point
            elif isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                stack.append((child, prefix))
    return shapes
