"""Python functions by `ast`: what the tests lens compares between the merge base and head.

The body key leaves out what does not change behaviour: positions and formatting, comments,
docstrings, annotations (parameters, returns, `x: int = 1`), `if TYPE_CHECKING:` blocks, the
text of string literals, and the names of local variables (numbered in order of appearance).
"""

from __future__ import annotations

import ast
import functools
import itertools
import operator
from collections import Counter

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes, add_shape
from reviewgate.reviewers.builtin.python_walk import Walk, nodes_of, walk_of

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


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
        if isinstance(node, (*FUNCTION_NODES, ast.ClassDef)):
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
        if isinstance(node, (*FUNCTION_NODES, ast.ClassDef, ast.Lambda)):
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


_LINE = operator.attrgetter("lineno")


# Nodes that are one decision each, found on their own line.
_ONE_DECISION = (ast.IfExp, ast.While, ast.For, ast.AsyncFor, ast.ExceptHandler)


def _branch_lines(walk: Walk) -> tuple[list[int], list[tuple[int, int]]]:
    """The lines of every branch in the tree that is one decision (a line once per branch), and
    (line, how many decisions) of the others, from the walk the lenses share."""
    single = [node.lineno for node in walk.of(ast.If) if not _is_type_checking(node.test)]
    for kind in _ONE_DECISION:
        single += map(_LINE, walk.of(kind))
    single += [node.pattern.lineno for node in walk.of(ast.match_case)]
    # A boolean operator is no branch: `if a or b or c` is the one decision `if a` was.
    weighted = [(node.target.lineno, 1 + len(node.ifs)) for node in walk.of(ast.comprehension)]
    return single, weighted


# coverage.py's own default exclusion (`# pragma: no cover`, `#pragma nocover`): a line so marked,
# and the block it opens, are left out of the coverage measured, on purpose.
NO_COVER = LazyPattern(r"#\s*(?:pragma|PRAGMA)[:\s]?\s*(?:no|NO)\s*(?:cover|COVER)")


# Nodes whose header line can be marked, and the last line of the block that line opens.
_MARKABLE = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.Try, ast.With, ast.AsyncWith)


def _uncovered_spans(walk: Walk, lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) lines of each block whose opening line is marked `# pragma: no cover`: the
    project declares it left untested by design, so its decisions are none a test must pin down.
    An `if`'s block is its body alone (an `else:` opens its own)."""
    spans = []
    for kind in _MARKABLE:
        for node in walk.of(kind):
            line: int = getattr(node, "lineno", 0)
            if 0 < line <= len(lines) and NO_COVER.search(lines[line - 1]):
                body: list[ast.stmt] = getattr(node, "body", None) or []
                spans.append((line, (body[-1].end_lineno if body else None) or line))
    for node in walk.of(ast.match_case):
        line = node.pattern.lineno
        if line <= len(lines) and NO_COVER.search(lines[line - 1]):
            spans.append((line, node.body[-1].end_lineno or line))
    return spans


class _Counts:
    """(branches, statements) of every function of one tree, each node counted on the innermost
    function whose lines hold it, from the grouped walk the lenses already made of the tree (kept
    here: the tests lens asks long after the lenses that walked it are done with the file).
    Computed on first use: a side whose functions are all untouched needs none."""

    def __init__(
        self,
        walk: Walk,
        functions: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]],
        uncovered: list[tuple[int, int]] | None = None,
    ) -> None:
        self.walk = walk
        self.functions = functions
        self.uncovered = uncovered or []  # blocks marked `# pragma: no cover`: their decisions are none
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
        held = len(owner).__gt__  # a line past the last function's is no function's
        # Counted in C: how many branches and statements each function's lines hold.
        single, weighted = _branch_lines(self.walk)
        if self.uncovered:
            marked = set().union(*(range(first, last + 1) for first, last in self.uncovered))
            single = [line for line in single if line not in marked]
            weighted = [(line, count) for line, count in weighted if line not in marked]
        branches = Counter(map(owner.__getitem__, filter(held, single)))
        for line, count in weighted:
            if held(line):
                branches[owner[line]] += count
        lines = itertools.chain.from_iterable(map(_LINE, self.walk.of(kind)) for kind in _STATEMENT_KINDS)
        statements = Counter(map(owner.__getitem__, filter(held, lines)))
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
    script's entry point), `@overload` stubs left out. Found in the grouped walk the lenses share (python_walk.nodes_of); the
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


def _is_plain(value: ast.expr | None) -> bool:
    """A name, a constant or an attribute of one (`self.inner.client`): no call, no operator."""
    while isinstance(value, ast.Attribute):
        value = value.value
    return value is None or isinstance(value, (ast.Name, ast.Constant))


def _forwards(value: ast.expr | None) -> bool:
    """One call of a plain callee with plain arguments (`self._inner.send(request, timeout=t)`)."""
    if isinstance(value, ast.Await):
        value = value.value
    return (
        isinstance(value, ast.Call)
        and _is_plain(value.func)
        and all(_is_plain(item.value if isinstance(item, ast.Starred) else item) for item in value.args)
        and all(_is_plain(keyword.value) for keyword in value.keywords)
    )


def _is_trivial(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A stub, or one `return` of a name, attribute or constant; or a body that passes through:
    a setter storing plain values and returning (`self.name = name; return self`), or a delegate
    whose one statement forwards one call (`return self._inner.send(request)`)."""
    body = function.body
    if all(_is_stub_statement(statement) for statement in body):
        return True
    rest = body[1:] if _has_docstring(body) else body
    if not rest:
        return False
    *stores, last = rest
    if not stores and isinstance(last, (ast.Return, ast.Expr)) and _forwards(last.value):
        return True
    return (
        isinstance(last, ast.Return)
        and _is_plain(last.value)
        and all(
            isinstance(store, ast.Assign) and len(store.targets) == 1 and _is_plain(store.targets[0])
            and _is_plain(store.value)
            for store in stores
        )
    )


def python_shapes(tree: ast.Module, source: str) -> Shapes:
    """Every function and method, nested ones under their enclosing names."""
    lines = source.splitlines()
    functions = _functions(tree)
    walk = walk_of(tree)
    counts = _Counts(walk, functions, _uncovered_spans(walk, lines) if "pragma" in source.lower() else None)
    shapes: Shapes = {}
    for index, (function, qualified) in enumerate(functions):
        first = first_line(function)
        end = function.end_lineno or function.lineno
        add_shape(shapes, FunctionShape(
            name=".".join(qualified),
            line=function.lineno,
            end_line=end,
            text="\n".join(map(str.strip, lines[first - 1 : end])),
            counts=functools.partial(counts.of, index),
            public=_is_public(qualified),
            body=functools.partial(_body, function),
            defaults=functools.partial(_defaults, function),
            trivial=_is_trivial(function),
        ))
    return shapes


def first_line(statement: ast.stmt) -> int:
    """A statement's first line, its decorators' included."""
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(item.lineno for item in decorators)])
