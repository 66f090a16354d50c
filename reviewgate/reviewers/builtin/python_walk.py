"""One walk of a Python syntax tree, its nodes grouped by type, shared by every lens that asks for a
kind of node."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import TypeVar, cast

from reviewgate.lazy_patterns import LazyPattern

NodeT = TypeVar("NodeT", bound=ast.AST)


# Fields that hold only operator and context nodes (`Load()`, `Add()`, `Eq()`): a third of a
# tree's nodes, which no lens asks for, so the walk leaves them out.
_UNWALKED_FIELDS = frozenset({"ctx", "op", "ops"})


# The grammar's types whose values are never nodes (`Name(identifier id, expr_context ctx)`).
_SCALAR_TYPES = frozenset({"identifier", "string", "constant", "int"})


_SIGNATURE = LazyPattern(r"\w+\((?P<fields>.*)\)")


# How the walk reads each field of a node class, in field order: a node or None (`expr? returns`),
# a list of nodes, some None (`expr* keys` of `{**rest}`), or unknown (tested value by value).
_NODE, _NODES, _UNKNOWN = 0, 1, 2


_walk_plans: dict[type[ast.AST], tuple[tuple[str, int], ...]] = {}


def _walk_plan(kind: type[ast.AST]) -> tuple[tuple[str, int], ...]:
    """The fields of `kind` that may hold nodes, read from its grammar line (the class's
    docstring, `FunctionDef(identifier name, arguments args, stmt* body, ...)`): the walk then
    neither reads a name's or a constant's fields nor tests each value it reads for a node."""
    fields = [name for name in kind._fields if name not in _UNWALKED_FIELDS]
    signature = _SIGNATURE.fullmatch((kind.__doc__ or "").strip())
    declared: dict[str, str] = {}  # field name -> its type (`stmt*`, `expr?`, `identifier`)
    for part in signature["fields"].split(", ") if signature else ():
        declared_type, _space, field = part.partition(" ")
        declared[field] = declared_type
    plan = []
    for name in fields:
        declared_type = declared.get(name)
        if declared_type is None:
            plan.append((name, _UNKNOWN))
        elif declared_type.rstrip("*?") not in _SCALAR_TYPES:
            plan.append((name, _NODES if declared_type.endswith("*") else _NODE))
    return tuple(plan)


@functools.cache
def compiled_walk() -> Callable[..., dict[type[ast.AST], tuple[ast.AST, ...]] | None] | None:
    """`Walk`'s grouping compiled (_walk.c: 0.2 s where this loop took 0.5 s over Django +304k
    appended's trees), where a C compiler built it; loaded by the first walk (a change with no
    Python file never needs it)."""
    try:
        from reviewgate.reviewers.builtin._walk import grouped_nodes
    except ImportError:
        return None
    return grouped_nodes


@functools.cache
def compiled_walk_plans() -> dict[type[ast.AST], tuple[tuple[str, int], ...]]:
    """The classes the compiled walk reads, each with its plan: those the `ast` module defines
    (what ast.parse makes) whose every field a node lacks reads as None, as the walk reads it from
    the node's own dictionary: no class in their order defines a field's name as anything but None
    (the deprecated `Num.n` and `Str.s` are properties), nor a truth of its own. A tree holding
    any other is walked by the Python path."""
    known: dict[type[ast.AST], tuple[tuple[str, int], ...]] = {}
    pending: list[type[ast.AST]] = [ast.AST]
    while pending:
        kind = pending.pop()
        pending += kind.__subclasses__()
        if kind.__module__ != "ast" or hasattr(kind, "__bool__") or hasattr(kind, "__len__"):
            continue
        plan = _walk_plan(kind)
        if all(vars(base).get(name) is None for name, _reading in plan for base in kind.__mro__):
            known[kind] = plan
    return known


class Walk:
    """A tree's nodes grouped by their exact class, in `ast.walk`'s breadth-first order, operator
    and context nodes left out. Several lenses and the tests lens's function counts look for
    different kinds in the same tree: it is walked once (the walk is most of their time on a
    large change). Grouping by exact class is what `isinstance` means for the concrete node
    classes `ast.parse` makes (none of them subclasses another)."""

    def __init__(self, tree: ast.AST) -> None:
        grouped_nodes = compiled_walk()
        grouped = None if grouped_nodes is None else grouped_nodes(tree, compiled_walk_plans())
        if grouped is not None:  # None: a tree holding what ast.parse never makes, walked here
            self._grouped = grouped
            return
        # Per node class met: how to read its fields, and the list its nodes go to.
        met: dict[type[ast.AST], tuple[tuple[tuple[str, int], ...], list[ast.AST]]] = {}
        queue: list[ast.AST] = [tree]
        append, extend, node_type = queue.append, queue.extend, ast.AST
        for node in queue:  # the list grows while it is read: a queue that is never popped
            kind = type(node)
            entry = met.get(kind)
            if entry is None:
                plan = _walk_plans.get(kind)
                if plan is None:
                    plan = _walk_plans[kind] = _walk_plan(kind)
                entry = met[kind] = (plan, [])
            plan, same = entry
            same.append(node)
            for name, reading in plan:
                value = getattr(node, name, None)
                if reading == _NODES:
                    if value:
                        extend(filter(None, value))  # a node is always true; a list's holes are None
                elif reading == _NODE:
                    if value is not None:
                        append(value)
                elif value.__class__ is list:
                    extend([item for item in value if isinstance(item, node_type)])
                elif isinstance(value, node_type):
                    append(value)
        self._grouped = {kind: tuple(nodes) for kind, (_plan, nodes) in met.items()}

    def of(self, kind: type[NodeT]) -> tuple[NodeT, ...]:
        """The nodes of one kind (not an operator or a context), in `ast.walk` order."""
        return cast("tuple[NodeT, ...]", self._grouped.get(kind, ()))


@functools.lru_cache(maxsize=64)
def walk_of(tree: ast.Module) -> Walk:
    """The tree's grouped walk, made once for all the lenses reading the same tree; whoever keeps
    the tree for later (the tests lens's function counts) keeps its walk too."""
    return Walk(tree)


def nodes_of(tree: ast.Module, kind: type[NodeT]) -> tuple[NodeT, ...]:
    """The nodes of one kind in the tree, in `ast.walk` order (see `Walk`)."""
    return walk_of(tree).of(kind)
