"""Light data flow inside one Python function, for the lenses that follow input to a sink: which
names hold a value that came from a source (request input, `sys.argv`, the environment), through
simple assignments, f-strings, concatenation, `or` defaults and attribute or call wrappers.

Flow-insensitive within the function but ordered by line: a name counts as tainted at a use only
when an assignment from a source comes before it. Nested functions are scopes of their own; a
sanitizer call (named by the lens) stops the taint.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import NamedTuple

from reviewgate.reviewers.builtin.python_walk import nodes_of

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Request attributes that hold what the sender chose: query, form, body, headers, cookies.
_REQUEST_INPUT = frozenset(
    {"args", "values", "form", "GET", "POST", "REQUEST", "query_params", "headers", "cookies", "json", "data",
     "body", "get_json", "query", "params", "path_params", "META", "files"}
)
_REQUEST_NAMES = frozenset({"request", "req"})


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def call_name(node: ast.AST) -> str:
    """`re.compile` for `re.compile(x)`, `get` for `request.args.get(x)`'s leaf: the dotted callee."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and not dotted(func):
            return "." + func.attr  # a method of an expression: `(...).decode()`
        return dotted(func)
    return ""


def leaf_name(call: ast.Call) -> str:
    """The called name without its receiver (`compile` of `re.compile(x)`): a cheap first test."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def request_input(node: ast.expr) -> bool:
    """`request.args`, `self.request.GET`, `req.headers`: the sender's part of a request."""
    if not isinstance(node, ast.Attribute) or node.attr not in _REQUEST_INPUT:
        return False
    inner = node.value
    return (isinstance(inner, ast.Name) and inner.id in _REQUEST_NAMES) or (
        isinstance(inner, ast.Attribute) and inner.attr in _REQUEST_NAMES
    )


def process_input(node: ast.expr) -> bool:
    """`sys.argv`, `os.environ`, `os.getenv(...)`."""
    name = dotted(node)
    if name in {"sys.argv", "os.environ"}:
        return True
    return isinstance(node, ast.Call) and call_name(node) in {"os.getenv", "getenv", "os.environ.get"}


class Origin(NamedTuple):
    """Where a value that reaches a sink came from: the source expression, its line and the name it went through."""

    source: str  # the source expression, as written (shortened)
    line: int
    name: str = ""  # the local name it reached the sink through, if any


def _short(node: ast.AST, limit: int = 70) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


def scope_of(tree: ast.Module, node: ast.AST) -> Scope:
    """The innermost function holding `node`, or the module (from the walk the lenses share)."""
    line = getattr(node, "lineno", 0)
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [
        *nodes_of(tree, ast.FunctionDef), *nodes_of(tree, ast.AsyncFunctionDef)
    ]
    holding = [
        function
        for function in functions
        if function.lineno < line <= (function.end_lineno or function.lineno) and function is not node
    ]
    return max(holding, key=lambda function: function.lineno) if holding else tree


class Flows:
    """One `Flow` per scope, made when a sink in it is first asked about."""

    def __init__(self, tree: ast.Module, make: Callable[[Scope], Flow]) -> None:
        self.tree = tree
        self.make = make
        self._made: dict[int, Flow] = {}

    def of(self, node: ast.AST) -> Flow:
        scope = scope_of(self.tree, node)
        if id(scope) not in self._made:
            self._made[id(scope)] = self.make(scope)
        return self._made[id(scope)]


def scope_nodes(scope: ast.AST) -> list[ast.AST]:
    """Every node of the scope, outside nested functions, classes and lambdas, in source order
    (a comprehension's `for`, which has no position of its own, at its target's)."""
    found: list[tuple[int, int, ast.AST]] = []
    stack: list[ast.AST] = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        placed = node.target if isinstance(node, ast.comprehension) else node
        if hasattr(placed, "lineno"):
            found.append((placed.lineno, placed.col_offset, node))  # type: ignore[attr-defined]
        stack.extend(ast.iter_child_nodes(node))
    found.sort(key=lambda item: (item[0], item[1]))
    return [node for _line, _column, node in found]


class Flow:
    """Tainted names of one scope. `is_source` tells a source expression; `sanitizers` are
    callee names (dotted or leaf) whose result is clean; `leading` follows only the value that
    starts a string (`"/a?next=" + x` does not choose where a redirect goes)."""

    def __init__(
        self,
        scope: ast.AST,
        is_source: Callable[[ast.expr], bool],
        sanitizers: frozenset[str],
        *,
        leading: bool = False,
        route_parameters: bool = False,
    ) -> None:
        self.is_source = is_source
        self.sanitizers = sanitizers
        self.leading = leading
        self.tainted: dict[str, Origin] = {}
        self.values: dict[str, ast.expr] = {}  # the value each tainted name was first assigned
        if route_parameters and isinstance(scope, _FUNCTIONS):
            self.tainted.update(route_input(scope))
        self.nodes = scope_nodes(scope)
        for node in self.nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                targets: list[ast.expr] = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
                self._assign(targets, node.value)
            elif isinstance(node, ast.NamedExpr):
                self._assign([node.target], node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._assign([node.target], node.iter)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                self._assign([node.optional_vars], node.context_expr)

    def _assign(self, targets: list[ast.expr], value: ast.expr) -> None:
        origin = self.origin(value)
        if origin is None:
            return
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id not in self.tainted:
                    self.tainted[name.id] = Origin(origin.source, origin.line, name.id)
                    self.values[name.id] = value

    def _sanitized(self, call: ast.Call) -> bool:
        name = call_name(call)
        return name in self.sanitizers or name.rsplit(".", 1)[-1] in self.sanitizers

    def origin(self, node: ast.expr | None) -> Origin | None:
        """Where the value of `node` came from, if from a source."""
        if node is None:
            return None
        if self.is_source(node):
            return Origin(_short(node), node.lineno)
        if isinstance(node, ast.Name):
            found = self.tainted.get(node.id)
            return found if found is not None and found.line <= node.lineno else None
        if isinstance(node, ast.Call):
            if self._sanitized(node):
                return None
            if isinstance(node.func, ast.Attribute):
                found = self.origin(node.func.value)
                if found is not None:
                    return Origin(_short(node), found.line, found.name) if self.is_source(node.func.value) else found
            if self.leading and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
                return None
            return self._first(node.args if not self.leading else node.args[:1])
        if isinstance(node, ast.Subscript) and self.is_source(node.value):
            return Origin(_short(node), node.lineno)
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred, ast.FormattedValue, ast.Await)):
            return self.origin(node.value)
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            if self.leading:  # a lone `/` before the value fixes no host: f"/{path}" may be `//evil`
                parts = parts[1:2] if parts and _is_slash(parts[0]) else parts[:1]
            return self._first([part for part in parts if isinstance(part, ast.FormattedValue)])
        if isinstance(node, ast.BinOp):
            if self.leading:
                if isinstance(node.op, ast.Mod):
                    return None
                return self.origin(node.right) if _is_slash(node.left) else self.origin(node.left)
            return self.origin(node.left) or self.origin(node.right)
        if isinstance(node, ast.BoolOp):
            return self._first(node.values)
        if isinstance(node, ast.IfExp):
            return self.origin(node.body) or self.origin(node.orelse)
        if isinstance(node, (ast.Tuple, ast.List)):
            return self._first(node.elts)
        return None

    def _first(self, nodes: list[ast.expr]) -> Origin | None:
        for item in nodes:
            found = self.origin(item)
            if found is not None:
                return found
        return None


# A decorator that makes a function a route: `@app.get("/x")`, `@router.post("/x")`, `@app.route("/x")`.
_ROUTE_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "route", "api_route", "websocket"})


def route_input(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Origin]:
    """The parameters of a route function that the framework fills from the request's text:
    FastAPI's `str` query and path parameters (`async def login(next: str = "/")`), and a
    Flask or FastAPI path parameter named in the route (`/go/<path:target>`, `/go/{target}`)."""
    paths = [
        decorator.args[0].value
        for decorator in function.decorator_list
        if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr in _ROUTE_METHODS and decorator.args
        and isinstance(decorator.args[0], ast.Constant) and isinstance(decorator.args[0].value, str)
        and decorator.args[0].value.startswith("/")
    ]
    if not paths:
        return {}
    found: dict[str, Origin] = {}
    arguments = function.args
    for parameter in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        annotation = ast.unparse(parameter.annotation) if parameter.annotation is not None else ""
        textual = annotation in {"str", "str | None", "Optional[str]", "typing.Optional[str]"}
        in_path = any(f"{{{parameter.arg}}}" in path or re.search(rf"<(?:\w+:)?{parameter.arg}>", path) for path in paths)
        if textual or (in_path and not annotation):
            where = "path" if in_path else "query"
            found[parameter.arg] = Origin(f"the {where} parameter `{parameter.arg}` of the route `{paths[0]}`",
                                          function.lineno, parameter.arg)
    return found


def _is_slash(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in ("", "/")


def describe(origin: Origin) -> str:
    """`next_url`, assigned from `request.args.get('next')` at line 5. A route parameter's source
    is already words with its code quoted (route_input), not code to quote."""
    source = origin.source if "`" in origin.source else f"`{origin.source}`"
    if origin.name:
        return f"`{origin.name}`, from {source} at line {origin.line}"
    return f"{source} (line {origin.line})"
