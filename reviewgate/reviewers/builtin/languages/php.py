"""PHP functions for the tests lens, from tree-sitter (tree_shapes): functions, and methods of
classes, interfaces, traits and enums as `Class.method`. A closure or arrow function is part of
the function around it; an abstract or interface method without a body is none. `private`
methods are not public. Every `$variable` but `$this` is local: its name is numbered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import Family, has_child, text_of

if TYPE_CHECKING:
    from tree_sitter import Node


def _variable(node: Node) -> set[str]:
    if node.type != "variable_name":
        return set()
    name = text_of(node.named_children[0]) if node.named_children else ""
    return set() if name in ("", "this") else {name}


FAMILY = Family(
    grammars=("php",),
    functions=frozenset({"function_definition", "method_declaration"}),
    public=lambda node, _name: not has_child(node, "private"),
    scopes=frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}),
    branches=frozenset(
        {"if_statement", "else_if_clause", "for_statement", "foreach_statement", "while_statement", "do_statement",
         "case_statement", "match_conditional_expression", "catch_clause", "conditional_expression"}
    ),
    blocks=frozenset({"compound_statement", "colon_block"}),
    strings=frozenset({"string", "encapsed_string", "heredoc", "nowdoc"}),
    interpolations=frozenset({"variable_name", "member_access_expression", "subscript_expression"}),
    comments=frozenset({"comment"}),
    identifiers=frozenset({"name"}),
    declarations={},
    parameters=frozenset({"simple_parameter"}),
    implicit_locals=_variable,
)

FAMILIES = {"php": FAMILY}
