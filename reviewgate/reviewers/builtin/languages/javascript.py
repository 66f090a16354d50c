"""JavaScript, TypeScript and TSX functions for the tests lens, from tree-sitter (tree_shapes).

Functions: declarations, class and object methods, and arrow functions or function expressions
given a name (`const load = async () => {}`, `pick: (x) => {}`, `exports.run = function () {}`,
a class field holding one). An unnamed callback is part of the function around it. Overload
signatures and abstract methods have no body: they are no function. `_name`, `#name` and
`private` members are not public.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import Family, field_text, has_child

if TYPE_CHECKING:
    from tree_sitter import Node

_DECLARED = frozenset({"function_declaration", "generator_function_declaration", "method_definition"})
_EXPRESSIONS = frozenset({"arrow_function", "function_expression", "generator_function"})
_FIELDS = frozenset({"public_field_definition", "field_definition"})


def _holder(node: Node) -> Node:
    """The node that names a function expression: the declarator, pair, assignment or field."""
    parent = node.parent
    return parent if node.type in _EXPRESSIONS and parent is not None else node


def _name(node: Node) -> str | None:
    if node.type in _DECLARED:
        return field_text(node, "name")
    holder = _holder(node)
    kind = holder.type
    if kind == "variable_declarator" and holder.child_by_field_name("value") == node:
        name = holder.child_by_field_name("name")
        return field_text(holder, "name") if name is not None and name.type == "identifier" else None
    if kind == "pair" and holder.child_by_field_name("value") == node:
        return field_text(holder, "key")
    if kind in _FIELDS:
        return field_text(holder, "name") or field_text(holder, "property")
    if kind == "assignment_expression" and holder.child_by_field_name("right") == node:
        left = holder.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return field_text(holder, "left")
        if left is not None and left.type == "member_expression":
            return field_text(left, "property")
    return None


def _public(node: Node, name: str) -> bool:
    return not name.startswith(("_", "#")) and not has_child(_holder(node), "private")


FAMILY = Family(
    grammars=("javascript", "typescript", "tsx"),
    functions=_DECLARED | _EXPRESSIONS,
    name=_name,
    public=_public,
    scopes=frozenset(
        {"class_declaration", "class", "abstract_class_declaration", "interface_declaration", "internal_module", "module"}
    ),
    branches=frozenset(
        {"if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement", "switch_case",
         "catch_clause", "ternary_expression"}
    ),
    combinators=(
        "(call_expression function: (member_expression property: (property_identifier) @combinator)"
        " arguments: (arguments (_)))"
    ),
    blocks=frozenset({"statement_block"}),
    strings=frozenset({"string", "template_string", "regex"}),
    interpolations=frozenset({"template_substitution"}),
    comments=frozenset({"comment", "html_comment"}),
    identifiers=frozenset({"identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"}),
    declarations={
        "variable_declarator": ("name",),
        "required_parameter": ("pattern",),
        "optional_parameter": ("pattern",),
        "formal_parameters": ("",),
        "arrow_function": ("parameter",),
        "catch_clause": ("parameter",),
        "for_in_statement": ("left",),
    },
    parameters=frozenset({"required_parameter", "optional_parameter", "assignment_pattern"}),
    annotations=frozenset({"type_annotation"}),
)

FAMILIES = dict.fromkeys(FAMILY.grammars, FAMILY)
