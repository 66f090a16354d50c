"""Rust functions for the tests lens, from tree-sitter (tree_shapes): `fn` items, methods as
`Type.method` (`impl<T> Foo<T>` and `impl Display for Foo` both qualify by `Foo`), trait default
methods as `Trait.method`. A closure is part of the function around it; a trait method without a
body is none; `#[test]` functions and `#[cfg(test)]` modules are tests, not product code. Public:
reachable from outside the crate (`_public`): plain `pub` in `pub` modules (or re-exported by a
`pub use`), not `#[doc(hidden)]`; a method of a trait or a trait impl, or a `pub` method, of a
type that is itself public (a trait impl's only when its trait is public too), except a `Debug`
impl's, whose output is no API."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tree_sitter import Query, QueryCursor

from reviewgate.reviewers.builtin.languages.syntax_tree import parser
from reviewgate.reviewers.builtin.languages.tree_family import Family, field_text, leaves_of_kinds, text_of

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


def is_test_item(node: Node) -> bool:
    """A `#[cfg(test)]` module or a `#[test]` function (`#[tokio::test]` too): tests, no product code."""
    if node.type == "mod_item":
        return "#[cfg(test)]" in _attributes(node)
    if node.type == "function_item":
        return any(attribute == "#[test]" or attribute.endswith("::test]") for attribute in _attributes(node))
    return False


def impl_type_name(node: Node) -> str | None:
    kind = node.child_by_field_name("type")
    while kind is not None and kind.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        inner = kind.child_by_field_name("type") or kind.child_by_field_name("name")
        if inner is None:
            break
        kind = inner
    return text_of(kind) or None


def _scope_name(node: Node) -> str | None:
    return impl_type_name(node) if node.type == "impl_item" else field_text(node, "name")


def _exported(item: Node) -> bool:
    """Plain `pub` and not `#[doc(hidden)]`: `pub(crate)`, `pub(super)` and `pub(in ...)` keep an
    item inside the crate, and a hidden item is public only for the crate's own macros."""
    visibility = next((child for child in item.children if child.type == "visibility_modifier"), None)
    return visibility is not None and text_of(visibility) == "pub" and "#[doc(hidden)]" not in _attributes(item)


def _reexported(root: Node, name: str) -> bool:
    """Whether a `pub use` of the file names `name` or brings in a module's every item (`::*`)."""
    for node in QueryCursor(_uses_query()).captures(root).get("use", []):
        if not any(child.type == "visibility_modifier" and text_of(child) == "pub" for child in node.children):
            continue
        if text_of(node).rstrip(" ;").endswith("*") or name in {text_of(leaf) for leaf in leaves_of_kinds(node, _NAMES)}:
            return True
    return False


_NAMES = frozenset({"identifier", "type_identifier"})
_USES: list[Query] = []


def _uses_query() -> Query:
    if not _USES:
        language = parser("rust").language
        assert language is not None
        _USES.append(Query(language, "(use_declaration) @use"))
    return _USES[0]


def _reachable(item: Node, name: str) -> bool:
    """Whether an item outside callers may name: itself exported, inside exported modules only, or
    re-exported by name (`pub use self::inner::Item`)."""
    if not _exported(item):
        return False
    parent = item.parent
    while parent is not None:
        if parent.type == "mod_item" and not _exported(parent):
            root = parent
            while root.parent is not None:
                root = root.parent
            return _reexported(root, name)
        parent = parent.parent
    return True


_TYPE_ITEMS = frozenset({"struct_item", "enum_item", "union_item", "type_item", "trait_item"})
# The last file's root and its type declarations by name: every method of a file asks.
_declared: list[tuple[Node, dict[str, Node]]] = []


def _type_declarations(root: Node) -> dict[str, Node]:
    if _declared and _declared[0][0] == root:
        return _declared[0][1]
    found: dict[str, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _TYPE_ITEMS:
            name = field_text(node, "name")
            if name:
                found.setdefault(name, node)
        if node.type in ("source_file", "mod_item", "declaration_list"):
            stack.extend(node.named_children)
    _declared[:] = [(root, found)]  # the root held: its tree, and so its nodes' identity, stays
    return found


def _declared_in_file(node: Node, name: str) -> Node | None:
    """The type or trait named `name` that the file holding `node` declares, if it does."""
    root = node
    while root.parent is not None:
        root = root.parent
    return _type_declarations(root).get(name)


def _type_public(holder: Node) -> bool:
    """Whether the type an `impl` or a trait is for is reachable from outside the crate. A type the
    file does not declare (`impl Display for Vec<Local>`, a type of another module) is taken as
    public: this file alone cannot tell."""
    if holder.type == "trait_item":
        return _reachable(holder, field_text(holder, "name") or "")
    name = impl_type_name(holder)
    if not name:
        return True
    declaration = _declared_in_file(holder, name)
    return declaration is None or _reachable(declaration, name)


def _trait_public(holder: Node) -> bool:
    """Whether the trait an `impl` implements is reachable from outside the crate: a method of a
    private trait is callable only inside the crate, whatever type it is for (a blanket
    `impl<T> Helper for T`). A trait the file does not declare, or one named by a path
    (`fmt::Display`: another module's, whatever this file declares), is taken as public."""
    trait = holder.child_by_field_name("trait")
    if trait is None:
        return True
    name = text_of(trait).partition("<")[0].strip()
    if "::" in name:
        return True
    declaration = _declared_in_file(holder, name)
    return declaration is None or declaration.type != "trait_item" or _reachable(declaration, name)


def _debug_impl(holder: Node) -> bool:
    """An `impl Debug for T` (`fmt::Debug`, `std::fmt::Debug`): a developer's view of a value,
    whose output the standard library documents as unstable, so no API a caller relies on; its
    `fmt` is read as a helper of its size (tower #280, #492: a `debug_struct` listing of fields)."""
    trait = holder.child_by_field_name("trait")
    return trait is not None and text_of(trait).partition("<")[0].strip().rpartition("::")[2] == "Debug"


def _public(node: Node, name: str) -> bool:
    """Public API: a function outside callers can reach. A method is as visible as its type: a
    `pub fn` or a trait impl of a private or crate-private struct is no more public than the
    struct; a trait impl's or a trait's methods are public when their type is, and a trait impl's
    when its trait is too."""
    holder = node.parent.parent if node.parent is not None else None  # declaration_list -> impl or trait
    if holder is not None and holder.type in ("impl_item", "trait_item"):
        if "#[doc(hidden)]" in _attributes(node) or _debug_impl(holder):
            return False
        own = holder.type == "trait_item" or holder.child_by_field_name("trait") is not None or _exported(node)
        return own and _type_public(holder) and (holder.type == "trait_item" or _trait_public(holder))
    return _reachable(node, name)


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


def _last_arm(node: Node) -> bool:
    """A `match`'s last arm: the match is exhaustive, so n arms make n - 1 decisions, as an `if`,
    `else if`, `else` chain of n paths does (`_ => ..` is the usual last arm)."""
    if node.type != "match_arm":
        return False
    following = node.next_named_sibling
    while following is not None and following.type != "match_arm":
        following = following.next_named_sibling
    return following is None


_PLACES = frozenset({"identifier", "field_expression", "self"})


def _place_name(node: Node | None) -> str | None:
    """The last name of a plain place (`config.timeout`, `self.config.timeout`, `timeout`), None
    for anything that computes (a call, an index, an operator)."""
    if node is None or node.type not in _PLACES:
        return None
    if node.type == "field_expression":
        return None if _place_name(node.child_by_field_name("value")) is None else field_text(node, "field")
    return text_of(node)


def _hands_on_a_setting(node: Node) -> bool:
    """An `if` that hands one stored setting on, unchanged, to the place of its name when it is
    set: `if let Some(size) = config.max_frame_size { builder.max_frame_size(size); }`, `if
    config.adaptive_window { builder.adaptive_window(true); }`, `if let Some(grease) = grease {
    h3.grease = Some(grease); }`. A builder's options passed to the library's builder decide
    nothing of their own: the names say where each goes (reqwest #1194, #2609)."""
    if node.type != "if_expression" or node.child_by_field_name("alternative") is not None:
        return False
    condition, body = node.child_by_field_name("condition"), node.child_by_field_name("consequence")
    if condition is None or body is None or body.named_child_count != 1:
        return False
    if condition.type == "let_condition":
        pattern, source = condition.child_by_field_name("pattern"), condition.child_by_field_name("value")
        bound = pattern.named_children if pattern is not None and pattern.type == "tuple_struct_pattern" else []
        if len(bound) != 2 or text_of(bound[0]) != "Some" or bound[1].type != "identifier":
            return False
        value, names = text_of(bound[1]), {text_of(bound[1]), _place_name(source)}
        handed = {value, f"Some({value})"}
    else:
        names, handed = {_place_name(condition)}, {"true"}
    statement = body.named_children[0]
    if statement.type == "expression_statement" and statement.named_child_count == 1:
        statement = statement.named_children[0]
    if statement.type == "assignment_expression":
        target, argument = statement.child_by_field_name("left"), statement.child_by_field_name("right")
    elif statement.type == "call_expression":
        target, arguments = statement.child_by_field_name("function"), statement.child_by_field_name("arguments")
        given = arguments.named_children if arguments is not None else []
        argument = given[0] if len(given) == 1 else None
    else:
        return False
    if target is None or target.type != "field_expression" or argument is None:
        return False
    return None not in names and _place_name(target) in names and text_of(argument).replace(" ", "") in handed


def _not_a_decision(node: Node) -> bool:
    return _last_arm(node) or _hands_on_a_setting(node)


def _chained(callee: Node | None) -> bool:
    """Whether a method is called on what a call returned (`.copied()` in `self.0.iter().copied()`)."""
    while callee is not None and callee.type == "generic_function":
        callee = callee.child_by_field_name("function")
    receiver = None if callee is None or callee.type != "field_expression" else callee.child_by_field_name("value")
    return receiver is not None and receiver.type in ("call_expression", "try_expression")


def _forwarded_into_closure(call: Node) -> bool:
    """Whether a call is the whole body of a closure that is the one argument of another call, and
    calls a method of the closure's own parameter (`self.with_inner(|inner| inner.timeout(value))`):
    the outer call hands its value to the closure, which forwards it one call on; one forward."""
    closure = call.parent
    if closure is None or closure.type != "closure_expression" or closure.child_by_field_name("body") != call:
        return False
    arguments = closure.parent
    if arguments is None or arguments.type != "arguments" or arguments.named_child_count != 1:
        return False
    callee = call.child_by_field_name("function")
    receiver = None if callee is None or callee.type != "field_expression" else callee.child_by_field_name("value")
    parameters = closure.child_by_field_name("parameters")
    return (
        receiver is not None and receiver.type == "identifier" and parameters is not None
        and text_of(receiver) in {text_of(name) for name in parameters.named_children if name.type == "identifier"}
    )


def _enclosing_function(node: Node) -> Node | None:
    while node.parent is not None and node.type != "function_item":
        node = node.parent
    return node if node.type == "function_item" else None


def _builds_returned_type(call: Node) -> bool:
    """Whether a call is the one argument of a method call and builds, from plain names, a value of
    a type the enclosing function's return type names (`self.layer(MapFutureLayer::new(f))` in a
    method returning `ServiceBuilder<Stack<MapFutureLayer<F>, L>>`): the signature says what the
    forwarded value is, the type's own associated function makes it; the method picks nothing."""
    arguments = call.parent
    outer = None if arguments is None else arguments.parent
    if arguments is None or arguments.type != "arguments" or arguments.named_child_count != 1 or outer is None:
        return False
    outer_callee = outer.child_by_field_name("function")
    callee = call.child_by_field_name("function")
    if outer_callee is None or outer_callee.type != "field_expression" or callee is None or callee.type != "scoped_identifier":
        return False
    path = callee.child_by_field_name("path")
    kind = None if path is None else text_of(path).rpartition("::")[2]
    given = call.child_by_field_name("arguments")
    if not kind or not kind[:1].isupper() or given is None or any(
        argument.type != "identifier" for argument in given.named_children
    ):
        return False
    function = _enclosing_function(call)
    returned = None if function is None else function.child_by_field_name("return_type")
    return returned is not None and kind in {
        text_of(leaf) for leaf in leaves_of_kinds(returned, frozenset({"type_identifier"}))
    }


def _converts_parameter(call: Node) -> bool:
    """Whether a call is `name.into()` of a parameter the signature declares convertible, `impl
    Into<T>` or a type parameter bound by `Into<T>` (`C: Into<Option<u32>>`): the conversion the
    caller's argument asks for, chosen by its type, as a cast; no computation of the function's."""
    callee = call.child_by_field_name("function")
    given = call.child_by_field_name("arguments")
    value = None if callee is None or callee.type != "field_expression" else callee.child_by_field_name("value")
    if callee is None or value is None or value.type != "identifier" or field_text(callee, "field") != "into" or given is None:
        return False
    function = _enclosing_function(call) if given.named_child_count == 0 else None
    parameters = None if function is None else function.child_by_field_name("parameters")
    declared = next((
        parameter.child_by_field_name("type") for parameter in (parameters.named_children if parameters else [])
        if parameter.type == "parameter" and field_text(parameter, "pattern") == text_of(value)
    ), None)
    if function is None or declared is None:
        return False
    kind = "".join(text_of(declared).split())
    if kind.startswith("implInto<"):
        return True
    bounds = " ".join(text_of(child) for child in function.named_children if child.type in ("type_parameters", "where_clause"))
    return declared.type == "type_identifier" and re.search(rf"\b{re.escape(kind)}\s*:[^,{{]*\bInto\s*<", bounds) is not None


# Tokens that build or name a value, no computation: a closure's `|x|` and `move`, a field's
# `name: value` in a struct literal, a reference's `&` (`&self.inner`, `&mut self.inner`).
_PLAIN_BY_HOLDER = {"|": "closure_parameters", "move": "closure_expression", ":": "field_initializer",
                    "&": "reference_expression"}


def _plain_token(node: Node) -> bool:
    """A turbofish's `<` and `>` (`get::<T>()`: a type, no computation), the unit value's `()`, the
    empty arguments of a method called on what a call returned (`self.0.iter().copied()`: one
    forwarded call and the adaptors of its result), the tokens of a closure, a struct literal's
    fields and a reference (`_PLAIN_BY_HOLDER`), the call a closure that is another call's one
    argument forwards to its own parameter (`_forwarded_into_closure`), the constructor of a type
    the return type names that builds the forwarded call's argument (`_builds_returned_type`), a
    parameter's declared conversion (`retries.into()`, `_converts_parameter`), or the arguments of
    a call
    that builds a value: a callee named in CamelCase is a tuple struct or an enum variant (`Ok(())`,
    `Some(value)`, `Self(inner)`), which Rust's naming lints hold every type and variant to;
    `Box::new(..)` is a call."""
    holder = node.parent
    if holder is None:
        return False
    if node.type in _PLAIN_BY_HOLDER:
        return holder.type == _PLAIN_BY_HOLDER[node.type]
    if node.type in ("<", ">"):
        return holder.type == "type_arguments"
    if node.type != "(":
        return False
    if holder.type == "unit_expression":
        return True
    call = holder.parent
    if holder.type != "arguments" or call is None or call.type != "call_expression":
        return False
    callee = call.child_by_field_name("function")
    if holder.named_child_count == 0 and (_chained(callee) or _converts_parameter(call)):
        return True
    if _forwarded_into_closure(call) or _builds_returned_type(call):
        return True
    if callee is None or callee.type not in ("identifier", "scoped_identifier"):
        return False
    name = text_of(callee).rpartition("::")[2]
    return name[:1].isupper() and not name.isupper()


FAMILY = Family(
    grammars=("rust",),
    functions=frozenset({"function_item"}),
    public=_public,
    scopes=frozenset({"impl_item", "trait_item", "mod_item"}),
    scope_name=_scope_name,
    branches=frozenset({"if_expression", "match_arm", "while_expression", "loop_expression", "for_expression"}),
    macros="(macro_invocation) @macro",
    macro_decisions=_select_decisions,
    fallthrough=_not_a_decision,
    combinators="(call_expression function: (field_expression field: (field_identifier) @combinator) arguments: (arguments (_)))",
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
    skipped=is_test_item,
    plain_token=_plain_token,
)

FAMILIES = {"rust": FAMILY}
