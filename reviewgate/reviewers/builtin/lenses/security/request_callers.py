"""The function around a sink in a C-like file and the calls of it in the same file: what the
request chain follows up the calls (request_chain.py).

A scanner over the blanked text (javascript_source.read_js), not a parser. The function is the
innermost one holding the sink: a JavaScript or TypeScript function, method or arrow with a block
body; a Go `func` with a name (a method's receiver is not one of its parameters); a Java, C# or
Kotlin method. Its parameters are read by position, as its callers pass them. A call is the
function's name followed by its arguments, anywhere in the file but at a declaration of that name;
in another file of the change, the name it is imported under (JavaScript, TypeScript, Go) or a
call on a receiver in a file that names the method's class (Java, C#, Kotlin).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

_SERVER_LANGUAGES = frozenset({Language.JAVA, Language.CSHARP, Language.KOTLIN})
# The name a JavaScript function is declared or bound with, just before its parameters:
# `function name(`, a method's `name(`, `name = async (`, `name: function (`, with type parameters.
_JS_NAME = re.compile(
    r"(?:\bfunction\s*\*?\s*(?P<declared>[\w$]+)|(?P<bound>[\w$]+)\s*(?::[^=;\n(){}]{1,80})?[=:]\s*(?:async\s*)?"
    r"(?:function\s*\*?\s*[\w$]*)?|(?P<method>[\w$]+))\s*(?:<[^(){};]*>)?\s*(?:async\s*)?$"
)
# A block's header that is a statement's, not a method's: `if (…) {`, `for (…) {`, `catch (…) {`.
# Kotlin's `fun name(…): Type {` ends in its return type, and a lambda's `call.respond {` in a name.
_STATEMENT_HEADER = re.compile(r"\b(?:if|for|foreach|while|switch|catch|try|using|lock|synchronized)\s*\(")
_METHOD_HEADER_END = re.compile(r"\)\s*(?:throws\s+[\w.,\s]+|:\s*[\w.<>?,\s]+)?$")
_KEYWORDS = frozenset({
    "if", "for", "foreach", "while", "switch", "catch", "function", "func", "fun", "return", "await", "typeof",
    "new", "yield", "throw", "case", "else", "do", "in", "of", "void", "async", "go", "defer", "using", "lock",
})
# Words that may stand before a call (a declaration has a type or a keyword there instead).
_BEFORE_A_CALL = frozenset({"return", "await", "yield", "throw", "case", "else", "in", "of", "typeof", "new", "go",
                            "defer", "do", "not", "and", "or", "is", "as", "val", "var", "let", "const"})
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
# The class, object or record a Java, C# or Kotlin method is declared in (the last one opened before it).
_CLASS = re.compile(r"\b(?:class|object|record|struct|interface)\s+(?P<name>[A-Z]\w*)")
_GO_METHOD = re.compile(r"\bfunc\s*\([^()]*\)\s*$")
_RETURN_TYPE = re.compile(r":[^;{}()\n=]{1,120}\{")


@dataclass(frozen=True)
class Callee:
    """A function a sink is in: its name, its parameters by position ("" where one is not a plain
    name, as a destructured one), and where its parameter list opens."""

    name: str
    parameters: tuple[str, ...]
    opener: int  # the `(` of its parameter list
    body_open: int
    owner: str = ""  # the class a Java, C# or Kotlin method is declared in


def method_start(masked: str, offset: int) -> tuple[int, int]:
    """Where the header of the Java, C# or Kotlin method (or Ktor route block) holding `offset`
    starts, and its body's `{` ((0, -1) when none is found): the innermost enclosing block whose
    header ends in a parameter list and is no statement's."""
    depth, index = 0, offset
    while index > 0:
        index -= 1
        char = masked[index]
        if char == "}":
            depth += 1
        elif char == "{":
            if depth:
                depth -= 1
                continue
            before = masked[max(0, index - 400) : index]
            header = re.split(r"[;{}]", before)[-1]
            if _METHOD_HEADER_END.search(header.rstrip()) and not _STATEMENT_HEADER.search(header):
                return index - len(header), index
    return 0, -1


def enclosing_callee(source: JsSource, language: Language, offset: int) -> Callee | None:
    """The named function holding `offset` with its parameters, or None (top-level code, a
    function without a name)."""
    masked = source.masked
    if language in _SERVER_LANGUAGES:
        start, body_open = method_start(masked, offset)
        closer = masked.rfind(")", start, body_open)
        opener = source.pairs.get(closer, -1) if closer >= 0 else -1
        if body_open < 0 or opener < start:
            return None
        name = _word_before(masked, opener)
    elif language is Language.GO:
        found = _go_callee(source, offset)
        if found is None:
            return None
        name, opener, body_open = found
    else:
        from reviewgate.reviewers.builtin.languages.text_flow import functions, innermost

        function = innermost(functions(source, False), offset)
        if function is None or masked[function.header_start] != "(":
            return None
        opener, body_open = function.header_start, function.body_open
        match = _JS_NAME.search(masked, max(0, opener - 200), opener)
        name = "" if match is None else match.group("declared") or match.group("bound") or match.group("method") or ""
    if not name or name in _KEYWORDS:
        return None
    owner = ""
    if language in _SERVER_LANGUAGES:
        classes = list(_CLASS.finditer(masked, 0, opener))
        owner = classes[-1].group("name") if classes else ""
    parameters = tuple(_parameters(masked[opener + 1 : source.pairs[opener]], language))
    return Callee(name, parameters, opener, body_open, owner)


def _go_callee(source: JsSource, offset: int) -> tuple[str, int, int] | None:
    """A named Go function's name, parameters' `(` and body's `{`: `func (r *T) Name[T any](…) … {`."""
    from reviewgate.reviewers.builtin.languages.text_flow import functions, innermost

    function = innermost(functions(source, True), offset)
    if function is None:
        return None
    masked = source.masked
    index = source.skip_space(function.header_start + len("func"))
    if masked[index : index + 1] == "(" and index in source.pairs:  # a method's receiver
        index = source.skip_space(source.pairs[index] + 1)
    name = _IDENTIFIER.match(masked, index)
    if name is None:
        return None  # a function literal
    index = source.skip_space(name.end())
    if masked[index : index + 1] == "[" and index in source.pairs:  # type parameters
        index = source.skip_space(source.pairs[index] + 1)
    if masked[index : index + 1] != "(" or index not in source.pairs:
        return None
    return name.group(0), index, function.body_open


def _word_before(masked: str, offset: int) -> str:
    """The identifier just before `offset` (spaces and type parameters `<T>` skipped)."""
    head = re.sub(r"<[^<>(){};]*>\s*$", "", masked[max(0, offset - 200) : offset].rstrip())
    match = re.search(r"[A-Za-z_$][\w$]*$", head)
    return "" if match is None else match.group(0)


def _parameters(text: str, language: Language) -> Iterator[str]:
    """Each parameter's name, in order: the parameter list cut at its top-level commas."""
    for part in _top_level(text):
        part = re.sub(r"@[\w.]+(?:\([^()]*\))?|\[[^\[\]]*\]\s*(?=\w)", " ", part).split("=", 1)[0].strip()
        if not part:
            continue  # a trailing comma
        if language is Language.GO:
            name = _IDENTIFIER.match(part)  # `name Type`, or `a` of `a, b string`
        elif language in (Language.KOTLIN, Language.TYPESCRIPT, Language.JAVASCRIPT):
            head = re.split(r"\??\s*:", part, maxsplit=1)[0].strip()  # `name: Type`, `name?: Type`
            name = re.fullmatch(r"(?:\.\.\.|(?:vararg|val|var|readonly|public|private|protected)\s+)*([\w$]+)", head)
        else:  # Java and C#: the name is the last word (`final String name`, `[FromQuery] string? name`)
            name = None if part.startswith("this ") else re.search(r"([A-Za-z_]\w*)$", part)
        yield "" if name is None else name.group(name.lastindex or 0)


def _top_level(text: str) -> list[str]:
    """The text cut at commas outside brackets and type arguments (`Map<String, String> m`)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def calls_of(source: JsSource, callee: Callee, names: str | None = None) -> Iterator[int]:
    """The `(` of each call of the callee in the file, declarations of the name left out (an
    overload's `void name(String s) {`, `function name(s) {`, `func (r T) name(…)`). `names`: what
    the call is written as in another file (`byName|db\\.byName`, a pattern), the callee's own name
    (with any receiver) where not given."""
    masked = source.masked
    written = names or re.escape(callee.name)
    for match in re.finditer(rf"(?<![\w$]){written}\s*(?:<[^(){{}};]*>)?\s*\(", masked):
        opener = match.end() - 1
        closer = source.pairs.get(opener, -1)
        if (names is None and opener == callee.opener) or closer < opener:
            continue
        before = masked[max(0, match.start() - 200) : match.start()]
        word = _word_before(masked, match.start()) if before.rstrip()[-1:].isalnum() else ""
        if (word and word not in _BEFORE_A_CALL) or _GO_METHOD.search(before):
            continue  # `String name(`, `function name(`, `func name(`, `fun name(`, `func (r T) name(`
        after = source.skip_space(closer + 1)
        if masked[after : after + 1] == "{" or masked.startswith(("=>", "throws"), after) or _RETURN_TYPE.match(masked, after):
            continue  # a method's declaration: `name(s) {`, `name(s: string): Promise<void> {`
        yield opener


# JavaScript and TypeScript imports: `import d, { a as b } from "./m"`, `import * as m from "./m"`,
# `const m = require("./m")`, `const { a, b: c } = require("./m")`; read from the text (the masked
# text blanks the module's name).
_JS_IMPORT = re.compile(
    r"\bimport\s+(?P<clause>[\w$*{}\s,]+?)\s+from\s*[\"'](?P<spec>[^\"'\n]+)[\"']"
    r"|\b(?:const|let|var)\s+(?P<bound>[\w$]+|\{[^{}]*\})\s*=\s*require\(\s*[\"'](?P<required>[^\"'\n]+)[\"']\s*\)"
)
_JS_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
# Go imports: `"example.com/app/store"` or `db "example.com/app/store"`, alone or in a block.
_GO_IMPORT = re.compile(r"^\s*(?:import\s+)?(?:(?P<alias>[\w.]+)\s+)?\"(?P<path>[^\"\n]+)\"", re.MULTILINE)


def imported_calls(callee: Callee, path: str, language: Language, other_path: str, other: JsSource) -> Iterator[int]:
    """The `(` of each call in another changed file of the function `callee` that `path` declares:
    in Go from the same package (the same directory) by its name, or from another by the package's
    name (`store.ByName(…)`); in JavaScript and TypeScript by the name the file imports it under
    (`byName(…)`, `queries.byName(…)`); in Java, C# and Kotlin by a call on a receiver
    (`items.byName(…)`, `Items.byName(…)`) in a file that names the method's class. Nothing where
    the file does not import `path` or name the class."""
    name = re.escape(callee.name)
    if language in _SERVER_LANGUAGES:
        if callee.owner and re.search(rf"\b{re.escape(callee.owner)}\b", other.masked):
            yield from calls_of(other, callee, rf"(?<=\.)\s*{name}")
        return
    if language is Language.GO:
        directory = posixpath.dirname(path)
        if posixpath.dirname(other_path) == directory:
            yield from calls_of(other, callee, rf"(?:[\w$]+\s*\.\s*)?{name}")
            return
        package = posixpath.basename(directory)
        for found in _GO_IMPORT.finditer(other.text):
            if found.group("path").rstrip("/").rpartition("/")[2] == package and found.group("alias") not in ("_", "."):
                local = found.group("alias") or package
                yield from calls_of(other, callee, rf"{re.escape(local)}\s*\.\s*{name}")
        return
    written: list[str] = []
    for found in _JS_IMPORT.finditer(other.text):
        spec = found.group("spec") or found.group("required")
        if not _resolves_to(spec, other_path, path):
            continue
        clause = found.group("clause") or found.group("bound") or ""
        named = re.search(r"\{([^{}]*)\}", clause)
        for part in named.group(1).split(",") if named else ():
            words = re.split(r"\s+as\s+|\s*:\s*", part.strip())
            if words[0] == callee.name:
                written.append(re.escape(words[-1]))
        whole = re.sub(r"\{[^{}]*\}", "", clause).replace("* as", "").replace(",", " ").split()
        written += [rf"{re.escape(local)}\s*\.\s*{name}" for local in whole]
    if written:
        yield from calls_of(other, callee, "(?:" + "|".join(written) + ")")


def _resolves_to(spec: str, importer: str, path: str) -> bool:
    """Whether the relative module name `spec` written in `importer` names the file `path`
    (`./db`, `../lib/db.js` for `lib/db.ts`, `./queries` for `queries/index.js`)."""
    if not spec.startswith("."):
        return False
    target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    stem = path
    for extension in _JS_EXTENSIONS:
        if path.endswith(extension):
            stem = path[: -len(extension)]
            break
    for extension in _JS_EXTENSIONS:
        if target.endswith(extension):
            target = target[: -len(extension)]
            break
    return target == stem or f"{target}/index" == stem
