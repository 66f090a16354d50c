"""Light data flow inside one JavaScript, TypeScript or Go function, read from the source with
strings and comments blanked (js_source.read_js; Go's comments, strings and raw strings have the
same shape): the functions' bodies, and which names hold a value that came from a source through
simple assignments, destructuring, `for ... of/in/range`, array callbacks, concatenation and
wrapper calls.

A scanner, not a parser: a name counts as tainted from the assignment on, within the body of the
function that assigns it (nested functions included); a sanitizer call's argument is not a use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reviewgate.reviewers.builtin.languages.expression_spans import closing_parenthesis
from reviewgate.reviewers.builtin.languages.javascript_source import JsSource, read_js


@dataclass(frozen=True)
class Function:
    header_start: int  # the parameters' `(` (or the single parameter of an arrow)
    body_open: int  # the body's `{`
    body_close: int

    def holds(self, offset: int) -> bool:
        return self.body_open < offset < self.body_close


@dataclass(frozen=True)
class Taint:
    name: str
    source: str  # the source expression, as written (shortened)
    line: int
    offset: int  # where the assignment starts
    value: tuple[int, int] = (0, 0)  # the span of the value assigned


# Request input the sender chooses: query, params, body, headers, cookies (Express, Koa, the
# browser's URL), and Go's net/http, gin, echo, chi and gorilla/mux. Each alternative starts with
# a literal, so the scan for them is fast; a name that only ends like one (`myreq.query`) is
# told by the character before it (`find_source`).
_JS_REQUEST = (
    r"(?:req|request)\s*\.\s*(?:query|params|body|headers|cookies|signedCookies)\b"
    r"|(?:req|request)\.(?:get|header|param)\s*\("
    r"|(?:ctx|context)\.(?:query|params|request\.(?:query|body))\b"
    r"|searchParams\s*\.\s*get\s*\(|new\s+URLSearchParams\s*\(|location\s*\.\s*(?:search|hash)\b"
)


_GO_REQUEST = (
    r"URL\.Query\(\)|URL\.RawQuery\b|\.(?:FormValue|PostFormValue|Referer)\(|\.(?:Form|PostForm|Header)\.Get\("
    r"|(?:c|ctx)\.(?:Query|DefaultQuery|Param|Params|PostForm|GetHeader|QueryParam|FormValue|Cookies)\(|chi\.URLParam\(|mux\.Vars\("
)


@functools.cache
def request_sources(go: bool, extra: str = "") -> re.Pattern[str]:
    """The request-input pattern of the language, with the lens's own sources after it."""
    return re.compile((_GO_REQUEST if go else _JS_REQUEST) + (f"|{extra}" if extra else ""))


def find_source(pattern: re.Pattern[str], text: str, start: int = 0, end: int | None = None) -> re.Match[str] | None:
    """The first match of a source pattern that starts a name (not `myreq.query`)."""
    for match in pattern.finditer(text, start, len(text) if end is None else end):
        first = match.start()
        if first == 0 or not text[first].isalnum() or not (text[first - 1].isalnum() or text[first - 1] in "_$"):
            return match
    return None


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """Compiled on first use: only a change with JS/TS or Go files needs them."""
    return {
        "return_type": re.compile(r"\s*:\s*[^{};=()]{1,120}"),
        "go_func": re.compile(r"\bfunc\b"),
        "declaration": re.compile(
            r"(?<![\w$.])(?:const|let|var)\s+(?P<target>[\w$]+|\{[^{}]*\}|\[[^\[\]]*\])\s*(?::[^=;\n]{1,80})?=(?![=>])"
        ),
        # `+=` too: text appended from a source holds it (`sql += " AND name = '" + req.query.name`).
        "assignment": re.compile(r"(?:^|[;{}\n])[ \t]*(?P<target>[\w$]+)\s*\+?=(?![=>])"),
        "go_assignment": re.compile(
            r"(?:^|[;{}\n])[ \t]*(?:(?:if|switch|var)\s+)?(?P<target>[\w]+(?:\s*,\s*[\w]+)*)\s*(?::|\+)?=(?!=)"
        ),
        "for_of": re.compile(
            r"\bfor\s*(?:await\s*)?\(\s*(?:const|let|var)\s+(?P<target>[\w$]+|\{[^{}]*\}|\[[^\[\]]*\])\s+(?:of|in)\b"
        ),
        "go_range": re.compile(r"\bfor\s+(?P<target>[\w]+(?:\s*,\s*[\w]+)?)\s*:?=\s*range\b"),
        "callback": re.compile(
            r"\.\s*(?:forEach|map|flatMap|filter|reduce|some|every|find)\s*\(\s*(?:async\s*)?"
            r"(?:\((?P<params>[^()]*)\)|(?P<param>[\w$]+))\s*(?::[^=]{1,40})?=>"
        ),
        "array_from": re.compile(
            r"\bArray\.from\(\s*(?P<value>[^,()]+(?:\([^()]*\))?)\s*,\s*(?:async\s*)?"
            r"(?:\((?P<params>[^()]*)\)|(?P<param>[\w$]+))\s*(?::[^=]{1,40})?=>"
        ),
        "names": re.compile(r"[A-Za-z_$][\w$]*"),
        "chain": re.compile(r"(?:new\s+)?[\w$]+(?:\s*\.\s*[\w$]+|\(\)|\([^()\n]{0,60}\))*"),
    }


_CONTROL = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "typeof", "await", "function"})


_DECLARATION_WORDS = frozenset({"const", "let", "var", "of", "in", "async", "await", "new", "typeof"})


def functions(source: JsSource, go: bool) -> list[Function]:
    """Every function body, method and arrow with a block body, outermost first; read once per
    file for all the lenses that ask."""
    return _functions_of(source.text, go)


@functools.lru_cache(maxsize=16)
def _functions_of(text: str, go: bool) -> list[Function]:
    source = read_js(text)
    found = _go_functions(source) if go else _js_functions(source)
    return sorted(found, key=lambda function: function.body_open)


def _parameters_before(source: JsSource, end: int) -> int | None:
    """The `(` of the parameter list that ends at or before `end` (the last character before a
    body's `{` or an arrow's `=>`), past a TypeScript return type (`): Promise<void> {`)."""
    masked = source.masked
    if end >= 0 and masked[end] == ")":
        return source.pairs.get(end)
    closing = masked.rfind(")", max(0, end - 120), end)
    if closing < 0 or not _patterns()["return_type"].fullmatch(masked, closing + 1, end + 1):
        return None
    return source.pairs.get(closing)


def _word_before(source: JsSource, end: int) -> tuple[int, str]:
    """The word that ends at or before `end` (spaces skipped), with where it starts."""
    masked = source.masked
    last = source.skip_space_back(end)
    start = last
    while start >= 0 and (masked[start].isalnum() or masked[start] in "_$"):
        start -= 1
    return start + 1, masked[start + 1 : last + 1]


def _js_functions(source: JsSource) -> Iterator[Function]:
    masked = source.masked
    for opener, closer in source.pairs.items():
        if masked[opener] != "{" or closer < opener:
            continue
        end = source.skip_space_back(opener - 1)
        if end >= 1 and masked[end - 1 : end + 1] == "=>":
            before_arrow = source.skip_space_back(end - 2)
            parameters = _parameters_before(source, before_arrow)
            if parameters is not None:
                yield Function(parameters, opener, closer)
            else:  # one parameter without parentheses: `item => {`
                start, _word = _word_before(source, before_arrow)
                yield Function(start if _word else end - 1, opener, closer)
            continue
        parameters = _parameters_before(source, end)
        if parameters is None:
            continue
        if _word_before(source, parameters - 1)[1] in _CONTROL - {"function"}:
            continue
        yield Function(parameters, opener, closer)


def _go_functions(source: JsSource) -> Iterator[Function]:
    """`func` declarations and literals: the body is the first `{` outside brackets on the line
    of the signature (Go puts it there), past `interface{}` and `struct{...}` types."""
    masked = source.masked
    for keyword in _patterns()["go_func"].finditer(masked):
        index = keyword.end()
        while index < len(masked) and masked[index] not in "\n;":
            char = masked[index]
            if char in "([" and index in source.pairs:
                index = source.pairs[index] + 1
                continue
            if char == "{" and index in source.pairs:
                if masked[max(0, index - 10) : index].rstrip().endswith(("interface", "struct")):
                    index = source.pairs[index] + 1
                    continue
                yield Function(keyword.start(), index, source.pairs[index])
                break
            index += 1


def code_view(source: JsSource, go: bool) -> str:
    """The blanked text with the code inside JS/TS template literals' `${...}` put back: where a
    template's values come from is what a sink's check needs."""
    if go or "${" not in source.text:
        return source.masked
    text, view = source.text, list(source.masked)
    index = text.find("${")
    while index >= 0:
        if source.masked[index] == " ":  # inside a template literal, blanked
            depth, end = 0, index + 1
            while end < len(text):
                depth += text[end] == "{"
                depth -= text[end] == "}"
                if depth == 0:
                    break
                end += 1
            view[index : end + 1] = text[index : end + 1]
            index = text.find("${", end)
        else:
            index = text.find("${", index + 2)
    return "".join(view)


def innermost(functions_: Sequence[Function], offset: int) -> Function | None:
    inside = [function for function in functions_ if function.holds(offset)]
    return max(inside, key=lambda function: function.body_open) if inside else None


def statement_end(source: JsSource, start: int, limit: int) -> int:
    """Where the statement or expression starting at `start` ends: a `;`, `,` or closing bracket
    at its own depth, or a line end that the next line does not continue."""
    masked = source.masked
    index = start
    while index < limit:
        char = masked[index]
        if char in "([{" and index in source.pairs and source.pairs[index] > index:
            index = source.pairs[index] + 1
            continue
        if char in ";)]}," or (char == "\n" and not _continues(masked, index)):
            return index
        index += 1
    return limit


def _continues(masked: str, newline: int) -> bool:
    before = masked[:newline].rstrip()[-2:]
    after = masked[newline:].lstrip()[:2]
    return bool(before) and before[-1] in "=+-*/|&?:(," or after[:1] in {".", "?", ":", "+", "|", "&"}


def _names(target: str) -> list[str]:
    """The names a target binds: `x`, `{ a, b: c }` (a and c), `[k, v]`, `k, v` (Go)."""
    if target.startswith("{"):
        names = []
        for part in target.strip("{}").split(","):
            bound = part.split(":", 1)[-1].split("=", 1)[0].strip().lstrip(".")
            if bound:
                names.append(bound)
        return names
    return [name.strip() for name in target.strip("[]").split(",") if name.strip() and name.strip() != "_"]


class TextFlow:
    """Tainted names of one file: every name assigned from a source expression (`sources`, run
    over the blanked text), or from an expression mentioning a name tainted before it."""

    def __init__(
        self,
        source: JsSource,
        sources: Sequence[re.Pattern[str]],
        sanitizers: re.Pattern[str] | None,
        go: bool,
        filled: re.Pattern[str] | None = None,
    ) -> None:
        self.source = source
        self.filled = filled  # calls that fill their argument (group `name`) from a source
        self.sources = sources
        self.sanitizers = sanitizers
        self.go = go
        self.functions = functions(source, go)
        self.code = code_view(source, go)
        self.tainted: list[Taint] = []
        self._bind()

    def _bind(self) -> None:
        masked, patterns = self.source.masked, _patterns()
        # (offset of the binding, its target, the value's span; an end of -1: to the statement's end)
        bindings: list[tuple[int, str, int, int]] = []
        kinds = ("go_assignment", "go_range") if self.go else ("declaration", "assignment", "for_of")
        for kind in kinds:
            for match in patterns[kind].finditer(masked):
                target = match.group("target")
                if kind == "go_range":  # `for i := range b`: an index; `for _, v := range b`: the value
                    target = target.split(",")[1] if "," in target else ""
                bindings.append((match.start("target"), target, match.end(), -1))
        if not self.go:
            for match in patterns["callback"].finditer(masked):  # the receiver is the value
                params = match.group("params") if match.group("params") is not None else match.group("param")
                bindings.append((match.start(), params or "", self._statement_start(match.start()), match.start()))
            for match in patterns["array_from"].finditer(masked):
                params = match.group("params") if match.group("params") is not None else match.group("param")
                bindings.append((match.start("value"), params or "", match.start("value"), match.end("value")))
        if self.filled is not None:
            for match in self.filled.finditer(masked):
                bindings.append((match.start(), match.group("name"), match.start(), match.end()))
        for offset, target, start, end in sorted(bindings):
            if end < 0:
                end = statement_end(self.source, start, len(masked))
                if masked[start:end].lstrip().startswith("range"):
                    start = masked.index("range", start) + 5
                    end = masked.find("{", start)
            origin = self.origin(start, end)
            if origin is None:
                continue
            for name in _names(target):
                if name in _DECLARATION_WORDS or not name.replace("$", "_").isidentifier():
                    continue
                self.tainted.append(Taint(name, origin[0], origin[1], offset, (start, end)))

    def _statement_start(self, offset: int) -> int:
        masked = self.source.masked
        index = offset
        while index > 0:
            char = masked[index - 1]
            if char in ")]}" and (index - 1) in self.source.pairs:
                index = self.source.pairs[index - 1]
                continue
            if char in ";{(,\n=":
                return index
            index -= 1
        return 0

    def _clean_text(self, start: int, end: int) -> str:
        """The blanked text of a span with sanitizer calls (and their arguments) blanked too."""
        code = self.code
        text = code[start:end]
        if self.sanitizers is None:
            return text
        for match in self.sanitizers.finditer(code, start, end):
            opener = match.end() - 1
            closer = (self.source.pairs.get(opener) or closing_parenthesis(code, opener, end)) if code[opener] == "(" else match.end()
            span_end = min(end, closer + 1)
            text = text[: match.start() - start] + " " * (span_end - match.start()) + text[span_end - start :]
        return text

    def origin(self, start: int, end: int) -> tuple[str, int, str] | None:
        """(the source expression or tainted name, its line, the name it came through) when the
        span mentions a source, or a name tainted in the same function before `start`."""
        text = self._clean_text(start, end)
        for pattern in self.sources:
            match = find_source(pattern, text)
            if match is not None:
                where = start + match.start()
                return self._source_text(where), self.source.line_of(where), ""
        names = {match.group(0) for match in _patterns()["names"].finditer(text)}
        for taint in reversed(self.tainted):
            if taint.name in names and taint.offset < start and self._visible(taint, start):
                if re.search(rf"(?<![\w$.]){re.escape(taint.name)}(?![\w$])", text):
                    return taint.source, taint.line, taint.name
        return None

    def taint_of(self, name: str, before: int) -> Taint | None:
        """The last assignment from a source to `name` before an offset."""
        return next((taint for taint in reversed(self.tainted) if taint.name == name and taint.offset < before), None)

    def _visible(self, taint: Taint, use: int) -> bool:
        """A name assigned in a function is seen in it and in the functions inside it; one
        assigned at the top level, everywhere after."""
        function = innermost(self.functions, taint.offset)
        return function is None or function.header_start <= use < function.body_close

    def _source_text(self, where: int) -> str:
        """The source expression from its start: a member chain with at most one call on it."""
        while where > 0:  # back to the receiver: `r.URL.Query()`, `new URL(u).searchParams.get(...)`
            before = self.code[where - 1]
            if before.isalnum() or before in "_$.":
                where -= 1
            elif before == ")" and self.source.pairs.get(where - 1, where) < where - 1:
                where = self.source.pairs[where - 1]
            else:
                break
        match = _patterns()["chain"].match(self.code, where)
        end = match.end() if match else statement_end(self.source, where, min(len(self.code), where + 60))
        text = " ".join(self.source.text[where:end].split())
        return text if len(text) <= 70 else text[:69] + "…"


def describe(origin: tuple[str, int, str]) -> str:
    source, line, name = origin
    if name:
        return f"`{name}`, from `{source}` at line {line}"
    return f"`{source}` (line {line})"
