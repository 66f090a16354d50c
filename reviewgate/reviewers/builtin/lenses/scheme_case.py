"""A URL's scheme checked case-sensitively (Python, JavaScript/TypeScript, Go): `url.startswith(
"https://")`, `scheme == "javascript"` on a scheme split off by hand, `url.startsWith('https:')`,
`/^javascript:/.test(href)` without the `i` flag, `strings.HasPrefix(target, "https://")`.

A scheme is case-insensitive (RFC 3986, 3.1): browsers and HTTP clients follow `HTTPS://host`
and run `JavaScript:alert(1)`, so a check that only knows the lower-case spelling lets the
other spellings through (an "is it https" test that says no to a secure URL, a block list of
`javascript:` that lets `JAVASCRIPT:` pass). Safe: the value lower-cased first (`.lower()`,
`.casefold()`, `.toLowerCase()`, `strings.ToLower`), a parsed URL's scheme (`urlparse(...).scheme`,
WHATWG `new URL(...).protocol`, Go's `url.Parse(...).Scheme`: each lower-cases it), a regular
expression with the `i` flag, `strings.EqualFold`. Not reported: checks that route a URL rather
than judge it (a `file:` URL turned into a path, a `data:` URL read in place, "is it absolute" with
a path prefix beside the schemes), and test files.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

CASE_SENSITIVE_SCHEME = Rule(
    id="correctness/case-sensitive-scheme",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="URL scheme checked case-sensitively",
    full=(
        "A URL's scheme is case-insensitive: `HTTPS://` and `JavaScript:` are the same schemes to a browser "
        "or an HTTP client. A check that knows only the lower-case spelling refuses a secure URL or lets a "
        "blocked scheme through in other capitals. Lower-case the input first, or compare a parsed URL's "
        "scheme (which the parser lower-cases)."
    ),
    tags=("correctness", "reliability"),
    precision="medium",
    fires_on=(
        "Python, JS/TS, Go: on an added line outside test files, a check that decides on the scheme's "
        "spelling: a block list naming `javascript:` or `vbscript:`, or a test of `https`/`http` (is it secure, "
        "is it external): "
        "`url.startswith(\"https://\")`, `url.startsWith('https:')`/`url.indexOf('javascript:') === 0`, a "
        "regular expression literal anchored on such a scheme without the `i` flag (`/^javascript:/.test(href)`), "
        "`strings.HasPrefix(target, \"https://\")`, and a scheme cut out of the raw text and compared as "
        "written (`url.split(\":\")[0] == \"javascript\"`, `url[:5] == \"https\"`, `strings.Split(u, \":\")[0]`)"
    ),
    not_on=(
        "the value lower-cased first (`.lower()`, `.casefold()`, `.toLowerCase()`, `strings.ToLower`, or a "
        "name assigned from one); a parsed URL's scheme (`urlparse(…).scheme`, `new URL(…).protocol`, Go's "
        "`url.Parse(…).Scheme`: each lower-cases it); a regular expression with the `i` flag; "
        "`strings.EqualFold`; checks that route a URL rather than judge it: routing schemes alone "
        "(`file:` to a path, `data:` read in place, `ftp://`, `mailto:`), web schemes beside a path prefix "
        "(`startswith((\"http://\", \"https://\", \"/\"))`: is it absolute, where `HTTP://…` is prefixed like a "
        "relative path, not trusted); test files (assertions on the code's own output)"
    ),
    fires=(
        Example(file=File("src/links.js", "javascript", """\
export function isSecure(url) {
  return url.startsWith('https:');
}
""")),
    ),
    does_not_fire=(
        Example(file=File("app/links.py", "python", """\
from urllib.parse import urlparse


def is_secure(url):
    return urlparse(url).scheme == "https"
""")),
    ),
    by_record=True,
    record=Record(
        findings=11,
        holding=3,
        where=(
            "the whole trees of the tuning half's 26 projects and of 113 PyPI and npm packages (15 on 2026-12-06, "
            "98 on 2026-12-07): 11, 3 **hold**: jinja2 `utils.py:320`, `urlize` matches `HTTP://example.com` "
            "case-blind, then `startswith(\"https://\")` misses it and the link becomes "
            "`https://HTTP://example.com`; xss `lib/default.js:183, 184`, `value.substr(0, 7) === \"http://\"`: `<a "
            "href=\"HTTPS://example.com/\">` comes out as `<a href>` (run against xss 1.0.17). Do not: an "
            "absolute-URL test whose other branch prefixes a domain or opens a launcher (click "
            "`_termui_impl.py:861`, django `syndication/views.py:20`, tornado `auth.py:813`), a proxy URL from "
            "the settings (scrapy `_httpx.py:116`), a URL a parser already lower-cased (scrapy "
            "`linkextractors/__init__.py:124`, after `urljoin`), superagent `http2wrapper.js:130` (a `Host` "
            "header given with a scheme is already a misuse the code forgives in lower case), "
            "websockets `proxy.py:126` (urllib's `getproxies()` writes the scheme in lower case), bleach "
            "`_vendor/parse.py:439` (urllib's fast path for `http`, the general path lower-cases). Not one since "
            "(29 of the 34 first read): `file:`/`data:`/`ftp:` checks that route a URL (click, jekyll, celery, "
            "webpack 14, scrapy 4), web schemes beside a path prefix (django 4), test files (django, scrapy, "
            "tornado)"
        ),
    ),
)

RULES = (CASE_SENSITIVE_SCHEME,)
RULE_CASE_SENSITIVE_SCHEME = CASE_SENSITIVE_SCHEME.id

_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO})
# Schemes a check blocks for what they run (a block list), and the two whose spelling decides
# whether a URL is taken as secure. The others (`file:`, `data:`, `ftp://`, `ws:`, `mailto:`)
# route a URL to the code that handles it (a file URL to a path, a data URL read in place): their
# case spoils no security decision, so a check of them alone is not reported.
_BLOCKED = LazyPattern(r"^(?:javascript|vbscript):?")
_WEB = LazyPattern(r"^https?(?::|$)")
_SCHEMES = r"(?:https?|ftps?|wss?|javascript|vbscript|data|file|mailto|tel)"
_NEEDLES = ("http", "javascript", "vbscript", "ftp", "ws:", "wss:", "data:", "file:", "mailto:", "tel:")
# Calls whose result is lower-case (or a parsed URL, whose scheme is).
_PYTHON_LOWERING = frozenset({"lower", "casefold", "urlparse", "urlsplit"})
# A literal that starts with a scheme and its colon, or is a bare scheme name: all a Python file
# needs, so a Python change compiles none of the JavaScript and Go patterns below.
_PREFIX_LITERAL = LazyPattern(rf"^{_SCHEMES}:")
_SCHEME_LITERAL = LazyPattern(rf"^{_SCHEMES}:?$")


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    quote = r"""['"`]"""
    return {
        "js_prefix": re.compile(
            rf"\.\s*(?:startsWith|indexOf|lastIndexOf)\s*\(\s*{quote}(?P<literal>{_SCHEMES}:[^'\"`]*){quote}\s*"
            rf"(?:\)\s*(?:===?|!==?)\s*0\b|\))"
        ),
        "js_cut": re.compile(
            rf"\.\s*(?:slice|substring|substr)\s*\(\s*0\s*,\s*\d+\s*\)\s*(?:===?|!==?)\s*{quote}{_SCHEMES}:?[/]*{quote}"
            rf"|\.\s*split\s*\(\s*{quote}:{quote}\s*\)\s*\[\s*0\s*\]\s*(?:===?|!==?)\s*{quote}{_SCHEMES}{quote}"
        ),
        # A regular expression literal anchored on a scheme: its flags after the closing slash.
        # A regular expression literal anchored on a scheme and its colon (a whole URL, not a parsed
        # protocol: `/^https?$/` matches what a parser lower-cased), used as a test: its flags.
        "js_regex": re.compile(
            rf"(?<![\w$)\]])/\^\(?(?:\?:)?(?P<scheme>{_SCHEMES})\)?\??:(?:\\.|[^/\\\n])*/(?P<flags>[a-z]*)"
            r"(?=\s*\.\s*(?:test|exec)\s*\()"
        ),
        "go_prefix": re.compile(rf"\bstrings\.HasPrefix\(\s*(?P<value>[^,()]+(?:\([^()]*\))?)\s*,\s*\"{_SCHEMES}:[^\"]*\"\s*\)"),
        "go_cut": re.compile(
            rf"\[\s*:\s*\d+\s*\]\s*[!=]=\s*\"{_SCHEMES}:?[/]*\""
            rf"|\bstrings\.Split(?:N)?\([^()]*\)\s*\[\s*0\s*\]\s*[!=]=\s*\"{_SCHEMES}\""
        ),
        # Lower-cased, or serialized by a URL parser (`new URL(...).href`, a response's `responseURL`).
        "js_lowered": re.compile(
            r"\.\s*(?:toLowerCase|toLocaleLowerCase)\s*\(\s*\)\s*$|\.\s*(?:protocol|scheme|href|responseURL|origin)\s*$"
        ),
        "go_lowered": re.compile(r"^\s*strings\.ToLower\(|\.Scheme\s*$"),
        "receiver": re.compile(r"(?:[\w$]+(?:\s*\.\s*[\w$]+|\s*\([^()]*\))*)\s*$"),
    }


def _decides(literals: list[str]) -> bool:
    """Whether a check of these literals (the prefixes of one `startswith`, the names a scheme is
    compared with, the scheme checks of one line) makes a decision a scheme's case can spoil: a
    block list naming `javascript:`/`vbscript:`, or a test of `https`/`http` (is it secure, is it
    external). Not: only routing schemes (`file:`, `data:`), or web schemes beside a path prefix
    (`"/"`, `"//"`): that asks whether a value is absolute, and `HTTP://…` takes the branch of a
    relative path, prefixed rather than trusted (django's `startswith(("http://", "https://", "/"))`
    for a static path)."""
    if any(_BLOCKED.match(item) for item in literals):
        return True
    web = any(_WEB.match(item) for item in literals)
    return web and not any(item.startswith("/") for item in literals)


def _finding(path: str, text: str, line: int, what: str, language: Language) -> Finding:
    code = code_line(text, line)
    lowered = {
        Language.PYTHON: "`.lower()` it first, or compare `urlparse(url).scheme` (which is lower-cased)",
        Language.GO: "lower-case it first (`strings.ToLower`), compare `url.Parse(...).Scheme`, or use `strings.EqualFold`",
    }.get(language, "lower-case it first (`.toLowerCase()`), compare `new URL(url).protocol`, or give the regular "
          "expression the `i` flag")
    return bug_finding(
        rule=RULE_CASE_SENSITIVE_SCHEME,
        category="security",
        title="URL scheme checked case-sensitively",
        body=(
            f"{matched(code)}: {what}, but a URL's scheme is case-insensitive: `HTTPS://`, `Https://` and "
            "`JavaScript:` are the same schemes to a browser or an HTTP client, and this check tells them apart "
            f"(a secure URL refused, or a blocked scheme let through in other capitals). Normalise the input: {lowered}."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _lowered_names(tree: ast.Module) -> set[str]:
    """Names assigned anywhere in the module from a lower-casing call or a parsed URL."""
    found: set[str] = set()
    for node in nodes_of(tree, ast.Assign):
        if _lowered(node.value, set()):
            found.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return found


def _lowered(node: ast.AST, names: set[str]) -> bool:
    from reviewgate.reviewers.builtin.languages.python_flow import leaf_name

    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return node.attr == "scheme" or _lowered(node.value, names)
    if isinstance(node, ast.Subscript):
        return _lowered(node.value, names)
    if isinstance(node, ast.Call):
        return leaf_name(node) in _PYTHON_LOWERING or (
            isinstance(node.func, ast.Attribute) and _lowered(node.func.value, names)
        )
    return False


def _split_off(node: ast.AST, names: dict[str, ast.expr]) -> bool:
    """A scheme cut out of the raw text: `url.split(":")[0]`, `url.partition(":")[0]`, `url[:5]`."""
    if isinstance(node, ast.Name) and node.id in names:
        return _split_off(names[node.id], {})
    if not isinstance(node, ast.Subscript):
        return False
    if isinstance(node.slice, ast.Slice):
        return True
    inner = node.value
    return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in {
        "split", "partition", "rsplit"
    }


def _python_checks(tree: ast.Module, added: dict[int, str]) -> Iterator[tuple[ast.AST, ast.expr, str, list[str]]]:
    """(node, the value checked, what the check is, the literals it compares with) for each
    case-sensitive scheme check on an added line."""
    prefix, scheme = _PREFIX_LITERAL, _SCHEME_LITERAL
    for call in nodes_of(tree, ast.Call):
        if call.lineno not in added or not isinstance(call.func, ast.Attribute) or call.func.attr != "startswith":
            continue
        if not call.args:
            continue
        argument = call.args[0]
        literals = [_string(item) for item in (argument.elts if isinstance(argument, ast.Tuple) else [argument])]
        hits = [item for item in literals if item is not None and prefix.match(item)]
        if hits:
            written = [item for item in literals if item is not None]
            yield call, call.func.value, f"`startswith({hits[0]!r})` compares the scheme letter for letter", written
    for compare in nodes_of(tree, ast.Compare):
        if compare.lineno not in added or not all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in compare.ops):
            continue
        literals = [
            literal
            for item in compare.comparators
            for literal in ([_string(item)] if not isinstance(item, (ast.Tuple, ast.List, ast.Set))
                            else [_string(element) for element in item.elts])
        ]
        hit = next((item for item in literals if item is not None and scheme.match(item)), None)
        if hit is not None:
            written = [item for item in literals if item is not None]
            yield compare, compare.left, f"the scheme is compared with {hit!r} as written", written


def _python_candidates(tree: ast.Module, added: dict[int, str]) -> bool:
    return any(True for _ in _python_checks(tree, added))


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    if is_test_file(path):
        return  # an assertion on the code's own output, or a fixture: no input to normalise
    lowered = _lowered_names(tree)
    assigned = {
        target.id: node.value
        for node in nodes_of(tree, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: dict[int, str] = {}
    literals: dict[int, list[str]] = {}
    for node, value, what, written in _python_checks(tree, added):
        line = getattr(node, "lineno", 1)
        if _lowered(value, lowered):
            continue
        if isinstance(node, ast.Compare) and not _split_off(value, assigned):
            continue  # a scheme from elsewhere (a parsed URL, a setting): nothing says it is raw input
        found.setdefault(line, what)
        literals.setdefault(line, []).extend(written)
    for line, what in sorted(found.items()):
        if _decides(literals[line]):
            yield _finding(path, text, line, what, Language.PYTHON)


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    if is_test_file(path):
        return
    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    go = language is Language.GO
    lowered_names = _lowered_text_names(masked, go)

    def code(offset: int) -> bool:
        return masked[offset] == text[offset] and source.line_of(offset) in added

    found: dict[int, str] = {}
    literals: dict[int, list[str]] = {}

    def note(match: re.Match[str], what: str, written: list[str]) -> None:
        line = source.line_of(match.start())
        found.setdefault(line, what)
        literals.setdefault(line, []).extend(written)

    if go:
        for match in patterns["go_prefix"].finditer(text):
            value = match.group("value").strip()
            if code(match.start()) and not patterns["go_lowered"].search(value) and value not in lowered_names:
                note(match, "`strings.HasPrefix` compares the scheme letter for letter", _quoted(match))
        for match in patterns["go_cut"].finditer(text):
            if code(match.start()):
                note(match, "the scheme is cut out of the text and compared as written", _quoted(match))
    else:
        for match in patterns["js_prefix"].finditer(text):
            receiver = patterns["receiver"].search(masked, max(0, match.start() - 120), match.start())
            name = receiver.group(0).strip() if receiver else ""
            if not code(match.start()) or patterns["js_lowered"].search(name) or name in lowered_names:
                continue
            note(
                match,
                f"`{match.group(0).split('(')[0].strip(' .')}({match.group('literal')!r})` compares the scheme letter for letter",
                [match.group("literal")],
            )
        for match in patterns["js_cut"].finditer(text):
            if code(match.start()):
                note(match, "the scheme is cut out of the text and compared as written", _quoted(match))
        for match in patterns["js_regex"].finditer(text):
            if code(match.start()) and "i" not in match.group("flags"):
                note(
                    match,
                    f"the regular expression `{match.group(0)[:40]}` has no `i` flag, so it matches the scheme in lower case only",
                    [f"{match.group('scheme')}:"],
                )
    for line, what in sorted(found.items()):
        if _decides(literals[line]):
            yield _finding(path, text, line, what, language)


def _quoted(match: re.Match[str]) -> list[str]:
    """The string literals a matched check holds (the prefix, the scheme compared with)."""
    return re.findall(r"""['"`]([^'"`]*)['"`]""", match.group(0))


def _lowered_text_names(masked: str, go: bool) -> set[str]:
    """Names assigned from a lower-casing call: `const lowered = url.toLowerCase()`, `l := strings.ToLower(u)`."""
    pattern = (
        r"(?P<name>[\w]+)\s*:?=\s*strings\.ToLower\(" if go
        else r"(?P<name>[\w$]+)\s*=\s*[^;\n=]*\.\s*(?:toLowerCase|toLocaleLowerCase)\s*\(\s*\)\s*(?:;|\n)"
    )
    return {match.group("name") for match in re.finditer(pattern, masked)}


CASE_SENSITIVE_SCHEME_LENS = TwoReaderLens(
    RULE_CASE_SENSITIVE_SCHEME, _LANGUAGES, _NEEDLES, _python, _text, _python_candidates
)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (CASE_SENSITIVE_SCHEME_LENS,)
