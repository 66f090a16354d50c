"""Java and Kotlin functions for the tests lens, from tree-sitter (tree_shapes): methods and
constructors as `Class.method`, Kotlin's `fun` at any level (a companion object's under its
class). A lambda or an anonymous class's body is part of the function around it; an abstract or
interface method without a body is no function. `private` ones are not public, nor those of a
private class, a local class or an anonymous one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import Family, enclosing_hidden, has_child

if TYPE_CHECKING:
    from tree_sitter import Node


def _private(node: Node) -> bool:
    return has_child(node, "private")


def _public_in(types: frozenset[str], enclosing: frozenset[str]) -> Callable[[Node, str], bool]:
    """Public: not `private`, nor inside a private type of `types` or any of `enclosing`."""
    def public(node: Node, _name: str) -> bool:
        return not _private(node) and not enclosing_hidden(node, types, enclosing, _private)
    return public


_JAVA_FUNCTIONS = frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"})
_JAVA_SCOPES = frozenset(
    {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
     "annotation_type_declaration"}
)
# Where a class is local or anonymous: inside a function or a lambda, or `new T() { ... }`.
_JAVA_ENCLOSING = _JAVA_FUNCTIONS | {"lambda_expression", "object_creation_expression"}


JAVA = Family(
    grammars=("java",),
    functions=_JAVA_FUNCTIONS,
    public=_public_in(_JAVA_SCOPES, _JAVA_ENCLOSING),
    scopes=_JAVA_SCOPES,
    branches=frozenset(
        {"if_statement", "for_statement", "enhanced_for_statement", "while_statement", "do_statement",
         "catch_clause", "ternary_expression", "switch_label"}
    ),
    blocks=frozenset({"block", "constructor_body", "switch_block_statement_group"}),
    strings=frozenset({"string_literal", "character_literal"}),
    interpolations=frozenset(),
    comments=frozenset({"line_comment", "block_comment"}),
    identifiers=frozenset({"identifier"}),
    declarations={
        "formal_parameter": ("name",),
        "spread_parameter": ("",),
        "variable_declarator": ("name",),
        "catch_formal_parameter": ("name",),
        "enhanced_for_statement": ("name",),
        "inferred_parameters": ("",),
        "lambda_expression": ("parameters",),
    },
    parameters=frozenset(),
)


def _kotlin_body(node: Node) -> Node | None:
    """A block body's block, or an expression body's `= value`."""
    body = next((child for child in node.named_children if child.type == "function_body"), None)
    block = next((child for child in body.named_children if child.type == "block"), None) if body else None
    return block or body


_KOTLIN_SCOPES = frozenset({"class_declaration", "object_declaration"})
# The types a function may sit in, a companion object too (its functions go under its class's name).
_KOTLIN_TYPES = _KOTLIN_SCOPES | {"companion_object"}
# A Kotlin function's functions are local; an `object : T { ... }` expression is anonymous.
_KOTLIN_ENCLOSING = frozenset({"function_declaration", "lambda_literal", "anonymous_function", "object_literal"})


KOTLIN = Family(
    grammars=("kotlin",),
    functions=frozenset({"function_declaration"}),
    body=_kotlin_body,
    public=_public_in(_KOTLIN_TYPES, _KOTLIN_ENCLOSING),
    bodiless=lambda node: _kotlin_body(node) is None,
    scopes=_KOTLIN_SCOPES,
    branches=frozenset(
        {"if_expression", "for_statement", "while_statement", "do_while_statement", "when_entry", "catch_block"}
    ),
    blocks=frozenset({"block", "statements"}),
    strings=frozenset({"string_literal", "character_literal", "multiline_string_literal"}),
    interpolations=frozenset({"interpolation"}),
    comments=frozenset({"line_comment", "block_comment"}),
    identifiers=frozenset({"identifier"}),
    declarations={"parameter": ("",), "variable_declaration": ("",)},
    parameters=frozenset({"parameter"}),
)

FAMILIES = {"java": JAVA, "kotlin": KOTLIN}
