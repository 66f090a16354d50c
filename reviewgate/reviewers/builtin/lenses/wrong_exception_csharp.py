"""The wrong exception, in C#: a `try` whose only risky calls are well-known .NET calls, under catch
clauses none of which catches what those calls raise on bad input. `Convert.FromBase64String(h)`
under `catch (ArgumentException)` only (bad base64 raises `FormatException`), `int.Parse(s)` under
`catch (ArgumentNullException)` only (a null is handled, a malformed number escapes),
`JsonSerializer.Deserialize<T>(s)` under `catch (FormatException)`.

The rules of the other readers (wrong_exception_tree.py walks the tree): a table of calls and what
they raise, the part of .NET's exception hierarchy they need, a body of at most 3 statements with
nothing else that could raise what the handlers name, handlers for nothing else in the body. A
clause with a filter (`catch (X e) when (...)`) or a bare `catch` is not judged: what it catches
is decided elsewhere, or is everything. Imported only for a C# file: it loads the C# grammar.
"""

from __future__ import annotations

import re
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

_PARENT: dict[str, str] = {
    "SystemException": "Exception", "JsonException": "Exception",
    "FormatException": "SystemException", "ArithmeticException": "SystemException",
    "ArgumentException": "SystemException", "InvalidOperationException": "SystemException",
    "NullReferenceException": "SystemException", "InvalidCastException": "SystemException",
    "IndexOutOfRangeException": "SystemException", "KeyNotFoundException": "SystemException",
    "NotSupportedException": "SystemException", "IOException": "SystemException",
    "XmlException": "SystemException", "TimeoutException": "SystemException",
    "UnauthorizedAccessException": "SystemException", "OperationCanceledException": "SystemException",
    "UriFormatException": "FormatException",
    "OverflowException": "ArithmeticException", "DivideByZeroException": "ArithmeticException",
    "ArgumentNullException": "ArgumentException", "ArgumentOutOfRangeException": "ArgumentException",
    "RegexParseException": "ArgumentException", "DecoderFallbackException": "ArgumentException",
    "FileNotFoundException": "IOException", "DirectoryNotFoundException": "IOException",
    "TaskCanceledException": "OperationCanceledException",
}  # fmt: skip
_BROAD = frozenset({"Exception", "SystemException"})
_NUMBERS = ("int", "long", "short", "byte", "uint", "ulong", "ushort", "sbyte", "decimal", "double", "float",
            "Int32", "Int64", "Int16", "UInt32", "UInt64", "Byte", "Decimal", "Double", "Single")  # fmt: skip
# What each call raises on bad input, by its text without arguments or type arguments.
_RAISES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys([f"{number}.Parse" for number in _NUMBERS], ("FormatException", "OverflowException")),
    **dict.fromkeys(
        ("Convert.ToInt32", "Convert.ToInt64", "Convert.ToInt16", "Convert.ToDecimal", "Convert.ToDouble"),
        ("FormatException", "OverflowException"),
    ),
    **dict.fromkeys(
        ("Guid.Parse", "DateTime.Parse", "DateTime.ParseExact", "DateTimeOffset.Parse", "DateTimeOffset.ParseExact",
         "TimeSpan.Parse", "DateOnly.Parse", "TimeOnly.Parse", "Convert.FromBase64String", "Convert.FromHexString",
         "IPAddress.Parse", "bool.Parse", "Boolean.Parse", "new Guid"),
        ("FormatException",),
    ),
    "new Uri": ("UriFormatException",),
    **dict.fromkeys(("JsonSerializer.Deserialize", "JsonDocument.Parse", "JsonNode.Parse"), ("JsonException",)),
    **dict.fromkeys(("XDocument.Parse", "XElement.Parse"), ("XmlException",)),
    **dict.fromkeys(("Enum.Parse", "new Regex"), ("ArgumentException",)),
}  # fmt: skip
_QUIET_STATIC = frozenset(
    {"Math.Max", "Math.Min", "Math.Abs", "string.IsNullOrEmpty", "string.IsNullOrWhiteSpace", "String.IsNullOrEmpty",
     "String.IsNullOrWhiteSpace", "Encoding.UTF8.GetString", "Encoding.UTF8.GetBytes", "Encoding.ASCII.GetString",
     "string.Join", "string.Concat"}
)  # fmt: skip
# Methods that raise nothing but a NullReferenceException on a null receiver.
_QUIET_METHODS = frozenset(
    {"Trim", "TrimStart", "TrimEnd", "ToLower", "ToUpper", "ToLowerInvariant", "ToUpperInvariant", "ToString",
     "Equals", "StartsWith", "EndsWith", "Contains", "GetHashCode"}
)  # fmt: skip
_OPAQUE_NODES = frozenset(
    {"throw_statement", "throw_expression", "try_statement", "using_statement", "lock_statement", "await_expression",
     "yield_statement", "checked_expression", "checked_statement"}
)  # fmt: skip


def csharp_uncaught_calls(text: str, path: str, added: dict[int, str]) -> Iterator[UncaughtCall]:
    yield from uncaught_calls(_CSHARP, parse("csharp", text, path), added)


def _catches(node: tree_sitter.Node) -> Catches | None:
    return _HIERARCHY.catches(node.child_by_field_name("body"), children(node, "catch_clause"), _types)


def _types(clause: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    declaration = next(iter(children(clause, "catch_declaration")), None)
    if declaration is None or children(clause, "catch_filter_clause"):
        return None  # a bare `catch` catches everything; a filter decides at run time
    kind = declaration.child_by_field_name("type")
    return [kind] if kind is not None else None


def _key(callee: tree_sitter.Node) -> tuple[str, str] | None:
    """(`Type.Method` as the table knows it, the method) of a member call, or None."""
    if callee.type != "member_access_expression":
        return None
    name = callee.child_by_field_name("name")
    receiver = callee.child_by_field_name("expression")
    if name is None or receiver is None:
        return None
    method = node_text(name.named_children[0] if name.type == "generic_name" and name.named_children else name)
    owner = re.sub(r"^(?:global::)?System\.(?:[A-Z]\w*\.)*?(?=[A-Z]\w*$)", "", node_text(receiver))
    return f"{owner}.{method}", method


def _step(item: tree_sitter.Node) -> Step:
    if item.type in {"lambda_expression", "anonymous_method_expression", "local_function_statement"}:
        return SKIP
    if item.type in _OPAQUE_NODES:
        return OPAQUE
    if item.type == "invocation_expression":
        callee = item.child_by_field_name("function")
        found = _key(callee) if callee is not None else None
        if found is None:
            return OPAQUE
        key, method = found
        if key in _RAISES:
            return key, _RAISES[key]
        if key in _QUIET_STATIC or method.startswith("TryParse") or method == "TryFromBase64String":
            return None
        return (STEP_KEY, ("NullReferenceException",)) if method in _QUIET_METHODS else OPAQUE
    if item.type == "object_creation_expression":
        kind = item.child_by_field_name("type")
        key = f"new {node_text(kind)}" if kind is not None else ""
        return (key, _RAISES[key]) if key in _RAISES else OPAQUE
    if item.type == "element_access_expression":
        return STEP_KEY, ("IndexOutOfRangeException", "KeyNotFoundException", "ArgumentOutOfRangeException")
    if item.type == "cast_expression":
        return STEP_KEY, ("InvalidCastException",)
    if item.type == "binary_expression" and arithmetic(item) is not None:
        return STEP_KEY, ("DivideByZeroException",)
    return None


_HIERARCHY = Hierarchy(_PARENT, _BROAD)
_CSHARP = Grammar("try_statement", _catches, _step, _HIERARCHY)
