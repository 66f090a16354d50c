"""The walk the tree-sitter readers of the wrong exception share (Java and Kotlin in
wrong_exception_jvm.py, C# in wrong_exception_csharp.py): the rules of the Python reader
(wrong_exception.py) over a syntax tree. A `try` of at most 3 statements whose clauses all name
known, narrow exceptions; a body holding nothing but calls of the language's table, calls known
to raise nothing, and steps that raise on their own (an index, a cast, a division); handlers
that are for none of those (or only for a codec step beside the call whose failure escapes); and
each table call whose exception none of them catches (the lens, wrong_exception.py, reports it).

Each language gives its exception hierarchy and a `Grammar`: which node is a `try`, its body and
what its clauses name, and what each node of the body is (its `Step`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import tree_sitter

# What a reader makes of one node of a `try` body: a call or step that raises (its key and what
# it raises: the walk goes on into it; the key `[...]` for a step that is not a call), one that
# raises nothing (None: the walk goes on), code that runs later (SKIP), or something the handler
# may be for (OPAQUE: the `try` is not judged).
SKIP, OPAQUE = "skip", "opaque"
STEP_KEY = "[...]"
Step = tuple[str, tuple[str, ...]] | str | None
Raiser = tuple["tree_sitter.Node", str, tuple[str, ...]]
# A `try` node's body, what its clauses name, and the first clause (where the finding is).
Catches = tuple["tree_sitter.Node", list[str], "tree_sitter.Node"]


class Hierarchy:
    """A language's exceptions by their parent, the broad ones a handler of which is not judged,
    and the codec steps a handler may be for while the call beside them escapes it."""

    __slots__ = ("broad", "codec_steps", "parent")

    def __init__(self, parent: dict[str, str], broad: frozenset[str], codec_steps: frozenset[str] = frozenset()) -> None:
        self.parent, self.broad, self.codec_steps = parent, broad, codec_steps

    def lineage(self, name: str) -> list[str]:
        found = [name]
        while found[-1] in self.parent:
            found.append(self.parent[found[-1]])
        return found

    def known(self, types: Iterable[tree_sitter.Node]) -> list[str] | None:
        """The simple names of the types a clause catches (`java.lang.X` is `X`); None when one is
        broad or not in the table."""
        names = [node_text(item).rsplit(".", 1)[-1] for item in types]
        return None if not names or any(name not in self.parent or name in self.broad for name in names) else names

    def catches(
        self,
        body: tree_sitter.Node | None,
        clauses: list[tree_sitter.Node],
        types_of: Callable[[tree_sitter.Node], list[tree_sitter.Node] | None],
    ) -> Catches | None:
        """A `try`'s body and what its clauses name (`types_of` gives a clause's type nodes, None
        for a clause that is not judged); None when there is no body or clause, or one is not known."""
        if body is None or not clauses:
            return None
        names: list[str] = []
        for clause in clauses:
            types = types_of(clause)
            known = self.known(types) if types is not None else None
            if known is None:
                return None
            names += known
        return body, names, clauses[0]




class Grammar:
    """One language's reading of the tree."""

    __slots__ = ("catches", "hierarchy", "step", "try_type")

    def __init__(
        self,
        try_type: str,
        catches: Callable[[tree_sitter.Node], Catches | None],
        step: Callable[[tree_sitter.Node], Step],
        hierarchy: Hierarchy,
    ) -> None:
        self.try_type, self.catches, self.step, self.hierarchy = try_type, catches, step, hierarchy


def children(node: tree_sitter.Node, kind: str) -> list[tree_sitter.Node]:
    return [child for child in node.named_children if child.type == kind]


def node_text(node: tree_sitter.Node) -> str:
    """A node's text without whitespace (`Base64.getDecoder().decode`, a table key)."""
    return re.sub(r"\s+", "", (node.text or b"").decode("utf-8", "replace"))


def arithmetic(node: tree_sitter.Node) -> Step:
    """A division or remainder raises on a zero divisor: a handler may be for that."""
    operator = node.child_by_field_name("operator")
    shown = node_text(operator) if operator is not None else next((node_text(item) for item in node.children if not item.is_named), "")
    return (STEP_KEY, ("ArithmeticException",)) if shown in {"/", "%"} else None


class UncaughtCall(NamedTuple):
    """A call in a `try` that raises what none of its handlers catches: what the lens reports
    (wrong_exception.py makes the finding)."""

    line: int
    try_line: int
    call_line: int
    shown: str
    raises: tuple[str, ...]
    base: str | None
    handlers: list[str]


def uncaught_calls(grammar: Grammar, tree: tree_sitter.Tree, added: dict[int, str]) -> Iterator[UncaughtCall]:
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == grammar.try_type:
            yield from _try(grammar, node, added)
        stack.extend(node.named_children)


def _raisers(grammar: Grammar, body: tree_sitter.Node) -> list[Raiser] | None:
    found: list[Raiser] = []
    stack = list(body.named_children)
    while stack:
        item = stack.pop()
        step = grammar.step(item)
        if step == SKIP:
            continue
        if step == OPAQUE:
            return None
        if isinstance(step, tuple):
            found.append((item, *step))
        stack.extend(item.named_children)
    return found


def _try(grammar: Grammar, node: tree_sitter.Node, added: dict[int, str]) -> Iterator[UncaughtCall]:
    catches = grammar.catches(node)
    if catches is None:
        return
    body, names, first = catches
    if len(body.named_children) > 3:
        return
    raisers = _raisers(grammar, body)
    if not raisers:
        return
    lineage = grammar.hierarchy.lineage

    def caught(raises: tuple[str, ...]) -> bool:
        """A handler of the exception, of a base of it, or of a subclass of it."""
        return any(handled in lineage(raised) or raised in lineage(handled) for raised in raises for handled in names)

    # What the handlers are for: nothing the body raises, or only a codec step.
    explained = {key for _call, key, raises in raisers if caught(raises)}
    if not explained <= grammar.hierarchy.codec_steps:
        return
    line = first.start_point[0] + 1
    for call, key, raises in raisers:
        if key == STEP_KEY or caught(raises):
            continue
        call_line = call.start_point[0] + 1
        if not {line, call_line} & set(added):
            continue
        base = grammar.hierarchy.parent.get(raises[0], "")
        yield UncaughtCall(
            line=line, try_line=node.start_point[0] + 1, call_line=call_line,
            shown=f"{key.lstrip('.')}()" if key.startswith(".") else f"{key}(...)", raises=raises,
            base=None if not base or base in grammar.hierarchy.broad else base, handlers=names,
        )
