"""The wrong exception, in Java: a `try` whose only risky calls are well-known library calls, under
catch clauses none of which catches what those calls raise on bad input. `Integer.parseInt(s)`
under `catch (NullPointerException e)` only (a null or malformed string raises
`NumberFormatException`), `LocalDate.parse(s)` under `catch (NumberFormatException e)`,
`new String(Base64.getDecoder().decode(h), "UTF-8")` under `catch (UnsupportedEncodingException e)`
(the charset is what the handler is for; the bad base64 raises `IllegalArgumentException`).

The same rules as the Python reader (wrong_exception.py): a table of calls and what they raise, the
small part of the JDK's exception hierarchy they need, a body of at most 3 statements holding
nothing else that could raise what the handlers name (any other call, constructor, `throw` or
nested `try` might be what the handler is for), and handlers that are for nothing else in the
body (a `catch (ArithmeticException e)` around `Integer.parseInt(a) / b` is about the division)
or only for a charset step. Imported only for a Java file: it loads the Java grammar.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
# Nodes that raise, or run code of their own the handler may be for.
_OPAQUE = frozenset(
    {"throw_statement", "try_statement", "try_with_resources_statement", "assert_statement",
     "synchronized_statement", "explicit_constructor_invocation", "yield_statement"}
)  # fmt: skip

Raiser = tuple["tree_sitter.Node", str, tuple[str, ...]]


def java_findings(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    tree = parse("java", text)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "try_statement":
            yield from _try(node, text, path, added)
        stack.extend(node.named_children)


def _text(node: tree_sitter.Node) -> str:
    return re.sub(r"\s+", "", (node.text or b"").decode("utf-8", "replace"))


def _lineage(name: str) -> list[str]:
    found = [name]
    while found[-1] in _PARENT:
        found.append(_PARENT[found[-1]])
    return found


def _handler_names(node: tree_sitter.Node) -> tuple[list[str], tree_sitter.Node] | None:
    """The exception each catch clause names and the first clause; None when one is broad or not
    in the table."""
    clauses = [child for child in node.named_children if child.type == "catch_clause"]
    names: list[str] = []
    for clause in clauses:
        parameter = next((child for child in clause.named_children if child.type == "catch_formal_parameter"), None)
        types = next((child for child in parameter.named_children if child.type == "catch_type"), None) if parameter else None
        if types is None:
            return None
        for item in types.named_children:
            name = _text(item).rsplit(".", 1)[-1]
            if name not in _PARENT or name in _BROAD:
                return None
            names.append(name)
    return (names, clauses[0]) if names else None


def _call_key(node: tree_sitter.Node) -> str | None:
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


def _raisers(body: tree_sitter.Node) -> list[Raiser] | None:
    """(node, key, what it raises) for the body's table calls and the steps that raise on their
    own (an array index, a cast, a division, a method of a possibly null receiver); None when the
    body holds a call that is neither in the table nor known to be quiet."""
    found: list[Raiser] = []
    stack = list(body.named_children)
    while stack:
        item = stack.pop()
        if item.type in {"lambda_expression", "class_body"}:
            continue  # runs later, if at all
        if item.type in _OPAQUE:
            return None
        if item.type in {"method_invocation", "object_creation_expression"}:
            key = _call_key(item)
            if key is None:
                return None
            if key in _RAISES:
                found.append((item, key, _RAISES[key]))
            elif key == "[receiver]":
                found.append((item, "[...]", _NULL_RECEIVER))
        elif item.type == "array_access":
            found.append((item, "[...]", ("ArrayIndexOutOfBoundsException", "NullPointerException")))
        elif item.type == "cast_expression":
            found.append((item, "[...]", ("ClassCastException",)))
        elif item.type == "binary_expression" and _text(item.child_by_field_name("operator") or item) in {"/", "%"}:
            found.append((item, "[...]", ("ArithmeticException",)))
        stack.extend(item.named_children)
    return found


def _try(node: tree_sitter.Node, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    body = node.child_by_field_name("body")
    if body is None or len(body.named_children) > 3:
        return
    handlers = _handler_names(node)
    if handlers is None:
        return
    names, first = handlers
    raisers = _raisers(body)
    if not raisers:
        return

    def caught(raises: tuple[str, ...]) -> bool:
        return any(
            handled in _lineage(raised) or raised in _lineage(handled) for raised in raises for handled in names
        )

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
            shown=f"{key}(...)", raises=raises, base=None if base in _BROAD else base, handlers=names,
        )
