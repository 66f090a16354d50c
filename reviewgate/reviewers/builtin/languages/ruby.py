"""Ruby functions for the tests lens, from tree-sitter (tree_shapes): `def` in classes and modules
as `Class.method` (`def self.make` too, and those in `class << self`). A block is part of the
method around it. Public as Ruby says: not after a bare `private`/`protected` in the same body
(until `public`), not passed to `private` (`private def x`, `private :x`), not named `_x`. A
method that memoizes what it reads or forwards (`@ip ||= super`, `@registry ||= {}`) is as
trivial as the read or the forward: `||=` computes the same answer once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import TRIVIAL_WORDS, Family, field_text, text_of

if TYPE_CHECKING:
    from tree_sitter import Node

_HIDING = frozenset({"private", "protected", "private_class_method"})


def _hidden_by_call(call: Node, name: str) -> bool:
    """`private :name` or `private def name` (the call's argument list)."""
    if call.type != "call" or field_text(call, "method") not in _HIDING:
        return False
    arguments = call.child_by_field_name("arguments")
    return arguments is not None and any(
        text_of(item).lstrip(":").strip("\"'") == name for item in arguments.named_children
    )


def _public(node: Node, name: str) -> bool:
    if name.startswith("_"):
        return False
    parent = node.parent
    if parent is not None and parent.type == "argument_list":
        call = parent.parent
        return call is None or field_text(call, "method") not in _HIDING
    if parent is None:
        return True
    public = True
    for sibling in parent.named_children:
        if sibling == node:
            break
        if sibling.type == "identifier" and text_of(sibling) in (*_HIDING, "public"):
            public = text_of(sibling) == "public"
    return public and not any(_hidden_by_call(sibling, name) for sibling in parent.named_children)


def _scope_name(node: Node) -> str | None:
    if node.type == "singleton_class":
        return None  # `class << self`: its methods qualify by the class around it
    return field_text(node, "name")


FAMILY = Family(
    grammars=("ruby",),
    functions=frozenset({"method", "singleton_method"}),
    public=_public,
    bodiless=lambda _node: False,  # `def x; end` is an empty method, not a declaration
    scopes=frozenset({"class", "module", "singleton_class"}),
    scope_name=_scope_name,
    branches=frozenset(
        {"if", "unless", "elsif", "if_modifier", "unless_modifier", "while", "until", "while_modifier",
         "until_modifier", "for", "when", "in_clause", "rescue", "rescue_modifier", "conditional"}
    ),
    blocks=frozenset({"body_statement", "then", "else", "do", "begin", "ensure", "block_body"}),
    strings=frozenset({"string", "simple_symbol", "delimited_symbol", "regex", "heredoc_body", "character",
                       "subshell"}),
    interpolations=frozenset({"interpolation"}),
    comments=frozenset({"comment"}),
    identifiers=frozenset({"identifier"}),
    declarations={
        "method_parameters": ("",),
        "lambda_parameters": ("",),
        "block_parameters": ("",),
        "assignment": ("left",),
        "operator_assignment": ("left",),
        "exception_variable": ("",),
    },
    parameters=frozenset({"optional_parameter", "keyword_parameter"}),
    trivial_words=TRIVIAL_WORDS | {"||="},
)

FAMILIES = {"ruby": FAMILY}
