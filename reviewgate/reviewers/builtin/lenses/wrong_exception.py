"""A handler that catches the wrong exception for the call it guards (Python here; Java and
Kotlin in wrong_exception_jvm.py, C# in wrong_exception_csharp.py: the same rules and message): `try:
base64.b64decode(x)` under `except UnicodeDecodeError` only (it raises `binascii.Error`, a
`ValueError`), `int(x)` under `except TypeError` only (a string that is not a number raises
`ValueError`), `json.loads(x)` under `except KeyError` only, `host.encode("idna")` under `except
UnicodeEncodeError` (the IDNA codec raises `UnicodeError` itself, which a handler of its subclass
does not catch), `names.index(x)` under `except IndexError` (it raises `ValueError`).

A small table of well-known calls and what they raise on bad input, and the standard exception
hierarchy: a finding only when every handler of the `try` names a known exception and none of
them catches what one of the guarded calls raises. The `try` body must hold nothing else that
could raise what the handlers name: only calls of the table, subscripts, and calls known not to
raise (`str`, `len`, `.strip()`...); anything else might be what the handler is for. And the
handlers must be for nothing else in the body (a handler of `KeyError` around `int(d["port"])` is
about the lookup; the `ValueError` may be meant to fail loudly), or only for a codec step:
`b64decode(x).decode()` under `except UnicodeDecodeError` lets the `binascii.Error` through.
A handler of `AttributeError` around a method call is for a receiver without that method.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

WRONG_EXCEPTION = Rule(
    id="correctness/wrong-exception",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Handler catches an exception the guarded call never raises",
    full=(
        "Every handler of the try names exceptions the one call it guards does not raise, in Python "
        "(base64 decoding raises `binascii.Error`, not `UnicodeError`), Java and Kotlin "
        "(`Integer.parseInt` and `toInt()` raise `NumberFormatException`, not `NullPointerException`) "
        "and C# (`Convert.FromBase64String` raises `FormatException`, not `ArgumentException`): the "
        "failure it was written for escapes it."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "Python: a `try` of up to 3 statements whose handlers all name known exceptions and none "
        "catches what a guarded call raises on bad input (a table: "
        "`base64.b64decode`/`binascii.a2b_*` → `binascii.Error`, `int`/`float`/`uuid.UUID`/`strptime` "
        "→ `ValueError`, `json.loads` → `JSONDecodeError` (and `UnicodeDecodeError` for bytes it "
        "decodes), `open`/`os.*` → `OSError`, `.decode()` → "
        "`UnicodeDecodeError`, `.encode(\"idna\")` → `UnicodeError` itself (a handler of its subclass "
        "`UnicodeEncodeError` does not catch it), `urlsplit`/`urlparse`/`.index()`/`.relative_to()` → "
        "`ValueError`, `yaml.safe_load` → `yaml.YAMLError`, `ZoneInfo` → `ZoneInfoNotFoundError` …): "
        "`b64decode(x).decode()` under `except UnicodeDecodeError`, `int(x)` under `except TypeError`, "
        "`json.loads` under `except KeyError`, `host.encode(\"idna\")` under `except UnicodeEncodeError`. Java: the same for a `try` "
        "(not a try-with-resources) and its `catch` clauses (multi-catch too), with a table of JDK "
        "calls (`Integer.parseInt`/`Integer.valueOf`/`Long.parseLong`/`new BigDecimal` → "
        "`NumberFormatException`, `UUID.fromString`/`Base64.getDecoder().decode`/`URI.create`/"
        "`IDN.toASCII` → `IllegalArgumentException`, `new URL` → `MalformedURLException`, "
        "`InetAddress.getByName` → `UnknownHostException`, "
        "`LocalDate.parse`/`Instant.parse`/`Duration.parse` → `DateTimeParseException`, "
        "`Pattern.compile` → `PatternSyntaxException` …) and their hierarchy (`NumberFormatException` "
        "< `IllegalArgumentException` < `RuntimeException`): `Integer.parseInt(s)` under `catch "
        "(NullPointerException e)`, `new String(Base64.getDecoder().decode(h), \"UTF-8\")` under `catch "
        "(UnsupportedEncodingException e)`. Kotlin: the same JDK table and hierarchy for a `try` "
        "expression, and Kotlin's conversions of a string (`toInt()`, `toLong()`, `toBigDecimal()` … "
        "→ `NumberFormatException`): `value.toInt()` under `catch (e: IllegalStateException)`. C#: "
        "the same with .NET's calls and hierarchy (`int.Parse`/`Convert.ToInt32` → `FormatException`, "
        "`OverflowException`; `Convert.FromBase64String`/`Guid.Parse`/`DateTime.Parse` → "
        "`FormatException`; `new Uri` → `UriFormatException`; `JsonSerializer.Deserialize` → "
        "`JsonException` …): `Convert.FromBase64String(h)` under `catch (ArgumentException)`, "
        "`int.Parse(s)` under `catch (ArgumentNullException)`"
    ),
    not_on=(
        "the right exception or its base class (`ValueError` for `binascii.Error`); broad or unknown "
        "handlers; a body with any other call (it may be what the handler is for); a handler for a "
        "lookup in the body (`int(d[\"port\"])` under `except KeyError`); `AttributeError` around a "
        "method call (`text.encode()` where `text` may be bytes: duck typing); a handler that returns "
        "`NotImplemented` (an operator declining an operand); Java, Kotlin and C#: the "
        "exception, a supertype (`IllegalArgumentException` for `parseInt`), a multi-catch naming it, "
        "`Exception`/`RuntimeException`/`Throwable` (C#: `Exception`, `SystemException`, a bare "
        "`catch`, a clause with a `when` filter); a handler for another step of the body (an array "
        "index, a cast, a division, a method of a null receiver: `parseInt(s.trim())` under "
        "`NullPointerException`); any other call or constructor in the body"
    ),
    fires=(
        Example(
            file=File("app/auth.py", "python", """\
import base64


def credentials(header):
    try:
        decoded = base64.b64decode(header).decode("utf-8")
    except UnicodeDecodeError:
        return None
    user, _, password = decoded.partition(":")
    return user, password
"""),
        ),
        Example(
            file=File("src/main/java/app/BasicAuth.java", "java", """\
package app;

import java.io.UnsupportedEncodingException;
import java.util.Base64;

public final class BasicAuth {
    public static String credentials(String header) {
        try {
            return new String(Base64.getDecoder().decode(header), "UTF-8");
        } catch (UnsupportedEncodingException e) {
            return null;
        }
    }
}
"""),
            caption=(
                "In Java (and Kotlin, which shares the JDK's calls and exceptions) the same table "
                "holds JDK calls: a bad base64 header raises `IllegalArgumentException`, which the "
                "handler written for the charset lets through. C# reads the same way with .NET's "
                "calls and exceptions (`Convert.FromBase64String` raises `FormatException`, which "
                "`catch (ArgumentException)` lets through)."
            ),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/auth.py", "python", """\
import base64
import binascii


def credentials(header):
    try:
        decoded = base64.b64decode(header).decode("utf-8")
    except (UnicodeDecodeError, binascii.Error):
        return None
    user, _, password = decoded.partition(":")
    return user, password
"""),
        ),
        Example(
            file=File("src/main/java/app/BasicAuth.java", "java", """\
package app;

import java.io.UnsupportedEncodingException;
import java.util.Base64;

public final class BasicAuth {
    public static String credentials(String header) {
        try {
            return new String(Base64.getDecoder().decode(header), "UTF-8");
        } catch (UnsupportedEncodingException | IllegalArgumentException e) {
            return null;
        }
    }

    public static int port(String value) {
        try {
            return Integer.parseInt(value);
        } catch (IllegalArgumentException e) {
            return 8080;
        }
    }
}
"""),
            caption=(
                "The exception itself, a supertype of it (`IllegalArgumentException` for "
                "`Integer.parseInt`), or a multi-catch naming it."
            ),
        ),
    ),
    by_record=True,
    record=Record(
        findings=11,
        holding=5,
        where=(
            "the whole trees of the tuning half's 26 projects and of 123 PyPI and npm packages (25 on 2026-12-06, "
            "98 on 2026-12-07): 11, 5 **hold**: werkzeug `urls.py:191, 200`, `decode(\"idna\")` under `except "
            "UnicodeDecodeError` (the IDNA codec raises `UnicodeError`: `b\"xn--a\"` escapes); celery "
            "`saferepr.py:112`, `val.encode('utf-8')` of bytes under `except UnicodeDecodeError`; sqlalchemy "
            "`url.py:224`, `int(port)` under `except TypeError` (a string port escapes as `ValueError`); "
            "jsonschema `_keywords.py:175`, `int(quotient)` under `except OverflowError` (`json.loads(\"NaN\")` "
            "against `{\"multipleOf\": 0.1}` raises `ValueError`, run). Do not: a YAML handler in falcon's tests; "
            "feedparser `encodings.py:183`, `.encode('utf-8')` of text a codec decoded (it always encodes); "
            "docutils `test_images.py:43`, `int(None)`; boltons `statsutils.py:615` (a string `int()` refuses, "
            "the fallback refuses too) and `strutils.py:436` (an outer `try` catches the `UnicodeEncodeError`); "
            "configobj `__init__.py:174` (a builder nothing calls). Not one since: `json.loads` of bytes "
            "(scrapy), `AttributeError` around `text.encode()` (falcon, 3), `return NotImplemented` "
            "(python-dateutil `relativedelta.py:498, 570`). Not one by design: an alias "
            "(`json.decoder.JSONDecodeError`), subclasses (`os.stat` under `FileNotFoundError`)"
        ),
    ),
)

RULES = (WRONG_EXCEPTION,)
RULE_WRONG_EXCEPTION = WRONG_EXCEPTION.id


_LANGUAGES = frozenset({Language.PYTHON, Language.JAVA, Language.KOTLIN, Language.CSHARP})
_NEEDLES = ("except", "catch")

# Each exception's parent, up to BaseException (aliases point at what they name).
_PARENT: dict[str, str] = {
    "Exception": "BaseException",
    "ValueError": "Exception", "TypeError": "Exception", "LookupError": "Exception", "OSError": "Exception",
    "ArithmeticError": "Exception", "AttributeError": "Exception", "StopIteration": "Exception",
    "ImportError": "Exception", "RuntimeError": "Exception", "EOFError": "Exception", "NameError": "Exception",
    "AssertionError": "Exception",
    "KeyError": "LookupError", "IndexError": "LookupError",
    "UnicodeError": "ValueError", "UnicodeDecodeError": "UnicodeError", "UnicodeEncodeError": "UnicodeError",
    "binascii.Error": "ValueError", "json.JSONDecodeError": "ValueError", "JSONDecodeError": "ValueError",
    "json.decoder.JSONDecodeError": "ValueError", "tomllib.TOMLDecodeError": "ValueError",
    "decimal.InvalidOperation": "decimal.DecimalException", "InvalidOperation": "decimal.DecimalException",
    "decimal.DecimalException": "ArithmeticError", "ZeroDivisionError": "ArithmeticError",
    "OverflowError": "ArithmeticError",
    "FileNotFoundError": "OSError", "PermissionError": "OSError", "IsADirectoryError": "OSError",
    "NotADirectoryError": "OSError", "FileExistsError": "OSError", "TimeoutError": "OSError",
    "ConnectionError": "OSError", "IOError": "OSError", "EnvironmentError": "OSError", "socket.error": "OSError",
    "select.error": "OSError", "simplejson.JSONDecodeError": "ValueError", "TOMLDecodeError": "ValueError",
    "ModuleNotFoundError": "ImportError", "NotImplementedError": "RuntimeError", "RecursionError": "RuntimeError",
    "struct.error": "Exception", "zlib.error": "Exception", "yaml.YAMLError": "Exception",
    "zoneinfo.ZoneInfoNotFoundError": "KeyError", "ZoneInfoNotFoundError": "KeyError", "YAMLError": "Exception",
}  # fmt: skip
# What each call raises on bad input (the exceptions a handler around it is for).
_RAISES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("base64.b64decode", "base64.urlsafe_b64decode", "base64.standard_b64decode", "base64.b32decode",
         "base64.b16decode", "binascii.a2b_base64", "binascii.a2b_hex", "binascii.unhexlify", "b64decode",
         "urlsafe_b64decode", "a2b_base64", "unhexlify"),
        ("binascii.Error",),
    ),
    **dict.fromkeys(
        ("int", "float", "bytes.fromhex", "float.fromhex", "uuid.UUID", "UUID", "ipaddress.ip_address",
         "ipaddress.ip_network", "ipaddress.ip_interface", "ip_address", "ip_network", "datetime.strptime",
         "datetime.datetime.strptime", "datetime.fromisoformat", "datetime.datetime.fromisoformat",
         "date.fromisoformat", "datetime.date.fromisoformat", "time.strptime", "shlex.split",
         "base64.b85decode", "base64.a85decode", "urlsplit", "urlparse", "urllib.parse.urlsplit",
         "urllib.parse.urlparse", "parse.urlsplit", "parse.urlparse", "ipaddress.IPv4Address", "ipaddress.IPv6Address",
         "ipaddress.ip_address", "fractions.Fraction", "Fraction", "email.utils.parsedate_to_datetime",
         "parsedate_to_datetime", "hashlib.new", ".index", ".relative_to", "date.fromtimestamp",
         "datetime.fromtimestamp", "datetime.datetime.fromtimestamp"),
        ("ValueError",),
    ),
    # The IDNA codec raises `UnicodeError` itself (a label empty or over 63 characters), which a
    # handler of `UnicodeEncodeError` or `UnicodeDecodeError`, its subclasses, does not catch.
    ".encode(idna)": ("UnicodeError",),
    ".decode(idna)": ("UnicodeError",),
    **dict.fromkeys(("yaml.safe_load", "yaml.load", "yaml.safe_load_all", "yaml.full_load"), ("yaml.YAMLError",)),
    **dict.fromkeys(("zoneinfo.ZoneInfo", "ZoneInfo"), ("zoneinfo.ZoneInfoNotFoundError", "ValueError")),
    # Of bytes (or a binary file) they decode first: a bad encoding raises UnicodeDecodeError.
    **dict.fromkeys(("json.loads", "json.load"), ("json.JSONDecodeError", "UnicodeDecodeError")),
    **dict.fromkeys(("tomllib.loads", "tomllib.load"), ("tomllib.TOMLDecodeError",)),
    **dict.fromkeys(("decimal.Decimal", "Decimal"), ("decimal.InvalidOperation",)),
    ".decode": ("UnicodeDecodeError",),
    ".encode": ("UnicodeEncodeError",),
    **dict.fromkeys(
        ("open", "os.remove", "os.unlink", "os.rmdir", "os.mkdir", "os.makedirs", "os.rename", "os.replace",
         "os.stat", "os.listdir", "os.scandir", "shutil.rmtree", "shutil.copy", "shutil.copyfile", "shutil.move"),
        ("OSError",),
    ),
    "next": ("StopIteration",),
    **dict.fromkeys(("struct.unpack", "struct.unpack_from", "struct.pack"), ("struct.error",)),
    "zlib.decompress": ("zlib.error",),
    **dict.fromkeys(("importlib.import_module", "import_module"), ("ImportError",)),
}  # fmt: skip
# Calls that raise nothing a handler would be written for.
_QUIET = frozenset(
    {"str", "len", "repr", "bool", "isinstance", "print", "list", "tuple", "dict", "set", "frozenset", "sorted",
     "enumerate", "zip", "range", "reversed", ".strip", ".lstrip", ".rstrip", ".lower", ".upper", ".casefold",
     ".split", ".rsplit", ".splitlines", ".replace", ".startswith", ".endswith", ".join", ".get", ".items",
     ".keys", ".values", ".append", ".isdigit", ".isnumeric"}
)  # fmt: skip
_SUBSCRIPT_RAISES = ("KeyError", "IndexError", "TypeError")
# Calls whose exception is the class itself: a handler of a subclass of it does not catch it.
_EXACT = frozenset({".encode(idna)", ".decode(idna)"})
# Methods of the table known by their name alone (`text.index(x)`, `path.relative_to(root)`).
_METHODS = frozenset({".decode", ".encode", ".index", ".relative_to"})


# Other names of the same class.
_ALIASES = {
    "json.decoder.JSONDecodeError": "json.JSONDecodeError", "JSONDecodeError": "json.JSONDecodeError",
    "simplejson.JSONDecodeError": "json.JSONDecodeError", "IOError": "OSError", "EnvironmentError": "OSError",
    "socket.error": "OSError", "select.error": "OSError", "InvalidOperation": "decimal.InvalidOperation",
    "TOMLDecodeError": "tomllib.TOMLDecodeError", "DecimalException": "decimal.DecimalException",
    "ZoneInfoNotFoundError": "zoneinfo.ZoneInfoNotFoundError",
    "YAMLError": "yaml.YAMLError",
}  # fmt: skip


def _lineage(name: str) -> list[str]:
    found = [_ALIASES.get(name, name)]
    while found[-1] in _PARENT:
        found.append(_PARENT[found[-1]])
    return found


def _key(call: ast.Call) -> str:
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    name = call_name(call)
    if isinstance(call.func, ast.Attribute) and f".{call.func.attr}" in {*_METHODS, *_QUIET}:
        codec = call.args[0] if call.args else next((item.value for item in call.keywords if item.arg == "encoding"), None)
        if call.func.attr in {"encode", "decode"} and isinstance(codec, ast.Constant) and codec.value == "idna":
            return f".{call.func.attr}(idna)"
        if name not in _RAISES:
            return f".{call.func.attr}"
    return name


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    for node in nodes_of(tree, ast.Try):
        yield from _try(node, text, path, added)


def _tree(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    # Their own modules, imported for a file of their languages only: they load the grammars.
    if language is Language.CSHARP:
        from reviewgate.reviewers.builtin.lenses.wrong_exception_csharp import csharp_uncaught_calls

        uncaught = csharp_uncaught_calls(text, path, added)
    else:
        from reviewgate.reviewers.builtin.lenses.wrong_exception_jvm import java_uncaught_calls, kotlin_uncaught_calls

        uncaught = (kotlin_uncaught_calls if language is Language.KOTLIN else java_uncaught_calls)(text, path, added)
    return (wrong_exception_finding(path=path, text=text, **call._asdict()) for call in uncaught)


def _handler_names(node: ast.Try) -> list[str] | None:
    """The exception each handler names, or None when one is bare, broad or not in the table."""
    from reviewgate.reviewers.builtin.languages.python_flow import dotted

    names: list[str] = []
    for handler in node.handlers:
        if handler.type is None:
            return None
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for item in types:
            name = dotted(item)
            if name not in _PARENT or name in {"Exception", "BaseException"}:
                return None
            names.append(name)
    return names


def _raisers(node: ast.Try) -> list[tuple[ast.AST, str, tuple[str, ...]]] | None:
    """(node, call, what it raises) for the body's table calls and subscripts; None when the
    body holds a call that is neither in the table nor known to be quiet."""
    found: list[tuple[ast.AST, str, tuple[str, ...]]] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(item, (ast.Raise, ast.Assert, ast.With, ast.AsyncWith, ast.Try, ast.Await, ast.Yield)):
            return None  # raises, or runs code of its own
        if isinstance(item, ast.Call):
            key = _key(item)
            if key in _RAISES:
                found.append((item, key, _RAISES[key]))
            elif key not in _QUIET:
                return None
        elif isinstance(item, ast.Subscript) and isinstance(item.ctx, ast.Load):
            found.append((item, "[...]", _SUBSCRIPT_RAISES))
        stack.extend(ast.iter_child_nodes(item))
    return found


def _try(node: ast.Try, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    if len(node.body) > 3:
        return
    names = _handler_names(node)
    if not names:
        return
    raisers = _raisers(node)
    if not raisers:
        return
    def caught(raises: tuple[str, ...], exact: bool = False) -> bool:
        """A handler of the exception, of a base of it, or of a subclass (`FileNotFoundError`
        around `os.stat`: the other `OSError`s are let through on purpose), unless the call raises
        the class itself (`exact`: the IDNA codec's `UnicodeError`)."""
        return any(
            _lineage(handled)[0] in _lineage(raised) or (not exact and _lineage(raised)[0] in _lineage(handled))
            for raised in raises
            for handled in names
        )

    # What the handlers are for: nothing the body raises, or only a codec step (`.decode()`)
    # beside the call whose failure escapes. A handler that catches a lookup or another call's
    # error is about that one; the call it lets through may fail loudly by design.
    explained = {key for _call, key, raises in raisers if caught(raises, key in _EXACT)}
    if not explained <= {".decode", ".encode"}:
        return
    # `AttributeError` around a method call is for a receiver without the method (duck typing:
    # `text.encode()` where text may be bytes already), not for what the method raises.
    if "AttributeError" in names and any(key.startswith(".") for _call, key, _raises in raisers):
        return
    # `return NotImplemented` (dateutil `relativedelta.__mul__`): the operator declines another type,
    # and an operand that fails converting (`float("abc")`) fails the operation either way.
    if all(ast.unparse(handler.body[0]) == "return NotImplemented" for handler in node.handlers):
        return
    for call, key, raises in sorted(raisers, key=lambda item: item[1] not in _EXACT):
        if key == "[...]" or caught(raises, key in _EXACT):
            continue
        handler = next(item for item in node.handlers if item.type is not None)
        lines = {handler.lineno, getattr(call, "lineno", 0)}
        if not lines & set(added):
            continue
        base = _lineage(raises[0])[1]
        yield wrong_exception_finding(
            path=path, text=text, line=handler.lineno, try_line=node.lineno, call_line=getattr(call, "lineno", node.lineno),
            shown=(f'{key[1:].split("(")[0]}("idna")' if key in _EXACT
                   else key.lstrip(".") + "()" if key.startswith(".") else f"{key}(...)"), raises=raises,
            base=base if base != "Exception" else None, handlers=names,
        )


def wrong_exception_finding(
    *, path: str, text: str, line: int, try_line: int, call_line: int, shown: str, raises: tuple[str, ...],
    base: str | None, handlers: list[str],
) -> Finding:
    """The finding of every language's reader: the call, what it raises (and the base class that
    would catch it too, when it says more than `Exception`), and what the handlers name."""
    code = code_line(text, line)
    raised = ", ".join(f"`{item}`" for item in raises)
    chain = f" ({'an' if base[0] in 'AEIOU' else 'a'} `{base}`)" if base else ""
    named = ", ".join(f"`{item}`" for item in handlers)
    return bug_finding(
        rule=RULE_WRONG_EXCEPTION,
        category="swallowed-failure",
        title=f"The handler does not catch what `{shown}` raises",
        body=(
            f"{matched(code)}: the `try` at line {try_line} guards `{shown}` (line {call_line}), which raises "
            f"{raised}{chain} on bad input; the handler names {named}, none of which catches it: a bad value "
            f"escapes the handler. Catch {raised}" + (f" (or `{base}`)" if base else "") + " as well."
        ),
        path=path,
        line=line,
        code=code,
    )


WRONG_EXCEPTION_LENS = TwoReaderLens(RULE_WRONG_EXCEPTION, _LANGUAGES, _NEEDLES, _python, _tree)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (WRONG_EXCEPTION_LENS,)
