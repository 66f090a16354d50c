"""Rust functions for the tests lens, from tree-sitter (tree_shapes): `fn` items, methods as
`Type.method` (`impl<T> Foo<T>` and `impl Display for Foo` both qualify by `Foo`), trait default
methods as `Trait.method`. A closure is part of the function around it; a trait method without a
body is none; `#[test]` functions and `#[cfg(test)]` modules are tests, not product code. Public:
`pub` (any `pub(...)`), or a method of a trait or a trait impl."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_shapes import Family, field_text, leaves_of_kinds, text_of

if TYPE_CHECKING:
    from tree_sitter import Node


def _attributes(node: Node) -> list[str]:
    """The attributes written above an item (`#[test]`, `#[cfg(test)]`), without spaces."""
    found = []
    previous = node.prev_named_sibling
    while previous is not None and previous.type == "attribute_item":
        found.append("".join(text_of(previous).split()))
        previous = previous.prev_named_sibling
    return found


def _is_test(node: Node) -> bool:
    if node.type == "mod_item":
        return "#[cfg(test)]" in _attributes(node)
    if node.type == "function_item":
        return any(attribute == "#[test]" or attribute.endswith("::test]") for attribute in _attributes(node))
    return False


def _impl_type(node: Node) -> str | None:
    kind = node.child_by_field_name("type")
    while kind is not None and kind.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        inner = kind.child_by_field_name("type") or kind.child_by_field_name("name")
        if inner is None:
            break
        kind = inner
    return text_of(kind) or None


def _scope_name(node: Node) -> str | None:
    return _impl_type(node) if node.type == "impl_item" else field_text(node, "name")


def _public(node: Node, _name: str) -> bool:
    if any(child.type == "visibility_modifier" for child in node.children):
        return True
    holder = node.parent.parent if node.parent is not None else None  # declaration_list -> impl or trait
    return holder is not None and (
        holder.type == "trait_item" or (holder.type == "impl_item" and holder.child_by_field_name("trait") is not None)
    )


# Macros that run their body here as control flow: tokio's and futures' `select!`, whose arms
# (`pattern = future => body`) are a match's arms.
_CONTROL_FLOW_MACROS = frozenset({"select", "select_biased"})
_DECISION_TOKENS = frozenset({"=>", "if", "while", "loop", "for"})


def _select_decisions(node: Node) -> list[Node]:
    """The decisions in a `select!` invocation's body: its arms and the branches inside them."""
    name = node.child_by_field_name("macro")
    if name is None or text_of(name).rpartition("::")[2] not in _CONTROL_FLOW_MACROS:
        return []
    return [leaf for child in node.children if child.type == "token_tree"
            for leaf in leaves_of_kinds(child, _DECISION_TOKENS)]


FAMILY = Family(
    grammars=("rust",),
    functions=frozenset({"function_item"}),
    public=_public,
    scopes=frozenset({"impl_item", "trait_item", "mod_item"}),
    scope_name=_scope_name,
    branches=frozenset({"if_expression", "match_arm", "while_expression", "loop_expression", "for_expression"}),
    macros="(macro_invocation) @macro",
    macro_decisions=_select_decisions,
    blocks=frozenset({"block"}),
    strings=frozenset({"string_literal", "raw_string_literal", "char_literal"}),
    interpolations=frozenset(),
    comments=frozenset({"line_comment", "block_comment"}),
    identifiers=frozenset({"identifier"}),
    declarations={
        "parameter": ("pattern",),
        "let_declaration": ("pattern",),
        "closure_parameters": ("",),
        "for_expression": ("pattern",),
        "let_condition": ("pattern",),
    },
    parameters=frozenset(),
    skipped=_is_test,
)

FAMILIES = {"rust": FAMILY}
