"""Function shapes from a tree-sitter syntax tree, for every language but Python (python_shapes).

Each language family (javascript.py, go.py, jvm.py, csharp.py, rust.py, ruby.py, php.py) describes
its grammar in one `Family` (tree_family.py): which nodes are functions and scopes, how a function is named and
whether it is public, which nodes are decisions. One tree-sitter query per side finds the
functions and another, when a comparison first asks, every function's decisions and statements
(the walks run in tree-sitter's C, not node by node in Python); whether one is trivial, its
normalised body and its defaults walk that one function when first asked.
A tree with a syntax error gives no shapes (None): a misread scope would rename every function
in it and each would read as new.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tree_sitter import Query, QueryCursor

from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes, add_shape
from reviewgate.reviewers.builtin.languages.syntax_tree import grammar_of, parse, parser
from reviewgate.reviewers.builtin.languages.tree_family import (
    Family,
    combinator_decisions,
    decides,
    default_of,
    descendants_of_types,
    inside,
    is_constant,
    is_table_row,
    leaves,
    text_of,
)

if TYPE_CHECKING:
    from tree_sitter import Node

# Tokens a setter or a delegate holds besides a bare accessor's: an assignment, one call's
# parentheses and commas, statement ends, `new` and `await` before the call.
_PASSING_TOKENS = frozenset({"=", ",", "(", ")", ";", "{", "}", "new", "await"})
# The punctuation of a registration table's row: a call, its generic arguments, its string quotes.
_ROW_TOKENS = frozenset({"(", ")", ",", ";", "<", ">", ".", "::", '"', "'"})


@dataclass
class _Found:
    node: Node
    qualified: str
    body: Node | None


class _Reader:
    """One side of one file: its functions, and the walks each asks for later."""

    def __init__(self, family: Family, grammar: str, root: Node, source: bytes) -> None:
        self.family = family
        self.grammar = grammar
        self.root = root
        self._counts: list[tuple[int, int]] | None = None
        self.lines = source.decode("utf-8", "replace").split("\n")
        self.found: list[_Found] = []
        self.function_ids: set[int] = set()

    def discover(self) -> None:
        """The functions, found by a query (tree-sitter's C walks the tree, not Python), each
        qualified by the named scopes and functions whose bytes hold it."""
        family = self.family
        nodes = QueryCursor(_query(self.grammar, family)).captures(self.root).get("node", [])
        nodes.sort(key=lambda node: (node.start_byte, -node.end_byte))
        stack: list[tuple[int, str, bool]] = []  # (end byte, name, a test: its functions are none)
        for node in nodes:
            while stack and stack[-1][0] <= node.start_byte:
                stack.pop()
            if stack and stack[-1][2]:
                continue
            if family.skipped(node):
                stack.append((node.end_byte, "", True))
                continue
            kind = node.type
            if kind in family.functions:
                name = None if family.bodiless(node) else family.name(node)
                if name is not None:
                    qualified = ".".join([*(entry[1] for entry in stack), name])
                    self.found.append(_Found(node, qualified, family.body(node)))
                    self.function_ids.add(node.id)
                    stack.append((node.end_byte, name, False))
            elif kind in family.scopes and (name := family.scope_name(node)):
                stack.append((node.end_byte, name, False))

    # --- one function's own nodes: nested functions are shapes of their own --------------------

    def own(self, node: Node) -> Iterator[Node]:
        """Every node under `node`, a nested function standing as itself without its inside."""
        stack = list(reversed(node.children))
        while stack:
            item = stack.pop()
            yield item
            if item.id not in self.function_ids and item.type not in self.family.comments:
                stack.extend(reversed(item.children))

    def counts(self, index: int) -> tuple[int, int]:
        if self._counts is None:
            self._counts = self._count_all()
        return self._counts[index]

    def _count_all(self) -> list[tuple[int, int]]:
        """(branches, statements) of every function's own code, from one query over the tree
        (each node counted on the innermost function whose body holds it). A statement is an
        item of a block or a node the grammar calls one (`*_statement`: a braceless `if`'s body
        too), so layout does not change the count; a nested function is one statement."""
        family, queries = self.family, _count_queries(self.grammar, self.family)
        bodies = sorted(
            (found.body.start_byte, found.body.end_byte, index)
            for index, found in enumerate(self.found)
            if found.body is not None
        )
        table = [[0, 0] for _ in self.found]
        captured = QueryCursor(queries).captures(self.root)
        branches = [
            node for node in captured.get("branch", [])
            if decides(node) and not family.fallthrough(node) and not is_table_row(node, family.strings)
        ]
        counted = [(node, 0) for node in branches]
        counted += [(node, 0) for macro in captured.get("macro", []) for node in family.macro_decisions(macro)]
        counted += [(node, 0) for node in combinator_decisions(captured.get("combinator", []))]
        statements = {node.id: node for node in captured.get("statement", []) if node.type not in family.comments}
        counted += [(node, 1) for node in statements.values()]
        counted.sort(key=lambda item: item[0].start_byte)
        stack: list[tuple[int, int]] = []  # (end byte, function index) of the bodies holding the node
        next_body = 0
        for node, column in counted:
            start = node.start_byte
            while next_body < len(bodies) and bodies[next_body][0] <= start:
                while stack and stack[-1][0] <= bodies[next_body][0]:
                    stack.pop()
                stack.append((bodies[next_body][1], bodies[next_body][2]))
                next_body += 1
            owner = next((index for end, index in reversed(stack) if end >= node.end_byte), None)
            if owner is not None:
                table[owner][column] += 1
        return [(branches, statements) for branches, statements in table]

    def local_names(self, found: _Found) -> set[str]:
        family = self.family
        names: set[str] = set()
        for node in [found.node, *self.own(found.node)]:
            if node.id in self.function_ids and node.id != found.node.id:
                continue  # a nested function's names are its own
            names |= family.implicit_locals(node)
            for field_name in family.declarations.get(node.type, ()):
                for child in node.children_by_field_name(field_name) if field_name else node.named_children:
                    names |= {text_of(leaf) for leaf in leaves(child, skip_types=True) if leaf.type in family.identifiers}
        return names

    def tokens(self, node: Node, local_names: set[str]) -> list[str]:
        """The code of `node` as tokens: no comments, string texts, or local names (numbered)."""
        family, numbers, parts = self.family, dict[str, int](), []
        stack = list(reversed(node.children))
        while stack:
            item = stack.pop()
            kind = item.type
            if kind in family.comments or kind in family.annotations:
                continue
            if item.id in self.function_ids:
                parts.append(f"<def {family.name(item)}>")
                continue
            if kind in family.strings:
                parts.append('"')
                stack.extend(reversed(inside(item, family.interpolations)))
                continue
            if item.children:
                stack.extend(reversed(item.children))
                continue
            text = text_of(item)
            if kind in family.identifiers and text in local_names:
                text = f"v{numbers.setdefault(text, len(numbers))}"
            parts.append(text)
        return parts

    def body(self, found: _Found) -> str:
        if found.body is None:
            return ""
        locals_ = self.local_names(found)
        defaults = [value for _name, value in self.defaults(found)]
        return " ".join([*defaults, "|", *self.tokens(found.body, locals_)])

    def defaults(self, found: _Found) -> tuple[tuple[str, str], ...]:
        """Parameter name -> its default's tokens, for the parameters of the function's own list."""
        pairs = []
        for node in found.node.named_children:
            if node is found.body:
                continue
            for parameter in descendants_of_types(node, self.family.parameters):
                value = default_of(parameter)
                if value is None:
                    continue
                named = next(
                    (child for key in ("name", "pattern", "left") if (child := parameter.child_by_field_name(key))),
                    parameter,
                )
                name = next((text_of(leaf) for leaf in leaves(named) if leaf.type in self.family.identifiers), "")
                pairs.append((name, " ".join(self.tokens_of_value(value))))
        return tuple(pairs)

    def tokens_of_value(self, value: Node) -> list[str]:
        return [text_of(leaf) for leaf in leaves(value) if leaf.type not in self.family.comments] or [text_of(value)]

    def trivial(self, found: _Found) -> bool:
        """Empty, or one `return` of a name, member or literal: no call, operator or second
        statement; or a body that only throws a not-implemented error, or only looks a name up
        in a table written as a switch."""
        if found.body is None:
            return True
        family = self.family
        texts: list[str] = []
        for node in self.own(found.body):
            if node.id in self.function_ids:
                return False
            if node.children or node.type in family.comments:
                continue
            if node.parent == found.body and node.type in ("{", "}", "=", "=>"):
                continue
            texts.append(node.type)
            in_string = node.parent is not None and node.parent.type in family.strings
            if not (node.is_named or in_string or node.type in family.trivial_words):
                return (
                    self._not_implemented(found.body) or self._lookup_table(found.body) or self._passes_through(found)
                    or self._registration_table(found.body)
                )
        return (texts.count("return") <= 1 or self._lookup_table(found.body) or self._passes_through(found)
                or self._registration_table(found.body))

    def _registration_table(self, body: Node) -> bool:
        """A body of at least two statements that are each one call of a name with constant
        arguments (`Translate<EmailValidator>("'{PropertyName}' is not a valid email address.");`):
        a table of rows handed to a registry one by one, data rather than code, as a translation
        class's constructor fills its table. A row that names anything (a variable, a second call,
        an interpolation) is code."""
        family = self.family
        rows = 0
        for statement in body.named_children:
            if statement.type in family.comments:
                continue
            calls, stack = 0, [statement]
            while stack:
                node = stack.pop()
                if node.id in self.function_ids:
                    return False
                if node.type in family.strings:
                    if any(child.type in family.interpolations for child in node.named_children):
                        return False
                    continue
                if node.children:
                    stack.extend(node.children)
                    continue
                calls += node.type == "("
                if not (node.is_named or node.type in _ROW_TOKENS) or (
                    node.is_named and node.type not in family.identifiers and not is_constant(node)
                    and "type" not in node.type
                ):
                    return False
            if calls != 1:
                return False
            rows += 1
        return rows >= 2

    def _passes_through(self, found: _Found) -> bool:
        """A body that decides nothing and at most forwards one call: a builder's setter
        (`this.name = name; return this;`), a delegate (`return inner.send(request);`,
        `self.generate(cmd, buf); Ok(())`, `self.map.get::<T>()`). What it stores and passes on are
        names, members, literals and values built of them: no operator, no second call, and no call
        whose result is stored (`this.name = requireNonNull(name)` validates)."""
        assert found.body is not None
        family = self.family
        if self.counts(self.found.index(found))[0]:
            return False
        calls = stores = 0
        for node in self.own(found.body):
            if node.id in self.function_ids:
                return False
            if node.children or node.type in family.comments:
                continue
            in_string = node.parent is not None and node.parent.type in family.strings
            plain = family.plain_token(node)
            if not (node.is_named or in_string or node.type in family.trivial_words or node.type in _PASSING_TOKENS
                    or plain):
                return False
            calls += node.type == "(" and not plain
            stores += node.type == "=" and node.parent != found.body  # not an expression body's `=`
        return calls == 0 or (calls == 1 and stores == 0)

    def _lookup_table(self, body: Node) -> bool:
        """A body that is one switch whose arms are all table rows (is_table_row) over a name: a
        translation table's lookup, data rather than code, as trivial as returning a constant."""
        family, rows, stack = self.family, 0, [body]
        while stack:
            node = stack.pop()
            if node.id in self.function_ids:
                return False
            if node.type in family.comments:
                continue
            if is_table_row(node, family.strings):
                rows += 1
            elif node.children:
                if node.is_named and node is not body and not any(word in node.type for word in _TABLE_HOLDERS):
                    return False  # a call, an operator: code around the table
                stack.extend(node.children)
            elif node.is_named and not (node.type in family.identifiers or is_constant(node)):
                return False
        return rows >= 2

    def _not_implemented(self, body: Node) -> bool:
        """One statement that throws the language's not-implemented error (Java's unsupported-operation
        exception, Rust's `todo`/`unimplemented` macros): a stub, weak evidence of behaviour."""
        statements = [node for node in body.named_children if node.type not in self.family.comments]
        lowered = text_of(body).lower()
        return len(statements) <= 1 and any(word in lowered for word in _NOT_IMPLEMENTED)

    def shapes(self) -> Shapes:
        shapes: Shapes = {}
        family = self.family
        for index, found in enumerate(self.found):
            node = found.node
            start = node.start_point.row
            # Attributes and decorators above the function are part of what it is.
            previous = node.prev_named_sibling
            while previous is not None and previous.type in ("attribute_item", "decorator", "annotation"):
                start = previous.start_point.row
                previous = previous.prev_named_sibling
            end = node.end_point.row
            name = found.qualified.rsplit(".", 1)[-1]
            add_shape(shapes, FunctionShape(
                name=found.qualified,
                line=node.start_point.row + 1,
                end_line=end + 1,
                text="\n".join(line.strip() for line in self.lines[start : end + 1]),
                counts=functools.partial(self.counts, index),
                public=family.public(node, name),
                body=functools.partial(self.body, found),
                defaults=functools.partial(self.defaults, found),
                trivial=functools.partial(self.trivial, found),
            ))
        return shapes


# What a not-implemented error says, lowercased: Python/Ruby/C#, Java, Rust's macros, Kotlin's TODO().
_NOT_IMPLEMENTED = ("notimplemented", "unsupportedoperation", "todo!", "unimplemented!", "todo(", "not implemented")


_QUERIES: dict[str, Query] = {}


_COUNT_QUERIES: dict[str, Query] = {}


# Words in the node types that may hold a lookup table's switch: the switch itself, its body,
# the statement or clause returning it, its parenthesised subject.
_TABLE_HOLDERS = ("switch", "match", "when", "case", "block", "body", "return", "statement", "clause",
                  "parenthesized", "subject")


def _count_queries(grammar: str, family: Family) -> Query:
    """A query capturing the decisions (`branch`) and statements of a tree."""
    query = _COUNT_QUERIES.get(grammar)
    if query is not None:
        return query
    language = parser(grammar).language
    assert language is not None
    named = [language.node_kind_for_id(kind) or "" for kind in range(language.node_kind_count)]
    named_kinds = {name for kind, name in enumerate(named) if language.node_kind_is_named(kind)}
    patterns = [f"({kind}) @branch" for kind in sorted(family.branches & named_kinds)]
    if family.macros:
        patterns.append(family.macros)
    if family.combinators:
        patterns.append(family.combinators)
    patterns += [f"({kind} (_) @statement)" for kind in sorted(family.blocks & named_kinds)]
    patterns += [
        f"({kind}) @statement" for kind in sorted(named_kinds) if kind.endswith("_statement") and kind not in family.blocks
    ]
    made: Query = Query(language, "\n".join(patterns))
    _COUNT_QUERIES[grammar] = made
    return made


def _query(grammar: str, family: Family) -> Query:
    """A query capturing every node of the family's function and scope types that the grammar has."""
    query = _QUERIES.get(grammar)
    if query is None:
        language = parser(grammar).language
        assert language is not None
        kinds = sorted(kind for kind in family.functions | family.scopes if language.id_for_node_kind(kind, True))
        query = _QUERIES[grammar] = Query(language, " ".join(f"({kind}) @node" for kind in kinds))
    return query


def tree_shapes(family: Family, grammar: str, text: str, path: str | None = None) -> Shapes | None:
    """The functions of one side of a file in `grammar` (one of the family's); None when the
    text does not parse."""
    source = text.encode("utf-8", "surrogateescape")
    tree = parse(grammar, source, path)
    if tree.root_node.has_error:
        return None
    reader = _Reader(family, grammar, tree.root_node, source)
    reader.discover()
    return reader.shapes()


# Grammar (syntax_tree.GRAMMARS) -> the module of its family, imported the first time a change
# touches that language.
FAMILY_MODULES: dict[str, str] = {
    "javascript": "javascript", "typescript": "javascript", "tsx": "javascript",
    "go": "go", "java": "jvm", "kotlin": "jvm", "csharp": "csharp", "rust": "rust", "ruby": "ruby", "php": "php",
}


def shapes_of_file(text: str, path: str) -> Shapes | None:
    """The functions of one side of a file in any grammar but Python's; None when no family
    reads its extension or it does not parse."""
    grammar = grammar_of(path)
    module_name = FAMILY_MODULES.get(grammar or "")
    if grammar is None or module_name is None:
        return None
    module = importlib.import_module(f"reviewgate.reviewers.builtin.languages.{module_name}")
    families: Mapping[str, Family] = module.FAMILIES
    return tree_shapes(families[grammar], grammar, text, path)
