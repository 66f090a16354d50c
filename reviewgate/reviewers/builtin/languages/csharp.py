"""C# functions for the tests lens, from tree-sitter (tree_shapes): methods, constructors,
operators and local functions as `Class.Method`, block or expression bodied (`=> x`). Property
accessors are not functions; an abstract or interface method without a body is none. Public:
reachable from outside the assembly: `public` or `protected`, or a member of an interface (a
member without an access modifier is private), in types an outside caller can name (not
`private` or `internal`; without an access modifier a type is internal, nested private)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import Family, enclosing_hidden, field_text, has_child

if TYPE_CHECKING:
    from tree_sitter import Node


def _name(node: Node) -> str | None:
    if node.type == "operator_declaration":
        return "operator" + (field_text(node, "operator") or "")
    if node.type == "conversion_operator_declaration":
        return "operator " + (field_text(node, "type") or "")
    return field_text(node, "name")


_SCOPES = frozenset({"class_declaration", "struct_declaration", "interface_declaration", "record_declaration"})


def _holder(node: Node) -> Node | None:
    """The type declaring `node` (a member, or a nested type), or None at a namespace's level."""
    holder = node.parent.parent if node.parent is not None else None
    return holder if holder is not None and holder.type in _SCOPES else None


def _hidden_type(node: Node) -> bool:
    """A type outside the assembly cannot name: `private` or `internal` (alone: `protected internal`
    is open to subclasses), or without an access modifier (internal at a namespace's level, private
    nested), unless `partial` (another part may say `public`)."""
    if has_child(node, "public", "protected"):
        return False
    return has_child(node, "private", "internal") or not has_child(node, "partial")


def _public(node: Node, _name: str) -> bool:
    """Public API: `public` or `protected`, or an interface's member, in types outside callers can
    name. `internal` is the assembly's own, as its tests' InternalsVisibleTo says: no public API."""
    if node.type == "local_function_statement":
        return False
    holder = _holder(node)
    declared = has_child(node, "public", "protected") or (holder is not None and holder.type == "interface_declaration")
    return declared and not enclosing_hidden(node, _SCOPES, frozenset(), _hidden_type)


FAMILY = Family(
    grammars=("csharp",),
    functions=frozenset(
        {"method_declaration", "constructor_declaration", "destructor_declaration", "operator_declaration",
         "conversion_operator_declaration", "local_function_statement"}
    ),
    name=_name,
    public=_public,
    scopes=_SCOPES,
    branches=frozenset(
        {"if_statement", "for_statement", "foreach_statement", "while_statement", "do_statement", "switch_section",
         "switch_expression_arm", "catch_clause", "conditional_expression"}
    ),
    blocks=frozenset({"block"}),
    strings=frozenset({"string_literal", "verbatim_string_literal", "raw_string_literal", "character_literal",
                       "interpolated_string_expression"}),
    interpolations=frozenset({"interpolation"}),
    comments=frozenset({"comment"}),
    identifiers=frozenset({"identifier"}),
    declarations={
        "parameter": ("name",),
        "variable_declarator": ("name",),
        "foreach_statement": ("left",),
        "catch_declaration": ("name",),
    },
    parameters=frozenset({"parameter"}),
)

FAMILIES = {"csharp": FAMILY}
