"""How a language family describes its tree-sitter grammar to the shape reader (`Family`), and
the node helpers the family tables (javascript.py, go.py, jvm.py, ...) and the shape reader
(tree_shapes.py) are written with."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


def _never(_node: Node) -> bool:
    return False


def _no_nodes(_node: Node) -> list[Node]:
    return []


def _no_names(_node: Node) -> set[str]:
    return set()


def text_of(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8", "replace")


def field_text(node: Node, name: str) -> str | None:
    child = node.child_by_field_name(name)
    return None if child is None else text_of(child)


def has_child(node: Node, *texts: str) -> bool:
    """Whether a direct child (a modifier list's items included) reads as one of `texts`."""
    for child in node.children:
        if text_of(child) in texts:
            return True
        if child.type in ("modifiers", "modifier", "visibility_modifier") and any(
            text_of(item) in texts for item in child.children
        ):
            return True
    return False


def enclosing_hidden(node: Node, scopes: frozenset[str], enclosing: frozenset[str],
                     hidden: Callable[[Node], bool]) -> bool:
    """Whether `node` sits in a type no caller outside can name: inside a function or an anonymous
    class (`enclosing`: a local or anonymous class's method), or in a scope that `hidden` says is
    private. A `public` method of a private nested class is no more reachable than the class."""
    parent = node.parent
    while parent is not None:
        if parent.type in enclosing or (parent.type in scopes and hidden(parent)):
            return True
        parent = parent.parent
    return False


TRIVIAL_WORDS = frozenset(
    {"return", ".", ";", "->", "::", "?.", "$", "@", "this", "self", "nil", "null", "true", "false", "undefined"}
)


def name_field(node: Node) -> str | None:
    return field_text(node, "name")


def body_field(node: Node) -> Node | None:
    return node.child_by_field_name("body")


def without_body(node: Node) -> bool:
    return node.child_by_field_name("body") is None


@dataclass(frozen=True, kw_only=True)
class Family:
    """One grammar's reading: node types and the few rules that are not a table."""

    grammars: tuple[str, ...]
    # Node types that may be a function. `name` returns None for an anonymous one (a callback, a
    # closure: part of the function around it); `bodiless` is a declaration without a body (an
    # abstract or interface method, an overload signature): no function at all.
    functions: frozenset[str]
    public: Callable[[Node, str], bool]
    name: Callable[[Node], str | None] = name_field
    body: Callable[[Node], Node | None] = body_field
    bodiless: Callable[[Node], bool] = without_body
    # Node types whose name qualifies the functions inside (`Class.method`), and that name.
    scopes: frozenset[str]
    scope_name: Callable[[Node], str | None] = name_field
    # Each node of these types is one decision; one that opens with `default`/`else` is none. A
    # boolean operator (`&&`, `||`, `??`) is none either: a guard hoisted into one condition makes
    # the same decision as before.
    branches: frozenset[str]
    # Macro invocations the grammar leaves as bare tokens: a query capturing them as `@macro`, and
    # the tokens of one that are decisions of the function around it. Only a macro that runs its
    # body here as control flow (Rust's `select!`) has any: code moved between it and a `match`
    # makes the decisions it made before; a macro that generates code (`quote!`) or tests a value
    # (`matches!`) makes none.
    macros: str = ""
    macro_decisions: Callable[[Node], list[Node]] = _no_nodes
    # A query capturing as `@combinator` the method name of a call with arguments: one named in
    # COMBINATORS (`.filter(..)`, `.map(..)`, `.any(..)`) is a decision, the one a loop or an `if`
    # makes when the code is written out (`for x in xs { if keep(x) { .. } }`), so rewriting one
    # as the other keeps the count.
    combinators: str = ""
    # Nodes whose named children are statements (a block), none of them a statement itself.
    blocks: frozenset[str]
    strings: frozenset[str]  # literals whose text is not code; their interpolations are
    interpolations: frozenset[str]
    comments: frozenset[str]
    identifiers: frozenset[str]  # leaf types that name a variable
    # Node type -> fields holding the names it declares (parameters, locals): numbered in the body.
    declarations: Mapping[str, tuple[str, ...]]
    parameters: frozenset[str]  # parameter node types, for their defaults
    # A branch node that is its construct's fall-through (Rust's last `match` arm: a match is
    # exhaustive, so its last arm is the `else` of the decisions above it).
    fallthrough: Callable[[Node], bool] = _never
    # A node whose functions are no product code: a Rust `#[cfg(test)]` module, a `#[test]` function,
    # a Ruby backport of a method the runtime has.
    skipped: Callable[[Node], bool] = _never
    # Names local wherever they appear (PHP's `$variables`), beside the declared ones.
    implicit_locals: Callable[[Node], set[str]] = _no_names
    # Nodes that say nothing of behaviour (TypeScript's type annotations): out of the body.
    annotations: frozenset[str] = frozenset()
    # Tokens a bare accessor may hold besides names and literals.
    trivial_words: frozenset[str] = TRIVIAL_WORDS
    # A token that neither calls nor computes: the parentheses of a value built (Rust's unit `()`,
    # a variant's or tuple struct's constructor `Ok(..)`), a turbofish's angle brackets
    # (`get::<T>()`). A delegate may hold them.
    plain_token: Callable[[Node], bool] = _never


# Methods that run their argument per element or only on some condition: iterator adaptors and
# consumers (Rust's, JavaScript's arrays) and an option's `map`.
COMBINATORS = frozenset({
    "filter", "filter_map", "map", "flat_map", "flatMap", "for_each", "forEach", "find", "find_map", "findIndex",
    "any", "all", "some", "every", "position", "take_while", "skip_while", "map_while", "retain", "partition",
    "reduce", "fold", "try_fold", "try_for_each",
})


# Named leaves that are a constant (besides the `*_literal` types and the family's strings).
_CONSTANT_LEAVES = frozenset(
    {"number", "integer", "float", "true", "false", "null", "nil", "none", "discard", "boolean", "escape_sequence"}
)


# Words in the node types of a switch's arms and cases across the grammars (`switch_case`,
# `switch_expression_arm`, `match_arm`, `when_entry`, `switch_section`, `switch_rule`).
_ARM_WORDS = ("case", "arm", "when", "switch_section", "switch_rule", "switch_block")


def is_table_row(branch: Node, strings: frozenset[str]) -> bool:
    """A switch arm or case that maps a constant to a constant (`"EmailValidator" => "..."`, `case 1:
    return "one";`): a row of a lookup table written as a switch. It is data, the same decision
    as a dictionary's lookup; a translation class's hundred rows are no hundred branches. An arm
    that names anything (a variable, a call) decides, and so does any other branch (`while (true)`)."""
    if not branch.named_children or not any(word in branch.type for word in _ARM_WORDS):
        return False  # a keyword token (`case`) is no arm
    stack = list(branch.children)
    while stack:
        node = stack.pop()
        if node.type in strings:
            if any(child.type not in ('"', "'", "`", "string_literal_content", "string_fragment", "string_content",
                                      "escape_sequence") for child in node.named_children):
                return False  # an interpolation reads a name
            continue
        if node.children:
            stack.extend(node.children)
        elif node.is_named and not is_constant(node):
            return False
    return True


def is_constant(leaf: Node) -> bool:
    return leaf.type.endswith("literal") or leaf.type in _CONSTANT_LEAVES


def leaves_of_kinds(body: Node, kinds: frozenset[str]) -> list[Node]:
    """The leaves of `body` (nested token trees included) whose type is one of `kinds`."""
    found, stack = [], [body]
    while stack:
        node = stack.pop()
        if node.child_count == 0:
            if node.type in kinds:
                found.append(node)
        else:
            stack.extend(node.children)
    return found


def leaves(node: Node, *, skip_types: bool = False) -> Iterator[Node]:
    """The leaves under `node`; with `skip_types`, none inside a type (`user_type`, a type
    annotation): a declaration's names, not the types it mentions."""
    stack = [node]
    while stack:
        item = stack.pop()
        if skip_types and "type" in item.type:
            continue
        if item.children:
            stack.extend(reversed(item.children))
        else:
            yield item


def inside(node: Node, kinds: frozenset[str]) -> list[Node]:
    """The nodes of `kinds` under a string, in order: its interpolations, the code inside it."""
    found, stack = [], list(reversed(node.children))
    while stack:
        item = stack.pop()
        if item.type in kinds:
            found.append(item)
        else:
            stack.extend(reversed(item.children))
    return found


def descendants_of_types(node: Node, kinds: frozenset[str]) -> Iterator[Node]:
    if node.type in kinds:
        yield node
        return
    for child in node.named_children:
        yield from descendants_of_types(child, kinds)


def default_of(parameter: Node) -> Node | None:
    """The value after a parameter's `=` (inside it, or right after it in Kotlin's list), or
    after a Ruby keyword parameter's `:`."""
    children = parameter.children
    for index, child in enumerate(children[:-1]):
        if child.type == "=" or (child.type == ":" and parameter.type == "keyword_parameter"):
            return children[index + 1]
    after = parameter.next_sibling
    if after is not None and after.type == "=" and after.next_sibling is not None:
        return after.next_sibling
    return None


def combinator_decisions(names: list[Node]) -> list[Node]:
    return [name for name in names if text_of(name) in COMBINATORS]


def decides(branch: Node) -> bool:
    """A `default:` label or an `else ->` entry decides nothing."""
    first = branch.children[0] if branch.children else None
    return first is None or first.type not in ("default", "else")
