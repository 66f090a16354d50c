"""Several cookies joined with commas into one `Set-Cookie` header (Python, JavaScript/TypeScript,
Go): `res.setHeader('Set-Cookie', cookies.join(', '))`, `headers["Set-Cookie"] = ", ".join(...)`,
`w.Header().Set("Set-Cookie", strings.Join(cookies, ", "))`.

`Set-Cookie` is the one header that cannot be folded into a comma-separated list (RFC 6265,
section 3; RFC 9110, 5.3): a cookie's `Expires` date holds a comma itself, so browsers read the
joined value as one cookie whose attributes run into the next cookie's name, and drop or garble
the rest. Each cookie needs a header of its own: an array (`res.setHeader('Set-Cookie', [a, b])`),
`headers.append` per cookie, `http.SetCookie` per cookie, `response.set_cookie` per cookie.
Not reported: one cookie's attributes joined with `; ` (that is its syntax), other headers joined
with commas (`Vary`, `Cache-Control`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

JOINED_SET_COOKIE = Rule(
    id="correctness/joined-set-cookie",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Several cookies joined into one Set-Cookie header",
    full=(
        "`Set-Cookie` cannot be folded into a comma-separated list (RFC 6265): a cookie's `Expires` date "
        "holds a comma, so the browser reads one cookie and garbles or drops the rest. Send each cookie in "
        "a header of its own."
    ),
    tags=("correctness", "reliability"),
    precision="high",
    fires_on=(
        "Python, JS/TS, Go: a `Set-Cookie` header (any capitals) given a value joined with a separator "
        "holding a comma: `res.setHeader('Set-Cookie', cookies.join(', '))`, `headers.set(…)`, "
        "`headers[\"Set-Cookie\"] = \", \".join(…)`, `{\"Set-Cookie\": value}` with `value` so joined, "
        "`w.Header().Set/Add(\"Set-Cookie\", strings.Join(cookies, \", \"))`"
    ),
    not_on=(
        "an array of values (`res.setHeader('Set-Cookie', [a, b])`), `append` or `http.SetCookie` or "
        "`set_cookie` per cookie; one cookie's attributes joined with `; `; other headers joined with commas "
        "(`Vary`, `Cache-Control`)"
    ),
    fires=(
        Example(file=File("src/session.js", "javascript", """\
export function send(res, cookies) {
  res.setHeader('Set-Cookie', cookies.join(', '));
  res.end();
}
""")),
    ),
    does_not_fire=(
        Example(file=File("src/session.js", "javascript", """\
export function send(res, cookies) {
  res.setHeader('Set-Cookie', cookies);
  res.end();
}
""")),
    ),
    by_record=True,
    record=Record(
        findings=0,
        holding=0,
        where=(
            "the whole trees of the tuning half's 20 projects, of 25 PyPI and npm packages and of 30 more where JWTs "
            "are decoded, cookies written or a runtime floor declared (2026-12-06; each tree's package.json, "
            "pyproject.toml, setup.cfg, setup.py and go.mod at the base): none, in cookie writers among them "
            "(cookies, @fastify/cookie, express-session, cookie-session, hono, undici, light-my-request, quart, "
            "werkzeug, django, aiohttp, koa, fastify): each sends every cookie in a header of its own"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
    ),
)

RULES = (JOINED_SET_COOKIE,)
RULE_JOINED_SET_COOKIE = JOINED_SET_COOKIE.id

_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO})
_NEEDLES = ("Set-Cookie", "set-cookie", "SET-COOKIE", "Set-cookie")
_HEADER = LazyPattern(r"""(?i)(?P<quote>['"`])set-cookie(?P=quote)""")
# A join whose separator holds a comma: JS's `.join(', ')`, Go's `strings.Join(x, ",")`.
_TEXT_JOIN = LazyPattern(r"""\.\s*join\s*\(\s*(['"`])[^'"`\n]*,[^'"`\n]*\1\s*\)|\bstrings\.Join\([^;\n]*,\s*"[^"\n]*,[^"\n]*"\s*\)""")
_TEXT_VALUE = LazyPattern(r"""\s*[,:]\s*(?P<value>[^;\n]{1,300})""")
_IDENTIFIER = LazyPattern(r"[A-Za-z_$][\w$]*")


def _finding(path: str, text: str, line: int, value: str) -> Finding:
    code = code_line(text, line)
    return bug_finding(
        rule=RULE_JOINED_SET_COOKIE,
        category="correctness",
        title="Several cookies joined into one Set-Cookie header",
        body=(
            f"{matched(code)}: {value} joins several cookies with a comma into one `Set-Cookie` value. That header "
            "cannot be folded into a list: a cookie's `Expires=Wed, 21 Oct 2026 ...` holds a comma itself, so the "
            "browser reads one cookie and garbles or drops the others. Send each cookie in a header of its own "
            "(an array of values, `headers.append` per cookie, `http.SetCookie` or `set_cookie` per cookie)."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _is_header(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() == "set-cookie"


def _comma_join(node: ast.AST, assigned: dict[str, ast.expr], depth: int = 0) -> bool:
    if isinstance(node, ast.Name) and node.id in assigned and depth < 2:
        return _comma_join(assigned[node.id], assigned, depth + 1)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
        and "," in node.func.value.value
    )


def _python_values(tree: ast.Module) -> Iterator[tuple[int, ast.expr]]:
    """(line, value) of every value given to a `Set-Cookie` header."""
    for assignment in nodes_of(tree, ast.Assign):
        for target in assignment.targets:
            if isinstance(target, ast.Subscript) and _is_header(target.slice):
                yield assignment.lineno, assignment.value
    for dictionary in nodes_of(tree, ast.Dict):
        for key, value in zip(dictionary.keys, dictionary.values, strict=True):
            if _is_header(key):
                yield getattr(key, "lineno", dictionary.lineno), value
    for call in nodes_of(tree, ast.Call):
        if len(call.args) >= 2 and _is_header(call.args[0]):
            yield call.lineno, call.args[1]


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    assigned = {
        target.id: node.value
        for node in nodes_of(tree, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for line, value in _python_values(tree):
        if line in added and _comma_join(value, assigned):
            yield _finding(path, text, line, "the value")


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    source = read_js(text)
    for header in _HEADER.finditer(text):
        start = header.start()
        line = source.line_of(start)
        if line not in added or source.masked[start] != text[start]:
            continue  # inside a comment or another string
        value = _TEXT_VALUE.match(text, header.end())
        if value is None:
            continue
        shown = value.group("value")
        if _TEXT_JOIN.search(shown):
            yield _finding(path, text, line, "the value")
            continue
        name = _IDENTIFIER.match(shown.strip())
        if name is None or name.group(0) != shown.strip().rstrip(")}] ").strip():
            continue
        assignment = re.search(
            rf"(?<![\w$.]){re.escape(name.group(0))}\s*(?::\s*[\w\[\]<>]+\s*)?:?=\s*(?P<value>[^;\n]+)", text[:start]
        )
        if assignment is not None and _TEXT_JOIN.search(assignment.group("value")):
            yield _finding(path, text, line, f"`{name.group(0)}`")


JOINED_SET_COOKIE_LENS = TwoReaderLens(
    RULE_JOINED_SET_COOKIE, _LANGUAGES, _NEEDLES, _python, _text,
    lambda tree, added: any(line in added for line, _value in _python_values(tree)),
)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (JOINED_SET_COOKIE_LENS,)
