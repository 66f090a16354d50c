"""The wrong exception, in Java and Kotlin: a `try` whose only risky calls are well-known library
calls, under catch clauses none of which catches what those calls raise on bad input. `Integer.parseInt(s)`
under `catch (NullPointerException e)` only (a null or malformed string raises
`NumberFormatException`), `LocalDate.parse(s)` under `catch (NumberFormatException e)`,
`new String(Base64.getDecoder().decode(h), "UTF-8")` under `catch (UnsupportedEncodingException e)`
(the charset is what the handler is for; the bad base64 raises `IllegalArgumentException`);
Kotlin's `s.toInt()` under `catch (e: IllegalStateException)`.

The same rules as the Python reader (wrong_exception.py): a table of calls and what they raise, the
small part of the JDK's exception hierarchy they need, a body of at most 3 statements holding
nothing else that could raise what the handlers name (any other call, constructor, `throw` or
nested `try` might be what the handler is for), and handlers that are for nothing else in the
body (a `catch (ArithmeticException e)` around `Integer.parseInt(a) / b` is about the division)
or only for a charset step. The two languages share the JDK's table and hierarchy; each has its
own reader of the tree (Kotlin's `try` is an expression, its calls navigation expressions, and
it has its own conversions: `toInt()`, `toBigDecimal()`). Imported only for a Java or Kotlin file:
it loads their grammars, each the first time a file of its language is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.languages.syntax_tree import parse
from reviewgate.reviewers.builtin.lenses.wrong_exception import wrong_exception_finding

if TYPE_CHECKING:
    import tree_sitter

# Each exception's parent, by its simple name (a qualified name is read by its last part).
_PARENT: dict[str, str] = {
    "Exception": "Throwable", "Error": "Throwable", "RuntimeException": "Exception", "IOException": "Exception",
    "URISyntaxException": "Exception", "ParseException": "Exception",
    "UnsupportedEncodingException": "IOException", "FileNotFoundException": "IOException",
    "IllegalArgumentException": "RuntimeException", "IllegalStateException": "RuntimeException",
    "NullPointerException": "RuntimeException", "ArithmeticException": "RuntimeException",
    "IndexOutOfBoundsException": "RuntimeException", "ClassCastException": "RuntimeException",
    "UnsupportedOperationException": "RuntimeException", "NoSuchElementException": "RuntimeException",
    "ConcurrentModificationException": "RuntimeException", "UncheckedIOException": "RuntimeException",
    "DateTimeException": "RuntimeException",
    "NumberFormatException": "IllegalArgumentException", "PatternSyntaxException": "IllegalArgumentException",
    "UnsupportedCharsetException": "IllegalArgumentException", "IllegalCharsetNameException": "IllegalArgumentException",
    "DateTimeParseException": "DateTimeException", "ZoneRulesException": "DateTimeException",
    "ArrayIndexOutOfBoundsException": "IndexOutOfBoundsException",
    "StringIndexOutOfBoundsException": "IndexOutOfBoundsException",
    "InputMismatchException": "NoSuchElementException",
}  # fmt: skip
_BROAD = frozenset({"Throwable", "Exception", "RuntimeException"})
# What each call raises on bad input, by its text without arguments (`Base64.getDecoder().decode`).
_RAISES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("Integer.parseInt", "Integer.parseUnsignedInt", "Integer.decode", "Long.parseLong", "Long.parseUnsignedLong",
         "Long.decode", "Short.parseShort", "Byte.parseByte", "Double.parseDouble", "Float.parseFloat",
         "new BigDecimal", "new BigInteger"),
        ("NumberFormatException",),
    ),
    **dict.fromkeys(
        ("UUID.fromString", "Base64.getDecoder().decode", "Base64.getUrlDecoder().decode",
         "Base64.getMimeDecoder().decode", "URI.create", "HexFormat.of().parseHex"),
        ("IllegalArgumentException",),
    ),
    **dict.fromkeys(
        ("LocalDate.parse", "LocalDateTime.parse", "LocalTime.parse", "ZonedDateTime.parse", "OffsetDateTime.parse",
         "OffsetTime.parse", "Instant.parse", "Duration.parse", "Period.parse", "YearMonth.parse", "Year.parse",
         "MonthDay.parse"),
        ("DateTimeParseException",),
    ),
    "ZoneId.of": ("DateTimeException",),
    "Pattern.compile": ("PatternSyntaxException",),
    "Charset.forName": ("UnsupportedCharsetException", "IllegalCharsetNameException"),
    # A charset given by name: the step a handler of `UnsupportedEncodingException` is for.
    "new String": ("UnsupportedEncodingException",),
    ".getBytes": ("UnsupportedEncodingException",),
}  # fmt: skip
_CHARSET_STEPS = frozenset({"new String", ".getBytes"})
# Static calls that raise nothing a handler would be written for.
_QUIET_STATIC = frozenset(
    {"String.valueOf", "Math.max", "Math.min", "Math.abs", "Objects.toString", "Objects.equals",
     "Objects.requireNonNullElse", "Optional.ofNullable", "Optional.empty", "Base64.getDecoder",
     "Base64.getUrlDecoder", "Base64.getMimeDecoder", "HexFormat.of"}
)  # fmt: skip
# Methods that raise nothing but a NullPointerException on a null receiver.
_QUIET_METHODS = frozenset(
    {"trim", "strip", "toLowerCase", "toUpperCase", "isEmpty", "isBlank", "length", "equals", "equalsIgnoreCase",
     "startsWith", "endsWith", "contains", "toString", "hashCode", "getBytes", "replace", "orElse"}
)  # fmt: skip
_NULL_RECEIVER = ("NullPointerException",)
# Kotlin's conversions of a string (on a number they cannot fail, but a `try` is not written for one).
_KOTLIN_CONVERSIONS = frozenset(
    {"toInt", "toLong", "toShort", "toByte", "toDouble", "toFloat", "toBigDecimal", "toBigInteger", "toUInt",
     "toULong"}
)  # fmt: skip
# Kotlin methods that raise nothing (a null receiver is a compile error there, not an exception).
_KOTLIN_QUIET_METHODS = _QUIET_METHODS | frozenset(
    {"lowercase", "uppercase", "toIntOrNull", "toLongOrNull", "toDoubleOrNull", "toBigDecimalOrNull", "orEmpty",
     "isNullOrEmpty", "isNullOrBlank", "trimEnd", "trimStart", "removePrefix", "removeSuffix"}
)  # fmt: skip
# Kotlin functions called by a plain name that raise nothing, or are constructors of the table.
_KOTLIN_QUIET_FUNCTIONS = frozenset({"String", "minOf", "maxOf", "listOf", "setOf", "mapOf", "println"})
# Nodes that raise, or run code of their own the handler may be for.
_JAVA_OPAQUE = frozenset(
    {"throw_statement", "try_statement", "try_with_resources_statement", "assert_statement",
     "synchronized_statement", "explicit_constructor_invocation", "yield_statement"}
)  # fmt: skip

Raiser = tuple["tree_sitter.Node", str, tuple[str, ...]]
# What a reader makes of one node of a `try` body: a call or step that raises (its key and what it
# raises: the walk goes on into it), one that raises nothing (None: the walk goes on), code that
# runs later (_SKIP), or something the handler may be for (_OPAQUE_NODE: the `try` is not judged).
_SKIP, _OPAQUE_NODE = "skip", "opaque"
Step = tuple[str, tuple[str, ...]] | str | None


def java_findings(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    yield from _findings(_JAVA, parse("java", text), text, path, added)


def kotlin_findings(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    yield from _findings(_KOTLIN, parse("kotlin", text), text, path, added)


def _text(node: tree_sitter.Node) -> str:
    return re.sub(r"\s+", "", (node.text or b"").decode("utf-8", "replace"))


def _lineage(name: str) -> list[str]:
    found = [name]
    while found[-1] in _PARENT:
        found.append(_PARENT[found[-1]])
    return found


def _known(types: list[tree_sitter.Node]) -> list[str] | None:
    """The simple names of the types a clause catches; None when one is broad or not in the table."""
    names = [_text(item).rsplit(".", 1)[-1] for item in types]
    return None if any(name not in _PARENT or name in _BROAD for name in names) else names


def _operator(node: tree_sitter.Node) -> str:
    found = node.child_by_field_name("operator")
    if found is not None:
        return _text(found)
    return next((_text(child) for child in node.children if not child.is_named), "")


def _arithmetic(node: tree_sitter.Node) -> Step:
    return ("[...]", ("ArithmeticException",)) if _operator(node) in {"/", "%"} else None


# Java ---------------------------------------------------------------------------------------


def _java_catches(node: tree_sitter.Node) -> tuple[tree_sitter.Node, list[str], tree_sitter.Node] | None:
    """(body, the exception each catch clause names, the first clause), or None."""
    body = node.child_by_field_name("body")
    clauses = [child for child in node.named_children if child.type == "catch_clause"]
    if body is None or not clauses:
        return None
    names: list[str] = []
    for clause in clauses:
        parameter = next((child for child in clause.named_children if child.type == "catch_formal_parameter"), None)
        types = next((child for child in parameter.named_children if child.type == "catch_type"), None) if parameter else None
        known = _known(types.named_children) if types is not None else None
        if known is None:
            return None
        names += known
    return body, names, clauses[0]


def _java_call_key(node: tree_sitter.Node) -> str | None:
    """The table key of a method call or constructor; `[receiver]` for a quiet method (it raises on
    a null receiver only), `[quiet]` for a call that raises nothing; None for any other call."""
    if node.type == "object_creation_expression":
        kind = node.child_by_field_name("type")
        arguments = node.child_by_field_name("arguments")
        key = f"new {_text(kind)}" if kind is not None else ""
        if key == "new String":
            named = arguments.named_children if arguments is not None else []
            return key if len(named) == 2 and named[1].type == "string_literal" else "[quiet]"
        return key if key in _RAISES else None
    name = node.child_by_field_name("name")
    receiver = node.child_by_field_name("object")
    if name is None or receiver is None:
        return None
    method = _text(name)
    key = f"{_text(receiver)}.{method}"
    if key in _RAISES:
        return key
    if key in _QUIET_STATIC:
        return "[quiet]"
    if method == "getBytes":
        arguments = node.child_by_field_name("arguments")
        named = arguments.named_children if arguments is not None else []
        return ".getBytes" if len(named) == 1 and named[0].type == "string_literal" else "[receiver]"
    return "[receiver]" if method in _QUIET_METHODS else None


def _java_step(item: tree_sitter.Node) -> Step:
    if item.type in {"lambda_expression", "class_body"}:
        return _SKIP  # runs later, if at all
    if item.type in _JAVA_OPAQUE:
        return _OPAQUE_NODE
    if item.type in {"method_invocation", "object_creation_expression"}:
        key = _java_call_key(item)
        if key is None:
            return _OPAQUE_NODE
        if key in _RAISES:
            return key, _RAISES[key]
        return ("[...]", _NULL_RECEIVER) if key == "[receiver]" else None
    if item.type == "array_access":
        return "[...]", ("ArrayIndexOutOfBoundsException", "NullPointerException")
    if item.type == "cast_expression":
        return "[...]", ("ClassCastException",)
    return _arithmetic(item) if item.type == "binary_expression" else None


# Kotlin -------------------------------------------------------------------------------------


def _kotlin_catches(node: tree_sitter.Node) -> tuple[tree_sitter.Node, list[str], tree_sitter.Node] | None:
    body = next((child for child in node.named_children if child.type == "block"), None)
    clauses = [child for child in node.named_children if child.type == "catch_block"]
    if body is None or not clauses:
        return None
    names: list[str] = []
    for clause in clauses:
        known = _known([child for child in clause.named_children if child.type == "user_type"])
        if not known:
            return None
        names += known
    return body, names, clauses[0]


def _kotlin_call(item: tree_sitter.Node) -> Step:
    callee = item.named_children[0] if item.named_children else None
    if callee is None:
        return _OPAQUE_NODE
    if callee.type == "identifier":
        name = _text(callee)
        if f"new {name}" in _RAISES and name != "String":
            return f"new {name}", _RAISES[f"new {name}"]
        return None if name in _KOTLIN_QUIET_FUNCTIONS else _OPAQUE_NODE
    parts = callee.named_children
    if callee.type != "navigation_expression" or len(parts) != 2:
        return _OPAQUE_NODE
    method = _text(parts[1])
    key = f"{_text(parts[0])}.{method}"
    if key in _RAISES:
        return key, _RAISES[key]
    if method in _KOTLIN_CONVERSIONS:
        return f".{method}", ("NumberFormatException",)
    return None if key in _QUIET_STATIC or method in _KOTLIN_QUIET_METHODS else _OPAQUE_NODE


def _kotlin_step(item: tree_sitter.Node) -> Step:
    if item.type in {"lambda_literal", "anonymous_function", "class_body", "object_literal"}:
        return _SKIP
    if item.type in {"try_expression", "throw_expression"}:
        return _OPAQUE_NODE
    if item.type == "call_expression":
        return _kotlin_call(item)
    if item.type == "index_expression":
        return "[...]", ("IndexOutOfBoundsException",)
    if item.type == "as_expression" and "as?" not in _text(item):
        return "[...]", ("ClassCastException",)
    if item.type == "unary_expression" and _text(item).endswith("!!"):
        return "[...]", _NULL_RECEIVER
    return _arithmetic(item) if item.type == "binary_expression" else None


class _Grammar:
    """One language's reading of the tree: which nodes are a `try`, its body and clauses, and
    what each node of the body is."""

    __slots__ = ("catches", "step", "try_type")

    def __init__(
        self,
        try_type: str,
        catches: Callable[[tree_sitter.Node], tuple[tree_sitter.Node, list[str], tree_sitter.Node] | None],
        step: Callable[[tree_sitter.Node], Step],
    ) -> None:
        self.try_type, self.catches, self.step = try_type, catches, step


_JAVA = _Grammar("try_statement", _java_catches, _java_step)
_KOTLIN = _Grammar("try_expression", _kotlin_catches, _kotlin_step)


def _findings(grammar: _Grammar, tree: tree_sitter.Tree, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == grammar.try_type:
            yield from _try(grammar, node, text, path, added)
        stack.extend(node.named_children)


def _raisers(grammar: _Grammar, body: tree_sitter.Node) -> list[Raiser] | None:
    """(node, key, what it raises) for the body's table calls and the steps that raise on their
    own (an index, a cast, a division, a method of a possibly null receiver); None when the body
    holds a call that is neither in the table nor known to be quiet, or a `throw` or `try`."""
    found: list[Raiser] = []
    stack = list(body.named_children)
    while stack:
        item = stack.pop()
        step = grammar.step(item)
        if step == _SKIP:
            continue
        if step == _OPAQUE_NODE:
            return None
        if isinstance(step, tuple):
            found.append((item, *step))
        stack.extend(item.named_children)
    return found


def _try(grammar: _Grammar, node: tree_sitter.Node, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    catches = grammar.catches(node)
    if catches is None:
        return
    body, names, first = catches
    if len(body.named_children) > 3:
        return
    raisers = _raisers(grammar, body)
    if not raisers:
        return

    def caught(raises: tuple[str, ...]) -> bool:
        return any(handled in _lineage(raised) or raised in _lineage(handled) for raised in raises for handled in names)

    # What the handlers are for: nothing the body raises, or only a charset given by name.
    explained = {key for _call, key, raises in raisers if caught(raises)}
    if not explained <= _CHARSET_STEPS:
        return
    line = first.start_point[0] + 1
    for call, key, raises in raisers:
        if key == "[...]" or caught(raises):
            continue
        call_line = call.start_point[0] + 1
        if not {line, call_line} & set(added):
            continue
        base = _PARENT[raises[0]]
        yield wrong_exception_finding(
            path=path, text=text, line=line, try_line=node.start_point[0] + 1, call_line=call_line,
            shown=f"{key.lstrip('.')}()" if key.startswith(".") else f"{key}(...)", raises=raises,
            base=None if base in _BROAD else base, handlers=names,
        )
