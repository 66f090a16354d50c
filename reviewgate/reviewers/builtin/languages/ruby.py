"""Ruby functions for the tests lens, from tree-sitter (tree_shapes): `def` in classes and modules
as `Class.method` (`def self.make` too, and those in `class << self`). A block is part of the
method around it. Public as Ruby says: not after a bare `private`/`protected` in the same body
(until `public`), not passed to `private` (`private def x`, `private :x`), not named `_x`, not
`initialize` (Ruby makes it private: callers reach it through `new`), not documented `@api
private` (YARD's tag, which a class or module hands to everything inside it unless one inside says
otherwise: the project's word that callers outside it are its own). A
method that memoizes what it reads or forwards (`@ip ||= super`, `@registry ||= {}`) or yields
it to its block (`yield connection(env)`) is as trivial as the read or the forward: `||=`
computes the same answer once, `yield` hands it on as `return` would; so is an accessor of a
hash entry (`env[KEY]`, `env[KEY] = session`), and a delegate may name its arguments
(`where(owner_id: owner.id)`, as Kotlin's `name = value`). A backport of what the
runtime has (a method defined only where a literal lacks it) is no function of the project's."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.tree_family import (
    TRIVIAL_WORDS,
    Family,
    descendants_of_types,
    field_text,
    text_of,
)

if TYPE_CHECKING:
    from tree_sitter import Node

_HIDING = frozenset({"private", "protected", "private_class_method"})
# Methods Ruby makes private wherever they are defined: a constructor (`new` calls `initialize`,
# no caller can) and the hooks the runtime calls.
_ALWAYS_PRIVATE = frozenset(
    {"initialize", "initialize_copy", "initialize_dup", "initialize_clone", "respond_to_missing?"}
)


def _hidden_by_call(call: Node, name: str) -> bool:
    """`private :name` or `private def name` (the call's argument list)."""
    if call.type != "call" or field_text(call, "method") not in _HIDING:
        return False
    arguments = call.child_by_field_name("arguments")
    return arguments is not None and any(
        text_of(item).lstrip(":").strip("\"'") == name for item in arguments.named_children
    )


# YARD's `@api` tag in a doc comment: `# @api private`.
_API_TAG = re.compile(r"^#\s*@api\s+(\w+)", re.MULTILINE)
# Where a doc comment's item sits: a class's or module's first statement has the comments above it
# beside the body, not in it.
_ENCLOSING = frozenset({"class", "module", "singleton_class"})


def _doc_comment(node: Node) -> str:
    """The comment lines right above `node` (none blank between), as YARD reads a docstring."""
    lines: list[str] = []
    row, current = node.start_point.row, node
    while True:
        previous = current.prev_named_sibling
        if previous is None and current.parent is not None and current.parent.type == "body_statement":
            previous = current.parent.prev_named_sibling
        if previous is None or previous.type != "comment" or previous.end_point.row != row - 1:
            return "\n".join(reversed(lines))
        lines.append(text_of(previous).strip())
        row, current = previous.start_point.row, previous


def _documented_private(node: Node) -> bool:
    """Whether the nearest `@api` tag on `node` or a class or module around it says `private`: YARD
    hands a namespace's tag to everything inside it unless one inside redefines it."""
    enclosing: Node | None = node
    while enclosing is not None:
        if enclosing is node or enclosing.type in _ENCLOSING:
            tag = _API_TAG.search(_doc_comment(enclosing))
            if tag is not None:
                return tag.group(1) == "private"
        enclosing = enclosing.parent
    return False


def _public(node: Node, name: str) -> bool:
    if name.startswith("_") or (name in _ALWAYS_PRIVATE and node.type == "method") or _documented_private(node):
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


_CONDITIONALS = frozenset({"if", "unless", "if_modifier", "unless_modifier"})
_ASKS_FOR_METHOD = frozenset({"respond_to?", "method_defined?", "public_method_defined?"})
# Values whose class is the runtime's own: `//`, `''`, `[]`, `{}`, `0`, `:x`.
_LITERALS = frozenset({"regex", "string", "array", "hash", "integer", "float", "simple_symbol", "rational"})


def _asks_a_literal_for(condition: Node, name: str | None) -> bool:
    """Whether `condition` asks a literal whether it responds to `name` (`//.respond_to?(:match?)`)."""
    for call in descendants_of_types(condition, frozenset({"call"})):
        receiver, arguments = call.child_by_field_name("receiver"), call.child_by_field_name("arguments")
        if (
            field_text(call, "method") in _ASKS_FOR_METHOD and receiver is not None and receiver.type in _LITERALS
            and arguments is not None
            and any(text_of(item).lstrip(":").strip("\"'") == name for item in arguments.named_children)
        ):
            return True
    return False


def _backport(node: Node) -> bool:
    """A method defined only where the runtime lacks it: under a condition asking a literal whether
    it responds to the method's name (`def match?(s) !!match(s) end unless //.respond_to?(:match?)`,
    in a refinement of Regexp for older rubies). Its behaviour is the runtime's; the tests that
    reach its callers run it where it is defined. A method defined unless the project's own class
    has one (`unless method_defined?(:x)`) is a default of the project's: still a function."""
    if node.type != "method":
        return False
    name = field_text(node, "name")
    enclosing = node.parent
    while enclosing is not None and enclosing.type not in ("class", "module", "program"):
        condition = enclosing.child_by_field_name("condition") if enclosing.type in _CONDITIONALS else None
        if condition is not None and _asks_a_literal_for(condition, name):
            return True
        enclosing = enclosing.parent
    return False


def _named_argument(node: Node) -> bool:
    """A hash pair's `:` or `=>` (`where(owner_id: owner.id, revoked_at: nil)`): a value passed
    under a name, as Kotlin's `name = value` is; a delegate may hold it. A ternary's `:` is none."""
    return node.type in (":", "=>") and node.parent is not None and node.parent.type == "pair"


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
    # `||=` memoizes; `yield` hands the block a value, as `return` hands the caller one; `env[KEY]`
    # reads an entry as `@name` reads a variable (`[]` is a method call, as `.` is).
    trivial_words=TRIVIAL_WORDS | {"||=", "yield", "[", "]"},
    skipped=_backport,
    plain_token=_named_argument,
)

FAMILIES = {"ruby": FAMILY}
