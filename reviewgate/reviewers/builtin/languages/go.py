"""Go functions for the tests lens, from tree-sitter (tree_shapes): `func Name(` and methods as
`Receiver.Name` (`func (r *Router[T]) Handle(` is `Router.Handle`). A function literal is part of
the function around it. Public means exported: a capitalised name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import Family, field_text, text_of

if TYPE_CHECKING:
    from tree_sitter import Node


def _receiver(node: Node) -> str:
    """The type a method's receiver names, without its pointer or type parameters."""
    receiver = node.child_by_field_name("receiver")
    declaration = receiver.named_children[0] if receiver is not None and receiver.named_children else None
    kind = declaration.child_by_field_name("type") if declaration is not None else None
    while kind is not None and kind.type in ("pointer_type", "generic_type", "parenthesized_type"):
        inner = kind.child_by_field_name("type")
        kind = inner if inner is not None else (kind.named_children[0] if kind.named_children else None)
    return text_of(kind)


def _name(node: Node) -> str | None:
    name = field_text(node, "name")
    if name is None or node.type != "method_declaration":
        return name
    receiver = _receiver(node)
    return f"{receiver}.{name}" if receiver else name


FAMILY = Family(
    grammars=("go",),
    functions=frozenset({"function_declaration", "method_declaration"}),
    name=_name,
    public=lambda _node, name: name[:1].isupper(),
    scopes=frozenset(),
    scope_name=lambda _node: None,
    branches=frozenset({"if_statement", "for_statement", "expression_case", "type_case", "communication_case"}),
    blocks=frozenset({"statement_list"}),
    strings=frozenset({"interpreted_string_literal", "raw_string_literal", "rune_literal"}),
    interpolations=frozenset(),
    comments=frozenset({"comment"}),
    identifiers=frozenset({"identifier"}),
    declarations={
        "parameter_declaration": ("name",),
        "variadic_parameter_declaration": ("name",),
        "short_var_declaration": ("left",),
        "var_spec": ("name",),
        "range_clause": ("left",),
    },
    parameters=frozenset(),
)

FAMILIES = {"go": FAMILY}
