"""Python functions by `ast`: what the tests lens compares between the merge base and head.

The body key leaves out what does not change behaviour: positions and formatting, comments,
docstrings, annotations (parameters, returns, `x: int = 1`), `if TYPE_CHECKING:` blocks, the
text of string literals, and the names of local variables (numbered in order of appearance).
"""

from __future__ import annotations

import ast
import functools

from reviewgate.reviewers.builtin.common import Walk, nodes_of, walk_of
from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes, add_shape

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
    """One walk of a function for its normalised text. Nested functions and classes are shapes
    of their own: here they stand as their name only."""

    def __init__(self, local_names: set[str]) -> None:
        self.local_names = local_names
        self.numbers: dict[str, int] = {}
        self.parts: list[str] = []

    def statements_of(self, body: list[ast.stmt]) -> None:
        for statement in body[1:] if _has_docstring(body) else body:
            self.node(statement)

    def node(self, node: ast.AST) -> None:
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            self.parts.append(f"<def {node.name}>")
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            return
        if isinstance(node, ast.AnnAssign):
            if node.value is None:  # a bare declaration: typing only
                return
            self.parts.append("Assign(")  # the same text as the assignment without its annotation
            self.node(node.target)
            self.parts.append(";")
            self.node(node.value)
            self.parts.append(")")
            return
        if isinstance(node, ast.Constant):
            self.parts.append("Str" if isinstance(node.value, str) else repr(node.value))
            return
        if isinstance(node, ast.Name):
            self.parts.append(self._name(node.id))
            return
        if isinstance(node, ast.arg):
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


def _body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    walker = _BodyWalker(_local_names(function))
    for decorator in function.decorator_list:
        walker.node(decorator)
    walker.parts.append("|")
    for _name, value in _defaults(function):
        walker.parts.append(value)
    walker.parts.append("|")
    walker.statements_of(function.body)
    return " ".join(walker.parts)


_STATEMENT_KINDS = tuple(ast.stmt.__subclasses__())


def _branch_lines(walk: Walk) -> list[tuple[int, int]]:
    """(line, how many decisions) of every branch in the tree, from the walk the lenses share."""
    found = [(node.lineno, 1) for node in walk.of(ast.If) if not _is_type_checking(node.test)]
    kinds: tuple[type[ast.expr | ast.stmt | ast.excepthandler], ...] = (
        ast.IfExp, ast.While, ast.For, ast.AsyncFor, ast.ExceptHandler
    )
    for kind in kinds:
        found += [(node.lineno, 1) for node in walk.of(kind)]
    found += [(node.lineno, len(node.values) - 1) for node in walk.of(ast.BoolOp)]
    found += [(node.target.lineno, 1 + len(node.ifs)) for node in walk.of(ast.comprehension)]
    found += [(node.pattern.lineno, 1) for node in walk.of(ast.match_case)]
    return found


class _Counts:
    """(branches, statements) of every function of one tree, each node counted on the innermost
    function whose lines hold it, from the grouped walk the lenses already made of the tree (kept
    here: the tests lens asks long after the lenses that walked it are done with the file).
    Computed on first use: a side whose functions are all untouched needs none."""

    def __init__(self, walk: Walk, functions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]]) -> None:
        self.walk = walk
        self.functions = functions
        self._table: list[tuple[int, int]] | None = None

    def of(self, index: int) -> tuple[int, int]:
        if self._table is None:
            self._table = self._count()
        return self._table[index]

    def _count(self) -> list[tuple[int, int]]:
        last = max((function.end_lineno or function.lineno for function, _ in self.functions), default=0)
        owner = [-1] * (last + 2)
        for index, (function, _qualified) in enumerate(self.functions):  # by start: inner ones overwrite
            end = function.end_lineno or function.lineno
            owner[function.lineno : end + 1] = [index] * (end + 1 - function.lineno)
        branches = [0] * len(self.functions)
        statements = [0] * len(self.functions)
        for line, count in _branch_lines(self.walk):
            if line < len(owner) and owner[line] >= 0:
                branches[owner[line]] += count
        for kind in _STATEMENT_KINDS:
            for node in self.walk.of(kind):
                if node.lineno < len(owner) and owner[node.lineno] >= 0:
                    statements[owner[node.lineno]] += 1
        # The def is counted on its own first line; a docstring is not behaviour.
        return [
            (branches[index], statements[index] - 1 - _has_docstring(function.body))
            for index, (function, _qualified) in enumerate(self.functions)
        ]


def _is_overload(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """An `@overload` / `@typing.overload` stub: a signature for the type checker, not a function."""
    return any(
        (isinstance(item, ast.Name) and item.id == "overload")
        or (isinstance(item, ast.Attribute) and item.attr == "overload")
        for item in node.decorator_list
    )


def _functions(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]]:
    """Every function and method with its qualified name, in line order, outside `if
    TYPE_CHECKING:` and `if __name__ == "__main__":` blocks (imports for type checkers; a
    script's entry point), `@overload` stubs left out. Found in the grouped walk the lenses share (common.nodes_of); the
    enclosing classes and functions are the ones whose lines hold the definition."""
    hidden = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in nodes_of(tree, ast.If)
        if _is_type_checking(node.test) or _is_main_guard(node.test)
    ]
    scopes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = sorted(
        [*nodes_of(tree, ast.FunctionDef), *nodes_of(tree, ast.AsyncFunctionDef), *nodes_of(tree, ast.ClassDef)],
        key=lambda node: node.lineno,
    )
    found: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]] = []
    stack: list[tuple[int, str]] = []  # (last line, name) of the enclosing definitions
    for node in scopes:
        while stack and stack[-1][0] < node.lineno:
            stack.pop()
        qualified = [name for _end, name in stack] + [node.name]
        stack.append((node.end_lineno or node.lineno, node.name))
        if isinstance(node, ast.ClassDef) or any(start <= node.lineno <= end for start, end in hidden):
            continue
        if _is_overload(node):
            continue  # else its stubs number the implementation `name#3` and it reads as new

        found.append((node, qualified))
    return found


def _is_stub_statement(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)  # `...` or a string
    if isinstance(statement, ast.Raise):
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    return False


def _is_trivial(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A stub, or one `return` of a name, attribute or constant."""
    body = function.body
    if all(_is_stub_statement(statement) for statement in body):
        return True
    rest = body[1:] if _has_docstring(body) else body
    return (
        len(rest) == 1
        and isinstance(rest[0], ast.Return)
        and (rest[0].value is None or isinstance(rest[0].value, (ast.Name, ast.Attribute, ast.Constant)))
    )


def python_shapes(tree: ast.Module, source: str) -> Shapes:
    """Every function and method, nested ones under their enclosing names."""
    lines = source.splitlines()
    functions = _functions(tree)
    counts = _Counts(walk_of(tree), functions)
    shapes: Shapes = {}
    for index, (function, qualified) in enumerate(functions):
        first = min([function.lineno, *(item.lineno for item in function.decorator_list)])
        end = function.end_lineno or function.lineno
        add_shape(shapes, FunctionShape(
            name=".".join(qualified),
            line=function.lineno,
            end_line=end,
            text="\n".join(line.strip() for line in lines[first - 1 : end]),
            counts=functools.partial(counts.of, index),
            public=_is_public(qualified),
            body=functools.partial(_body, function),
            defaults=functools.partial(_defaults, function),
            trivial=_is_trivial(function),
        ))
    return shapes
