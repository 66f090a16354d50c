"""The wrong exception, in Java and Kotlin: a `try` whose only risky calls are well-known library
calls, under catch clauses none of which catches what those calls raise on bad input. `Integer.parseInt(s)`
under `catch (NullPointerException e)` only (a null or malformed string raises
`NumberFormatException`), `LocalDate.parse(s)` under `catch (NumberFormatException e)`,
`new String(Base64.getDecoder().decode(h), "UTF-8")` under `catch (UnsupportedEncodingException e)`
(the charset is what the handler is for; the bad base64 raises `IllegalArgumentException`);
Kotlin's `s.toInt()` under `catch (e: IllegalStateException)`.

The same rules as the Python reader (wrong_exception.py), walked by wrong_exception_tree.py: a table of calls and what they raise, the
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

from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.languages.syntax_tree import parse
from reviewgate.reviewers.builtin.lenses.wrong_exception_tree import (
    OPAQUE,
    SKIP,
    STEP_KEY,
    Catches,
    Grammar,
    Hierarchy,
    Step,
    UncaughtCall,
    arithmetic,
    children,
    node_text,
    uncaught_calls,
)

if TYPE_CHECKING:
    import tree_sitter

# Each exception's parent, by its simple name (a qualified name is read by its last part).
_PARENT: dict[str, str] = {
    "Exception": "Throwable", "Error": "Throwable", "RuntimeException": "Exception", "IOException": "Exception",
    "URISyntaxException": "Exception", "ParseException": "Exception",
    "UnsupportedEncodingException": "IOException", "FileNotFoundException": "IOException",
    "MalformedURLException": "IOException", "UnknownHostException": "IOException",
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
         "new BigDecimal", "new BigInteger", "Integer.valueOf", "Long.valueOf", "Short.valueOf", "Byte.valueOf",
         "Double.valueOf", "Float.valueOf"),
        ("NumberFormatException",),
    ),
    **dict.fromkeys(
        ("UUID.fromString", "Base64.getDecoder().decode", "Base64.getUrlDecoder().decode",
         "Base64.getMimeDecoder().decode", "URI.create", "HexFormat.of().parseHex", "IDN.toASCII"),
        ("IllegalArgumentException",),
    ),
    **dict.fromkeys(
        ("LocalDate.parse", "LocalDateTime.parse", "LocalTime.parse", "ZonedDateTime.parse", "OffsetDateTime.parse",
         "OffsetTime.parse", "Instant.parse", "Duration.parse", "Period.parse", "YearMonth.parse", "Year.parse",
         "MonthDay.parse"),
        ("DateTimeParseException",),
    ),
    "ZoneId.of": ("DateTimeException",),
    "new URL": ("MalformedURLException",),
    "new URI": ("URISyntaxException",),
    **dict.fromkeys(("InetAddress.getByName", "InetAddress.getAllByName"), ("UnknownHostException",)),
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



def java_uncaught_calls(text: str, path: str, added: dict[int, str]) -> Iterator[UncaughtCall]:
    yield from uncaught_calls(_JAVA, parse("java", text, path), added)


def kotlin_uncaught_calls(text: str, path: str, added: dict[int, str]) -> Iterator[UncaughtCall]:
    yield from uncaught_calls(_KOTLIN, parse("kotlin", text, path), added)


# Java ---------------------------------------------------------------------------------------


def _java_catches(node: tree_sitter.Node) -> Catches | None:
    return _JDK.catches(node.child_by_field_name("body"), children(node, "catch_clause"), _java_types)


def _java_types(clause: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    parameter = next(iter(children(clause, "catch_formal_parameter")), None)
    types = next(iter(children(parameter, "catch_type")), None) if parameter is not None else None
    return types.named_children if types is not None else None


def _java_call_key(node: tree_sitter.Node) -> str | None:
    """The table key of a method call or constructor; `[receiver]` for a quiet method (it raises on
    a null receiver only), `[quiet]` for a call that raises nothing; None for any other call."""
    if node.type == "object_creation_expression":
        kind = node.child_by_field_name("type")
        arguments = node.child_by_field_name("arguments")
        key = f"new {node_text(kind)}" if kind is not None else ""
        if key == "new String":
            named = arguments.named_children if arguments is not None else []
            return key if len(named) == 2 and named[1].type == "string_literal" else "[quiet]"
        return key if key in _RAISES else None
    name = node.child_by_field_name("name")
    receiver = node.child_by_field_name("object")
    if name is None or receiver is None:
        return None
    method = node_text(name)
    key = f"{node_text(receiver)}.{method}"
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
        return SKIP  # runs later, if at all
    if item.type in _JAVA_OPAQUE:
        return OPAQUE
    if item.type in {"method_invocation", "object_creation_expression"}:
        key = _java_call_key(item)
        if key is None:
            return OPAQUE
        if key in _RAISES:
            return key, _RAISES[key]
        return (STEP_KEY, _NULL_RECEIVER) if key == "[receiver]" else None
    if item.type == "array_access":
        return STEP_KEY, ("ArrayIndexOutOfBoundsException", "NullPointerException")
    if item.type == "cast_expression":
        return STEP_KEY, ("ClassCastException",)
    return arithmetic(item) if item.type == "binary_expression" else None


# Kotlin -------------------------------------------------------------------------------------


def _kotlin_catches(node: tree_sitter.Node) -> Catches | None:
    return _JDK.catches(
        next(iter(children(node, "block")), None), children(node, "catch_block"), lambda clause: children(clause, "user_type")
    )


def _kotlin_call(item: tree_sitter.Node) -> Step:
    callee = item.named_children[0] if item.named_children else None
    if callee is None:
        return OPAQUE
    if callee.type == "identifier":
        name = node_text(callee)
        if f"new {name}" in _RAISES and name != "String":
            return f"new {name}", _RAISES[f"new {name}"]
        return None if name in _KOTLIN_QUIET_FUNCTIONS else OPAQUE
    parts = callee.named_children
    if callee.type != "navigation_expression" or len(parts) != 2:
        return OPAQUE
    method = node_text(parts[1])
    key = f"{node_text(parts[0])}.{method}"
    if key in _RAISES:
        return key, _RAISES[key]
    if method in _KOTLIN_CONVERSIONS:
        return f".{method}", ("NumberFormatException",)
    return None if key in _QUIET_STATIC or method in _KOTLIN_QUIET_METHODS else OPAQUE


def _kotlin_step(item: tree_sitter.Node) -> Step:
    if item.type in {"lambda_literal", "anonymous_function", "class_body", "object_literal"}:
        return SKIP
    if item.type in {"try_expression", "throw_expression"}:
        return OPAQUE
    if item.type == "call_expression":
        return _kotlin_call(item)
    if item.type == "index_expression":
        return STEP_KEY, ("IndexOutOfBoundsException",)
    if item.type == "as_expression" and "as?" not in node_text(item):
        return STEP_KEY, ("ClassCastException",)
    if item.type == "unary_expression" and node_text(item).endswith("!!"):
        return STEP_KEY, _NULL_RECEIVER
    return arithmetic(item) if item.type == "binary_expression" else None


_JDK = Hierarchy(_PARENT, _BROAD, _CHARSET_STEPS)
_JAVA = Grammar("try_statement", _java_catches, _java_step, _JDK)
_KOTLIN = Grammar("try_expression", _kotlin_catches, _kotlin_step, _JDK)
