"""A regular expression built from input without escaping (Python, JavaScript/TypeScript, Go,
Java, C#, Ruby, PHP): request input (query, body, headers, a route's parameter), or argv and
environment joined into a larger pattern, reaching `re.compile/search/match/...`, `new RegExp(...)`
or a string's `.match(...)` (which makes a pattern of a string), `regexp.MustCompile/Compile/Match`,
Java's `Pattern.compile` and a string's `matches`/`replaceAll`/`replaceFirst`, C#'s `new Regex` and
`Regex.IsMatch/Match/Replace/Split`, Ruby's `Regexp.new` and `/#{...}/`, PHP's `preg_*`.

A pattern character in the input changes what matches (`.` matches anything, `(a+)+$` takes
exponential time: a request can stall the process). Escaped input is fine: `re.escape`,
`escapeRegExp`/`_.escapeRegExp`/`escape-string-regexp`, a `.replace(..., '\\$&')` escape,
`regexp.QuoteMeta`, `Pattern.quote`, `Regex.Escape`, `Regexp.escape`, `preg_quote`. A whole pattern from argv or the environment is the user's own regex by
design (a `--filter` option): only one joined with other pattern text counts.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

REGEX_INJECTION = Rule(
    id="security/regex-injection",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Regular expression built from unescaped input",
    full=(
        "Request input, argv or the environment reaches a regular expression constructor unescaped: "
        "its metacharacters change what matches, and a crafted pattern can take exponential time. "
        "Escape it (`re.escape`, `regexp.QuoteMeta`, an escapeRegExp helper)."
    ),
    tags=("security", "correctness", "external/cwe/cwe-1333"),
    precision="medium",
    fires_on=(
        "Python, JS/TS, Go, Java, C#, Ruby, PHP: request input (query, body, headers, a route's "
        "parameter) reaching `re.compile/search/match/…`, `new RegExp(…)` or a string's `.match(…)` (a "
        "string becomes a pattern there), `regexp.MustCompile/Compile/MatchString/Match`, "
        "`Pattern.compile`/`matches`/`replaceAll`/`replaceFirst`, `new Regex(…)`/`Regex.IsMatch(…)`, "
        "`Regexp.new(…)`/`/#{…}/`, `preg_match(…)` and the other `preg_*`; or argv/environment joined "
        "into a larger pattern (`f\"^{prefix}-\\d+$\"`)"
    ),
    not_on=(
        "`re.escape`, `escapeRegExp`/`_.escapeRegExp`/`escape-string-regexp`, a `.replace(…, '\\\\$&')` "
        "escape, `regexp.QuoteMeta`, `Pattern.quote`, `Regex.Escape`, `Regexp.escape`, `preg_quote`; a "
        "whole pattern from argv or the environment (a `--filter` "
        "option: the user's own regex)"
    ),
    fires=(
        Example(
            file=File("src/search.js", "javascript", """\
app.get('/search', (req, res) => {
  const pattern = new RegExp(req.query.q, 'i');
  res.json(items.filter((item) => pattern.test(item.name)));
});
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("src/search.js", "javascript", """\
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&');

app.get('/search', (req, res) => {
  const pattern = new RegExp(escapeRegExp(req.query.q), 'i');
  res.json(items.filter((item) => pattern.test(item.name)));
});
"""),
        ),
    ),
    by_record=True,
    record=Record(
        findings=1,
        holding=0,
        where=(
            "the whole trees of the tuning half's 16 projects and of 25 PyPI and npm packages (2026-12-06): 1, does not hold: hapi `cors.js:103`, `request.server.match(method, ...)`, the router's "
            "`match`, not a regular expression"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
    ),
)

RULES = (REGEX_INJECTION,)
RULE_REGEX_INJECTION = REGEX_INJECTION.id


if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow

_LANGUAGES = frozenset({
    Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO,
    Language.JAVA, Language.CSHARP, Language.RUBY, Language.PHP,
})
_NEEDLES = ("re.", "regex.", "RegExp", "regexp.", ".match(", ".matchAll(", "Pattern.", ".matches(", "replaceAll(",
            "replaceFirst(", "Regex", "Regexp", "preg_", "#{")
_PYTHON_SINKS = frozenset(
    {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
)
_PYTHON_SANITIZERS = frozenset({"re.escape", "regex.escape", "escape", "fnmatch.translate", "translate"})
_ADVICE = {
    Language.PYTHON: "Escape it with `re.escape(...)` before it goes into the pattern",
    Language.JAVASCRIPT: "Escape it first (`escapeRegExp`, lodash's `_.escapeRegExp`, `escape-string-regexp`, "
    "or `.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')`)",
    Language.GO: "Escape it with `regexp.QuoteMeta(...)` before it goes into the pattern",
    Language.JAVA: "Quote it with `Pattern.quote(...)` before it goes into the pattern",
    Language.CSHARP: "Escape it with `Regex.Escape(...)` before it goes into the pattern",
    Language.RUBY: "Escape it with `Regexp.escape(...)` before it goes into the pattern",
    Language.PHP: "Escape it with `preg_quote(..., '/')` before it goes into the pattern",
}
# Java, C#, Ruby, PHP: each call that compiles a pattern (the argument index of the pattern; `-` for
# the `#{...}` of a Ruby regular expression literal), and the escape that makes input literal text.
_SERVER_SINKS: dict[Language, tuple[tuple[str, str], ...]] = {
    Language.JAVA: ((r"\bPattern\s*\.\s*(?:compile|matches)\s*\(", "0"),
                    (r"\.\s*(?:matches|replaceAll|replaceFirst)\s*\(", "0")),
    Language.CSHARP: ((r"\bnew\s+Regex\s*\(", "0"),
                      (r"\bRegex\s*\.\s*(?:IsMatch|Match|Matches|Replace|Split)\s*\(", "1")),
    Language.RUBY: ((r"\bRegexp\s*\.\s*(?:new|compile|union)\s*\(", "0"),
                    (r"(?<![\w)\]])(?:/|%r\{)[^/\n]*?#\{", "-")),
    Language.PHP: ((r"\bpreg_(?:match|match_all|replace|replace_callback|split|grep|filter)\s*\(", "0"),),
}
_SERVER_ESCAPES = {
    Language.JAVA: LazyPattern(r"\bPattern\s*\.\s*quote\s*\(|\\\\Q"),
    Language.CSHARP: LazyPattern(r"\bRegex\s*\.\s*Escape\s*\("),
    Language.RUBY: LazyPattern(r"\bRegexp\s*\.\s*(?:escape|quote)\s*\("),
    Language.PHP: LazyPattern(r"\bpreg_quote\s*\("),
}


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "js_process": re.compile(r"process\s*\.\s*(?:argv|env)\b"),
        "go_process": re.compile(r"os\.(?:Getenv|LookupEnv)\(|os\.Args\b|flag\.Args?\("),
        "js_sanitizers": re.compile(
            r"(?i)[\w$.]*(?:escape[\w$]*reg(?:ex|exp)?|reg(?:ex|exp)?[\w$]*escape|escapeRE|quotemeta)[\w$]*\s*\("
        ),
        "go_sanitizers": re.compile(r"\bregexp\.QuoteMeta\("),
        # A literal first: the scan for it is fast; what precedes it is checked after.
        "js_sink": re.compile(r"RegExp\s*\(|\.\s*match(?:All)?\s*\("),
        "go_sink": re.compile(r"\bregexp\.(?:MustCompile|Compile|MatchString|Match|MatchReader|MustCompilePOSIX|CompilePOSIX)\s*\("),
        "composed": re.compile(r"(?<!\+)\+(?![+=])|\$\{|\bSprintf\(|\.join\(|\bconcat\("),
    }


def _finding(path: str, text: str, line: int, where: str, language: Language) -> Finding:
    code = code_line(text, line)
    return bug_finding(
        rule=RULE_REGEX_INJECTION,
        category="security",
        title="Regular expression built from unescaped input",
        body=(
            f"{matched(code)}: the pattern holds {where}, with nothing escaping it. A `.` or `*` in "
            "the input changes what matches, and a pattern such as `(a+)+$` takes exponential time "
            "(one request can stall the process). "
            + _ADVICE[Language.JAVASCRIPT if language is Language.TYPESCRIPT else language]
            + ", or match it as text (`in`, `includes`, `strings.Contains`)."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _python_source(node: ast.expr) -> bool:
    from reviewgate.reviewers.builtin.languages.python_flow import process_input, request_input

    return request_input(node) or process_input(node)


def _python_sinks(tree: ast.Module, added: dict[int, str]) -> list[ast.Call]:
    """The `re` calls on added lines that compile a pattern: what the rule reads the rest of the
    module for."""
    from reviewgate.reviewers.builtin.languages.python_flow import call_name, leaf_name

    sinks = []
    for node in nodes_of(tree, ast.Call):
        if leaf_name(node) in _PYTHON_SINKS and node.lineno in added and node.args:
            module, _, leaf = call_name(node).rpartition(".")
            if module in {"re", "regex"} and leaf in _PYTHON_SINKS:
                sinks.append(node)
    return sinks


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Flows, describe

    sinks = _python_sinks(tree, added)
    if not sinks:
        return
    flows = Flows(tree, lambda scope: Flow(scope, _python_source, _PYTHON_SANITIZERS, route_parameters=True))
    for node in sorted(sinks, key=lambda item: (item.lineno, item.col_offset)):
        flow = flows.of(node)
        pattern = node.args[0]
        origin = flow.origin(pattern)
        if origin is None:
            continue
        if not _from_request(origin.source) and not _composed(flow, pattern, 0):
            continue  # a whole pattern from argv or the environment: the user's own regex
        yield _finding(path, text, node.lineno, describe(origin), Language.PYTHON)


def _from_request(source: str) -> bool:
    return not source.startswith(("sys.argv", "os.environ", "os.getenv", "getenv"))


def _composed(flow: Flow, node: ast.expr, depth: int) -> bool:
    """The input is joined with other pattern text: an f-string, `+`, `%` or `.format`."""
    if isinstance(node, ast.JoinedStr) or isinstance(node, ast.BinOp):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"format", "join"}:
        return True
    if isinstance(node, ast.Name) and node.id in flow.values and depth < 3:
        return _composed(flow, flow.values[node.id], depth + 1)
    return False


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.server_input import SERVER_LANGUAGES
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow, describe, find_source, request_sources

    if language in SERVER_LANGUAGES:
        yield from _server(text, path, added, language)
        return
    go = language is Language.GO
    prefix = "go" if go else "js"
    patterns = _patterns()
    source = read_js(text)
    masked = source.masked
    sinks = [
        match
        for match in patterns[f"{prefix}_sink"].finditer(masked)
        if (go or match.group(0).startswith(".") or match.start() == 0
            or not (masked[match.start() - 1].isalnum() or masked[match.start() - 1] in "_$."))
        and source.line_of(match.start()) in added
    ]
    process = patterns[f"{prefix}_process"]
    request = request_sources(go)
    if not sinks or (find_source(request, text) is None and find_source(process, text) is None):
        return  # no input read anywhere in the file: nothing to follow
    flow = TextFlow(source, [request, process], patterns[f"{prefix}_sanitizers"], go)
    for match in sinks:
        arguments = call_arguments(source, match.end() - 1)
        if not arguments:
            continue
        start, end = arguments[0]
        origin = flow.origin(start, end)
        if origin is None or "$&" in text[start:end]:
            continue
        taint = flow.taint_of(origin[2], start) if origin[2] else None
        if taint is not None and "$&" in text[slice(*taint.value)]:
            continue  # escaped by `.replace(/[...]/g, '\\$&')` where it was assigned
        if process.match(origin[0]):
            spans = [(start, end), *([taint.value] if taint else [])]
            if not any(patterns["composed"].search(flow.code[slice(*span)]) for span in spans):
                continue  # a whole pattern from argv or the environment: the user's own regex
        yield _finding(path, text, source.line_of(match.start()), describe(origin), language)


def _server(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.server_input import origin_of, sink_arguments

    source = read_js(text)
    escapes = _SERVER_ESCAPES[language].compiled()
    for pattern, how in _SERVER_SINKS[language]:
        for match in re.finditer(pattern, text):
            line = source.line_of(match.start())
            if line not in added or source.masked[match.start()] != text[match.start()]:
                continue  # in a string (a path `"/users/#{id}"`) or a comment
            if how == "-":  # `/...#{input}.../`: the interpolation's own braces
                opener = match.end() - 1
                span: tuple[int, int] | None = (opener + 1, text.find("}", opener))
            else:
                arguments = sink_arguments(source, match.end() - 1)
                index = int(how)
                span = arguments[index] if len(arguments) > index else None
            if span is None or span[1] <= span[0]:
                continue
            origin = origin_of(source, language, span[0], span[1], escapes)
            if origin is not None:
                yield _finding(path, text, line, origin.describe(), language)


REGEX_INJECTION_LENS = TwoReaderLens(RULE_REGEX_INJECTION, _LANGUAGES, _NEEDLES,
                                     _python,
                                     _text,
                                     lambda tree, added: bool(_python_sinks(tree, added)))

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (REGEX_INJECTION_LENS,)
