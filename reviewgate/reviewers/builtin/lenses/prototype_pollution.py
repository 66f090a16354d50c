"""Prototype pollution (JavaScript, TypeScript): an object literal `{}` used as a dictionary whose
keys come from parsed input, `obj[key] = value` with `key` from `JSON.parse`, the request's query,
body, params, headers or cookies, a parsed query string or `document.cookie`, followed through
assignments, `for ... of/in`, `Object.keys/entries` and `.split(...)` within one function.

And the deep merge that recurses into itself: `target[key] = source[key]` for every key of
another parameter, with a call of the function on `target[key]` (whatever it is handed, a parsed
body or a JSON file, a `__proto__` key walks the merge into `Object.prototype`); a one-level copy
is not reported.

And, whatever the object: a nested write `obj[a][b] = v` whose first key is input (`obj[a]` of
`__proto__` is `Object.prototype`); a setter that walks a path of keys (`current = current[key]`
in a loop, or a `reduce` that hands on `node[key]`) and writes at the end; `Object.assign(target,
parsed)` with parsed input (its own `__proto__` key is set with `=`: a spread defines it instead).

A key of `__proto__` sets the dictionary's prototype (every lookup then sees the sender's
properties: `obj.isAdmin`), and `obj[a][b] = v` with `a = "__proto__"` writes to
`Object.prototype` for the whole process. Safe: `Object.create(null)`, a `Map`, a
`hasOwnProperty`/`Object.hasOwn` check, or a filter of `__proto__`/`constructor`/`prototype` keys
in the same function.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

PROTOTYPE_POLLUTION = Rule(
    id="security/prototype-pollution",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Object literal keyed by parsed input",
    full=(
        "An object literal used as a dictionary takes its keys from parsed input (`__proto__`, "
        "`constructor` included): a crafted key changes every object's prototype. Use "
        "`Object.create(null)` or a `Map`, or refuse those keys."
    ),
    tags=("security", "correctness", "external/cwe/cwe-1321"),
    precision="medium",
    fires_on=(
        "JS/TS: `obj[key] = …` (or `obj[a][b] = …`) where `obj` is an object literal `{}` (or a "
        "`.reduce(…, {})` accumulator) and `key` comes from `JSON.parse`, the request's "
        "query/body/params/headers/cookies/URL, a parsed query string or `document.cookie` (through "
        "`for … of/in`, `Object.keys/entries`, `.split(…)`, destructuring); a deep merge that "
        "recurses into itself (`merge(target[key], source[key])` over every key of another parameter); "
        "whatever the object, a nested write `obj[a][b] = …` whose first key is such input; a setter "
        "that walks a path of keys (`current = current[key]` in a loop, or `keys.reduce((node, key) => "
        "(node[key] = node[key] || {}), target)`) and writes at the end; `Object.assign(target, "
        "parsed)` with parsed input (its own `__proto__` key is set with `=`)"
    ),
    not_on=(
        "`Object.create(null)`, a `Map`, a `hasOwnProperty`/`Object.hasOwn` check or a "
        "`__proto__`/`constructor`/`prototype` filter in the function; keys that are not input "
        "(`counts[word]` over a function's own words); a spread `{...parsed}` (it defines keys, it does "
        "not set them); a one-level copy (`for (const key in source) "
        "target[key] = source[key]`)"
    ),
    fires=(
        Example(
            file=File("src/cookies.js", "javascript", """\
function parseCookies(req) {
  const cookies = {};
  for (const part of req.headers.cookie.split(';')) {
    const [name, value] = part.split('=');
    cookies[name.trim()] = decodeURIComponent(value);
  }
  return cookies;
}
module.exports = { parseCookies };
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("src/cookies.js", "javascript", """\
function parseCookies(req) {
  const cookies = Object.create(null);
  for (const part of req.headers.cookie.split(';')) {
    const [name, value] = part.split('=');
    cookies[name.trim()] = decodeURIComponent(value);
  }
  return cookies;
}
module.exports = { parseCookies };
"""),
        ),
    ),
    by_record=True,
    record=Record(
        findings=44,
        holding=0,
        where=(
            "the whole trees of the tuning half's 26 projects and of 123 PyPI and npm packages (25 on 2026-12-06, "
            "98 on 2026-12-07): 44, none holds: mongoose 10 (keys are the model's schema paths, the developer's "
            "definitions); fastify's `proto-poisoning.test.js` 3 (tests of its own guard); hapi `methods.js` "
            "(server method names), restify `audit.js` (plugin options), lodash `fp/_baseConvert.js` (the "
            "caller's own path, set through `baseSet`); keys from the query of a database or Redis connection "
            "URL, the application's own configuration (knex `parse-connection.js` 3, ioredis `utils/index.js` 2); "
            "vendored Sphinx assets (sqlalchemy and mako `doc/_static/`); 2026-12-07: bullmq 10 (job options and "
            "messages it wrote to Redis itself, copied onto fresh objects: `job.js:232, 237, 240, 243`, "
            "`redis-queue-backend.js:2047, 2052, 2055, 2058`, `child-processor.js:132`, `relay.js:530`), "
            "nodemailer `xoauth2/index.js:263` (a copy of a token response for the log), @fastify/multipart "
            "`index.js:108, 110, 125` (field names in `Object.prototype` are refused where the body is built, "
            "`index.js:350`), typeorm `OrmUtils.js:156` (no caller in the package; not certain: a path "
            "`__proto__.x` would reach `Object.prototype`); pino's benchmarks 3 (its own package.json); joi "
            "`annotate.js:46` (a symbol key); less `url-file-manager.js:17` (a prototype built from its own "
            "methods), nunjucks `runtime.js:39` (names a template sets)"
        ),
    ),
)

RULES = (PROTOTYPE_POLLUTION,)
RULE_PROTOTYPE_POLLUTION = PROTOTYPE_POLLUTION.id


if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow

_LANGUAGES = frozenset({Language.JAVASCRIPT, Language.TYPESCRIPT})
_NEEDLES = ("] =", "]=", "Object.assign")
# Besides the request: text parsed into keys (JSON, a query string, the page's URL and cookies).
_PARSED_INPUT = (
    r"JSON\s*\.\s*parse\s*\(|(?:req|request)\.(?:url|originalUrl)\b|(?:querystring|qs)\s*\.\s*parse\s*\("
    r"|searchParams\b|document\s*\.\s*cookie\b"
)


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "store": re.compile(r"\](?=\s*=(?![=>]))"),
        "name_before": re.compile(r"(?P<object>[A-Za-z_$][\w$]*)\s*$"),
        "empty_literal": re.compile(r"(?<![\w$.])(?P<object>[\w$]+)\s*(?::[^=;\n]{1,80})?=\s*\{\s*\}"),
        "reduce": re.compile(r"\.\s*reduce\s*\("),
        "assign": re.compile(r"(?<![\w$.])Object\s*\.\s*assign\s*\("),
        "words": re.compile(r"[A-Za-z_$][\w$]*"),
        "first_parameter": re.compile(r"\s*(?:async\s*)?\(?\s*(?P<name>[\w$]+)"),
        "guard": re.compile(
            r"hasOwnProperty|\bhasOwn\b|__proto__|['\"`]constructor['\"`]|['\"`]prototype['\"`]|setPrototypeOf"
            r"|Object\.create\(\s*null|(?i:safe_?key|forbidden_?keys|unsafe_?keys|dangerous_?keys|blocked_?keys)"
        ),
    }


class PrototypePollutionLens:
    rule = RULE_PROTOTYPE_POLLUTION

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, _language, text in changed_sources(request, _LANGUAGES, _NEEDLES):
            yield from _file(text, change.path, change.added_lines())


def _file(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.text_flow import (
        TextFlow,
        describe,
        find_source,
        innermost,
        request_sources,
    )

    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    stores = []
    for match in patterns["store"].finditer(masked):  # `] =`: back from it to the name indexed
        closer = match.start()
        opener = source.pairs.get(closer, -1)
        while opener > 0 and masked[source.skip_space_back(opener - 1)] == "]":  # `obj[a][b] = v`
            closer = source.skip_space_back(opener - 1)
            opener = source.pairs.get(closer, -1)
        if opener < 0 or source.line_of(opener) not in added:
            continue
        indexed = patterns["name_before"].search(masked, max(0, opener - 80), opener)
        if indexed is not None and (indexed.start() == 0 or masked[indexed.start() - 1] not in ".$"):
            stores.append((indexed, opener, closer))
    assigns = [match for match in patterns["assign"].finditer(masked) if source.line_of(match.start()) in added]
    if not stores and not assigns:
        return
    yield from _recursive_merges(source, path, stores)
    yield from _path_walks(source, path, stores)
    sources = request_sources(False, _PARSED_INPUT)
    if find_source(sources, text) is None:
        return  # no parsed input anywhere in the file: nothing to follow
    flow = TextFlow(source, [sources], None, go=False)
    for match, opener, closer in stores:
        function = innermost(flow.functions, match.start())
        if function is None:
            continue
        name = match.group("object")
        outermost = next(item for item in flow.functions if item.holds(match.start()))
        # `obj[a][b] = v` writes into whatever `obj[a]` is: with `a` of `__proto__`, Object.prototype.
        nested = masked[source.skip_space(closer + 1)] == "["
        if not nested and not _is_empty_literal(source, name, outermost.header_start, match.start()) and not (
            _is_empty_literal(source, name, 0, flow.functions[0].header_start if flow.functions else 0)
        ):
            continue
        if patterns["guard"].search(text, function.header_start, function.body_close):
            continue
        origin = flow.origin(opener + 1, closer)
        if origin is None:
            continue
        what = (f"`{name}[...][...]` is written with its first key {describe(origin)}, which the sender chooses"
                if nested else
                f"`{name}` is an object literal (`{{}}`) and its key is {describe(origin)}, which the sender chooses")
        yield _finding(path, text, source.line_of(match.start()), what)
    for match in assigns:
        yield from _parsed_assign(source, flow, path, match)


def _finding(path: str, text: str, line: int, what: str) -> Finding:
    code = code_line(text, line)
    return bug_finding(
        rule=RULE_PROTOTYPE_POLLUTION,
        category="security",
        title="Object used as a dictionary of keys from input",
        body=(
            f"{matched(code)}: {what}; nothing in the function filters `__proto__`, `constructor` or "
            "`prototype`. A key of `__proto__` replaces the object's prototype (every later lookup sees "
            "the sender's properties), and a nested write through it (`obj[a][b] = v`) changes "
            "`Object.prototype` for the whole process. Use `Object.create(null)` or a `Map`, or skip "
            "those keys."
        ),
        path=path,
        line=line,
        code=code,
    )


def _recursive_merges(source: JsSource, path: str, stores: list[tuple[re.Match[str], int, int]]) -> Iterator[Finding]:
    """A deep merge or set that recurses into itself: `target[key] = source[key]` for every key of
    another parameter, and a call of the function itself on `target[key]`. Whatever it is handed
    (a parsed body, a JSON config), a `__proto__` key walks it into `Object.prototype`."""
    from reviewgate.reviewers.builtin.languages.text_flow import functions

    masked, text, patterns = source.masked, source.text, _patterns()
    bodies = functions(source, go=False)
    reported: set[int] = set()
    for match, opener, closer in stores:
        target, key = match.group("object"), masked[opener + 1 : closer].strip()
        # The function whose parameter is the target: the store may sit in a callback inside it.
        holding = [item for item in reversed(bodies) if item.holds(match.start())]
        function = next(
            (item for item in holding
             if target in patterns["words"].findall(masked[item.header_start : item.body_open])),
            None,
        )
        if function is None or function.body_open in reported or not key.isidentifier():
            continue
        parameters = set(patterns["words"].findall(masked[function.header_start : function.body_open]))
        name = _function_name(source, function.header_start)
        body = masked[function.body_open : function.body_close]
        loop = re.search(
            rf"\bfor\s*\(\s*(?:const|let|var)\s+{re.escape(key)}\s+in\s+(?P<over>[\w$]+)"
            rf"|\bfor\s*\(\s*(?:const|let|var)\s+{re.escape(key)}\s+of\s+Object\.keys\(\s*(?P<keys>[\w$]+)"
            rf"|Object\.keys\(\s*(?P<each>[\w$]+)\s*\)\s*\.forEach\(\s*\(?\s*{re.escape(key)}\b",
            body,
        )
        over = next((group for group in (loop.groups() if loop else ()) if group), None)
        if over is None or over not in parameters or over == target or not name:
            continue
        if not re.search(rf"(?:(?<![\w$.])|(?<=this\.)){re.escape(name)}\s*\(\s*{re.escape(target)}\s*\[\s*{re.escape(key)}\s*\]", body):
            continue  # not recursive: a shallow copy of one level
        if patterns["guard"].search(text, function.header_start, function.body_close):
            continue
        reported.add(function.body_open)
        yield _finding(
            path,
            text,
            source.line_of(match.start()),
            f"`{name}` merges every key of `{over}` into `{target}` and recurses into `{target}[{key}]`",
        )


def _parsed_assign(source: JsSource, flow: TextFlow, path: str, match: re.Match[str]) -> Iterator[Finding]:
    """`Object.assign(target, JSON.parse(body))`: the parsed object's own `__proto__` key is set on
    the target with `=`, which replaces the target's prototype (a spread `{...parsed}` defines it instead)."""
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
    from reviewgate.reviewers.builtin.languages.text_flow import describe, innermost

    arguments = call_arguments(source, match.end() - 1)
    if len(arguments) < 2 or "Object.create(null)" in source.masked[slice(*arguments[0])].replace(" ", ""):
        return
    function = innermost(flow.functions, match.start())
    start, end = (function.header_start, function.body_close) if function else (0, len(source.text))
    if _patterns()["guard"].search(source.text, start, end):
        return
    for argument in arguments[1:]:
        origin = flow.origin(*argument)
        if origin is not None:
            yield _finding(
                path, source.text, source.line_of(match.start()),
                f"`Object.assign` copies every own key of {describe(origin)} onto its target, `__proto__` included, "
                "with `=`",
            )
            return


def _path_walks(source: JsSource, path: str, stores: list[tuple[re.Match[str], int, int]]) -> Iterator[Finding]:
    """A setter that walks a path of keys down an object (`current = current[key]` in a loop) and
    writes at the end: a path of `__proto__.polluted` writes into `Object.prototype`, whoever calls it."""
    from reviewgate.reviewers.builtin.languages.text_flow import functions, innermost

    masked, text, patterns = source.masked, source.text, _patterns()
    bodies = functions(source, go=False)
    last: dict[int, tuple[re.Match[str], str]] = {}
    for match, _opener, _closer in stores:
        function = innermost(bodies, match.start())
        if function is None:
            continue
        name = match.group("object")
        body = masked[function.body_open : function.body_close]
        escaped = re.escape(name)
        walks = re.search(rf"(?<![\w$.]){escaped}\s*=\s*{escaped}\s*\[", body) is not None and re.search(
            r"\bfor\s*\(|\.\s*(?:forEach|reduce)\s*\(|\bwhile\s*\(", body) is not None
        # `keys.reduce((node, key) => (node[key] = node[key] || {}), target)`: the accumulator walks down.
        reduces = re.search(
            rf"\.\s*reduce\s*\(\s*\(\s*{escaped}\s*,\s*(?P<key>[\w$]+)\s*\)\s*=>\s*\(?\s*{escaped}\s*\[\s*(?P=key)\s*\]\s*=",
            body,
        ) is not None
        if not walks and not reduces:
            continue
        if patterns["guard"].search(text, function.header_start, function.body_close):
            continue
        last[function.body_open] = (match, name)
    for match, name in last.values():
        yield _finding(
            path, text, source.line_of(match.start()),
            f"`{name}` walks down a path of keys (`{name} = {name}[key]`, or a `reduce` that hands on `{name}[key]`) "
            "and is written on the way; a path through `__proto__` reaches `Object.prototype`",
        )


def _function_name(source: JsSource, header_start: int) -> str:
    """`merge` of `function merge(`, `merge(` (a method), `const merge = (`; "" for an anonymous one."""
    masked = source.masked
    end = header_start - 1
    for _word in range(3):  # past `function` and `async` to the name: `const merge = async function (`
        end = source.skip_space_back(end)
        if end >= 0 and masked[end] == "=":
            end = source.skip_space_back(end - 1)
        start = end
        while start >= 0 and (masked[start].isalnum() or masked[start] in "_$"):
            start -= 1
        name = masked[start + 1 : end + 1]
        if name not in {"function", "async"}:
            return name
        end = start
    return ""


def _is_empty_literal(source: JsSource, name: str, start: int, before: int) -> bool:
    """`name` is set to `{}` in the (outermost enclosing) function before the write, or is the
    accumulator of a `.reduce(..., {})`."""
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    masked, patterns = source.masked, _patterns()
    for match in patterns["empty_literal"].finditer(masked, start, before):
        if match.group("object") == name:
            return True
    for match in patterns["reduce"].finditer(masked, max(0, start - 2000), before):
        arguments = call_arguments(source, match.end() - 1)
        if len(arguments) < 2 or masked[slice(*arguments[-1])].strip() != "{}":
            continue
        first = patterns["first_parameter"].match(masked, arguments[0][0])
        if first is not None and first.group("name") == name and arguments[0][0] <= before <= arguments[0][1]:
            return True
    return False

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (PrototypePollutionLens(),)
