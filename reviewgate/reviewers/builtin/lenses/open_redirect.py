"""Open redirect (Python, JavaScript/TypeScript, Go, Java, C#, Ruby, PHP): a value the sender
chooses (query, form, body, header, a route's parameter) decides where a redirect goes, and nothing
checks it stays on this site.

The sinks of each framework: Flask's and Django's `redirect`, Starlette's and FastAPI's
`RedirectResponse`, aiohttp's and Pyramid's `HTTPFound`; Express's, Koa's, Fastify's, Hono's and
Hapi's `.redirect(...)`, Next's `redirect(...)` and `NextResponse.redirect(new URL(input, base))`;
net/http's `http.Redirect`, gin's, echo's and Fiber's `c.Redirect`; a servlet's `sendRedirect`,
Spring's `"redirect:" + x` and `RedirectView`; ASP.NET's `Redirect(...)`; Rails's `redirect_to`
and Sinatra's `redirect`; Laravel's `redirect(...)`/`redirect()->to(...)`, Slim's `withHeader
('Location', ...)`, PHP's `header('Location: ' . x)`; and a `Location` header anywhere. A FastAPI
or Flask route's `str` or path parameter is input, as are Spring's `@RequestParam` and an ASP.NET
action's `string` parameters (languages/server_input.py reads Java, C#, Ruby and PHP).

Followed within one function from the request to `redirect(...)`, `RedirectResponse(...)`,
`res.redirect(...)`, `http.Redirect(w, r, x, ...)` or a `Location` header, through assignments,
`or` defaults and concatenation, but only as the start of the URL: `"/search?q=" + term` keeps
the host, though a lone `/` does not (`'/' + path` with a path of `/evil.example`). In JS/TS and Go
the request's own path counts too (`res.redirect(req.originalUrl + '/')`: a path of
`//evil.example` sends the user there). A check of only `startswith('/')` is not a guard
(`//evil.example` passes it) and the finding says so. Guards that clear it: a safe-URL helper (`url_has_allowed_host_and_scheme`,
`isSafeRedirect`...), an allowlist membership test, a parsed URL's host or netloc checked, a
`//` check beside the `/` one, `Url.IsLocalUrl`/`LocalRedirect`, Rails's `url_from`; a target built
by `url_for(...)`/`reverse(...)` or a route helper (`after_sign_in_path_for(user)`) is not input, nor
is the `Referer` header (a redirect back to the linking page, which that page could make itself).
Not in test files: a handler a test builds is a fixture, never deployed.
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
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

OPEN_REDIRECT = Rule(
    id="security/open-redirect",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Redirect to a URL taken from the request",
    full=(
        "A value from the request (query, form, header, path) starts the URL a redirect or `Location` "
        "header sends the browser to, with no check of its host: a link to this site can send users "
        "anywhere. A check that it starts with `/` is not one (`//evil.example` passes it). Check the "
        "parsed host against an allowlist."
    ),
    tags=("security", "correctness", "external/cwe/cwe-601"),
    precision="medium",
    fires_on=(
        "Python, JS/TS, Go, Java, C#, Ruby, PHP: a value from the request's query, form, body or headers "
        "(`request.args`, `request.GET`, `request.query_params`, a FastAPI or Flask route's `str` or path "
        "parameter, `req.query`/`req.params`/`req.body`/`req.get(…)`, `ctx.query`, `c.req.query(…)`, "
        "`searchParams.get(…)`, `r.URL.Query().Get`, `r.FormValue`, gin's/echo's/Fiber's `c.Query`, "
        "`request.getParameter`, Spring's `@RequestParam`, `Request.Query[…]` and an ASP.NET action's "
        "`string` parameters, Rails's `params[…]`, `$request->input(…)`, `$_GET[…]`, "
        "`getQueryParams()`) reaches `redirect(…)`, `RedirectResponse(…)`, `HttpResponseRedirect(…)`, "
        "aiohttp's/Pyramid's `HTTPFound(…)`, `res.redirect(…)`/`ctx.redirect`/`reply.redirect`/"
        "`c.redirect`, `NextResponse.redirect(new URL(x, base))`, `http.Redirect(w, r, x, …)`, "
        "`c.Redirect(…)`, `sendRedirect(…)`, `\"redirect:\" + x`, `new RedirectView(…)`, ASP.NET's "
        "`Redirect(…)`, `redirect_to …`, Sinatra's `redirect …`, Laravel's `redirect(…)`/"
        "`redirect()->to(…)`, `header('Location: ' . x)` or a `Location` header as the start of the URL (a lone `/` before it fixes no host: `'/' + path`), followed "
        "within one function through assignments, `or`/`||` defaults and wrapper calls; in JS/TS and "
        "Go the request's own path counts too (`res.redirect(req.originalUrl + '/')`, "
        "`http.Redirect(w, r, r.URL.Path+\"/\", …)`: a path of `//evil.example` goes there); the "
        "finding names the source with its line. A check of only "
        "`startswith('/')`/`startsWith('/')`/`strings.HasPrefix(x, \"/\")` is not a guard "
        "(`//evil.example` passes) and the finding says so"
    ),
    not_on=(
        "`url_has_allowed_host_and_scheme` or another safe-URL helper (`isSafeRedirect` …), an "
        "allowlist membership test, a parsed URL's netloc/host looked at, a `//` check beside the `/` "
        "one; `Url.IsLocalUrl`/`LocalRedirect`, Rails's `url_from`; `url_for(…)`/`reverse(…)`, a route "
        "helper (`after_sign_in_path_for(user)`, `route('home')`); input after fixed text (`\"/search?q=\" + term`, `` "
        "`/items/${id}` ``, `'/login?next=' + encodeURIComponent(req.originalUrl)`); the `Referer` "
        "header (back to the linking page); a handler in a test file (a fixture, never deployed)"
    ),
    fires=(
        Example(
            file=File("app/views.py", "python", """\
from flask import redirect, request


def login():
    target = request.args.get("next", "/")
    if not target.startswith("/"):
        target = "/"
    return redirect(target)
"""),
            caption="A check that the target starts with `/` is not a guard, and the finding says so.",
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/views.py", "python", """\
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme


def login(request):
    target = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return redirect(target)
"""),
        ),
    ),
    by_record=True,
    record=Record(
        findings=7,
        holding=0,
        where=(
            "the whole trees of the tuning half's 16 projects and of 25 PyPI and npm packages (2026-12-06): 7, none holds: pyramid's docs tutorial, `HTTPSeeOther(location=request.resource_url(page))` "
            "4 (`resource_url` builds a URL of this site); chi `middleware/strip.go:62`, a target rebuilt as "
            "`\"/\" + strings.Trim(path, \"/\")` (leading slashes collapsed: not seen as a guard); chi "
            "`middleware/profiler.go:27, 30`, `r.RequestURI + \"/pprof/\"` in routes that match only the "
            "mount path. Not one since: handlers in test files (django, fastify). Not one by design: "
            "`res.redirect(req.get('Referrer') || '/')` in express's examples (the `Referer` is not a source)"
        ),
    ),
)

RULES = (OPEN_REDIRECT,)
RULE_OPEN_REDIRECT = OPEN_REDIRECT.id


if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Origin
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow

_LANGUAGES = frozenset({
    Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO,
    Language.JAVA, Language.CSHARP, Language.RUBY, Language.PHP,
})
_NEEDLES = ("edirect", "ocation", "HTTPFound", "HTTPSeeOther", "HTTPMoved")
_PYTHON_SINKS = frozenset({
    "redirect", "RedirectResponse", "HttpResponseRedirect", "HttpResponsePermanentRedirect",
    # aiohttp's and Pyramid's redirects are exceptions raised (or returned) with the target.
    "HTTPFound", "HTTPSeeOther", "HTTPTemporaryRedirect", "HTTPPermanentRedirect", "HTTPMovedPermanently",
})
_PYTHON_TARGET_KEYWORDS = ("url", "location", "to", "redirect_to")
# Calls whose result is a URL this site made, or text quoted into one.
_SANITIZERS = frozenset({"url_for", "reverse", "reverse_lazy", "quote", "quote_plus", "urlencode", "url_path_for"})
_HOST_ATTRIBUTES = frozenset({"netloc", "hostname", "host", "scheme"})

# The request's own path, as the sender wrote it: a trailing-slash redirect of `//evil.example`
# (`res.redirect(req.originalUrl + '/')`) goes to another host.
_JS_PATH = r"(?:req|request)\.(?:originalUrl|url|path)\b"
_GO_PATH = r"URL\.(?:Path|RawPath)\b|\.RequestURI\b"

_WEAK_NOTE = (
    "and the only check is that it starts with `/`, which is not a guard: `//evil.example` (and "
    "`/\\evil.example` in browsers) starts with `/` and goes to another host."
)


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    safe_words = r"(?:safe|allow|valid|trust|whitelist|permit)"
    url_words = r"(?:url|uri|redirect|next|return|target|host|origin|location|destination)"
    return {
        "guard_name": re.compile(
            rf"(?i)^[\w$.]*(?:{safe_words}[\w$]*{url_words}|{url_words}[\w$]*{safe_words})[\w$]*$"
            r"|^(?:url_has_allowed_host_and_scheme|is_safe_url)$"
        ),
        "guard_call": re.compile(
            rf"(?i)[\w$]*(?:{safe_words}[\w$]*{url_words}|{url_words}[\w$]*{safe_words})[\w$]*\s*\("
        ),
        "js_sanitizers": re.compile(r"\b(?:encodeURIComponent|encodeURI|escape|querystring\.stringify)\s*\("),
        "go_sanitizers": re.compile(r"\burl\.(?:QueryEscape|PathEscape)\("),
        "js_redirect": re.compile(
            r"(?<![\w$])(?:res|response|reply|ctx|c|h|resp|NextResponse|Response)\s*\.\s*redirect\s*\("
            r"|(?<![\w$.])redirect\s*\("
            r"|\blocation\s*\.\s*(?:assign|replace)\s*\("
        ),
        "js_location_set": re.compile(r"(?<![\w$])(?:window\.|document\.)?location(?:\.href)?\s*=(?![=>])"),
        "js_header": re.compile(r"\.\s*(?:setHeader|set|header|append)\s*\("),
        "js_res_location": re.compile(r"(?<![\w$])(?:res|response)\s*\.\s*location\s*\("),
        "js_write_head": re.compile(r"\.\s*writeHead\s*\("),
        "go_redirect": re.compile(r"\bhttp\.Redirect\s*\(|\b(?:c|ctx)\.Redirect\s*\("),
        "go_header": re.compile(r"\.Header\(\)\.(?:Set|Add)\s*\("),
        "location_key": re.compile(r"""(?i)['"]?location['"]?\s*:"""),
        "weak_js": re.compile(
            r"""\.startsWith\(\s*['"]/['"]\s*\)|\[0\]\s*[!=]==?\s*['"]/['"]|charAt\(0\)\s*[!=]==?\s*['"]/['"]"""
            r"""|strings\.HasPrefix\([^,()]+,\s*"/"\s*\)"""
        ),
        "strong_js": re.compile(r"""['"`]//|//['"`]|\\\\|/\^\\/\\/|slices\.Contains\("""),
        # A parsed URL is a guard only when its host or origin is looked at.
        "parsed": re.compile(r"new\s+URL\s*\(|\burl\.parse\s*\(|URL\.canParse|\burl\.Parse\("),
        "host_checked": re.compile(r"\.(?:origin|host|hostname|Host|Hostname\(\)|IsAbs\(\))\b"),
    }


_ADVICE = {
    Language.JAVA: (
        "Check it first: parse it (`URI.create`) and require no scheme and no host and no leading `//`, or "
        "look it up in an allowlist; or redirect to a path this application builds."
    ),
    Language.CSHARP: "Check it first with `Url.IsLocalUrl(target)`, or redirect with `LocalRedirect(target)`.",
    Language.RUBY: (
        "Check it first: `url_from(target)` (nil for another host), or leave Rails's `allow_other_host` off "
        "and redirect to a path this application builds."
    ),
    Language.PHP: (
        "Check it first: `parse_url` it and require no scheme and no host and no leading `//`, or look it up "
        "in an allowlist; Laravel's `redirect()->intended()` and named routes stay on this site."
    ),
    Language.PYTHON: (
        "Check it first: Django's `url_has_allowed_host_and_scheme`, or `urlsplit` it and require an "
        "empty scheme and netloc and no leading `//` or `\\`; or redirect to a URL this site builds (`url_for`)."
    ),
    Language.JAVASCRIPT: (
        "Check it first: `new URL(target, base)` and compare its `origin` with the site's, or look it "
        "up in an allowlist of paths; a relative path also needs a check that it does not start with `//` or `/\\`."
    ),
    Language.GO: (
        "Check it first: `url.Parse` it and require an empty `Scheme` and `Host` and no leading `//` or "
        "`/\\`, or look it up in an allowlist."
    ),
}


def _finding(path: str, text: str, line: int, where: str, weak: bool, language: Language) -> Finding:
    code = code_line(text, line)
    return bug_finding(
        rule=RULE_OPEN_REDIRECT,
        category="security",
        title="Redirect target comes from the request unchecked",
        body=(
            f"{matched(code)}: the redirect goes to {where}, which the sender chooses, "
            + (_WEAK_NOTE if weak else "and nothing checks that it stays on this site.")
            + " A link to this page with `?next=https://evil.example` sends the user there from a "
            "trusted address (phishing, token theft). "
            + _ADVICE[Language.JAVASCRIPT if language is Language.TYPESCRIPT else language]
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Flows, describe, request_input

    sinks = [] if is_test_file(path) else _added_sinks(tree, added)  # a test's handler is never deployed
    if not sinks:
        return
    flows = Flows(tree, lambda scope: Flow(scope, request_input, _SANITIZERS, leading=True, route_parameters=True))
    for node, target in sinks:
        flow = flows.of(node)
        origin = flow.origin(target)
        if origin is None or _referrer(origin.source):
            continue
        guard = _python_guard(flow, origin)
        if guard != "strong":
            yield _finding(path, text, node.lineno, describe(origin), guard == "weak", Language.PYTHON)


def _added_sinks(tree: ast.Module, added: dict[int, str]) -> list[tuple[ast.expr | ast.stmt, ast.expr]]:
    """The redirects on added lines: what the rule reads the rest of the module for."""
    return [(node, target) for node, target in _python_sinks(tree) if node.lineno in added]


def _python_sinks(tree: ast.Module) -> Iterator[tuple[ast.expr | ast.stmt, ast.expr]]:
    from reviewgate.reviewers.builtin.languages.python_flow import leaf_name

    for node in nodes_of(tree, ast.Call):
        if leaf_name(node) in _PYTHON_SINKS:
            target = node.args[0] if node.args else next(
                (item.value for item in node.keywords if item.arg in _PYTHON_TARGET_KEYWORDS), None
            )
            if target is not None:
                yield node, target
        for keyword in node.keywords:
            if keyword.arg == "headers" and isinstance(keyword.value, ast.Dict):
                yield from ((node, value) for key, value in zip(keyword.value.keys, keyword.value.values, strict=True)
                            if _is_location(key))
    for assignment in nodes_of(tree, ast.Assign):
        for target_node in assignment.targets:
            if isinstance(target_node, ast.Subscript) and _is_location(target_node.slice):
                yield assignment, assignment.value


def _is_location(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() == "location"


def _python_guard(flow: Flow, origin: Origin) -> str:
    """"strong" when the scope checks the target, "weak" when only `startswith('/')` does, else ""."""
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    guard_name = _patterns()["guard_name"]
    weak = double_slash = False
    for node in flow.nodes:
        if isinstance(node, ast.Call):
            name = call_name(node)
            if guard_name.match(name.rsplit(".", 1)[-1]):
                return "strong"
            if name.endswith("startswith") and isinstance(node.func, ast.Attribute):
                prefixes = [item for item in ast.walk(node) if isinstance(item, ast.Constant)]
                if any(item.value == "/" for item in prefixes):
                    weak = True
                elif any(isinstance(item.value, str) and item.value.startswith(("//", "\\")) for item in prefixes):
                    double_slash = True
                elif not prefixes or any(isinstance(item.value, str) and "://" in item.value[:-3] for item in prefixes):
                    return "strong"  # a prefix of this site's own origin: `startswith(request.host_url)`
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            if flow.origin(node.left) is not None:
                return "strong"
        elif isinstance(node, ast.Attribute) and node.attr in _HOST_ATTRIBUTES:
            if node.attr == "netloc" or flow.origin(node.value) is not None:
                return "strong"  # the parsed URL's host is looked at
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in {"//", "\\"}:
            double_slash = True
    if weak and double_slash:
        return "strong"
    return "weak" if weak else ""


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.server_input import SERVER_LANGUAGES

    if language in SERVER_LANGUAGES:
        yield from _server(text, path, added, language)
        return
    from reviewgate.reviewers.builtin.languages.text_flow import (
        TextFlow,
        describe,
        find_source,
        innermost,
        request_sources,
    )

    if is_test_file(path):
        return  # a test's handler is a fixture, never deployed
    go = language is Language.GO
    source = read_js(text)
    sinks = [(offset, span) for offset, span in _text_sinks(source, go) if source.line_of(offset) in added]
    patterns = _patterns()
    sources = request_sources(go, _GO_PATH if go else _JS_PATH)
    if not sinks or find_source(sources, text) is None:
        return  # no input read anywhere in the file: nothing to follow
    flow = TextFlow(
        source,
        [sources],
        patterns["go_sanitizers" if go else "js_sanitizers"],
        go,
    )
    for offset, (start, end) in sinks:
        start, end = _url_input(source, start, end)
        origin = _leading_origin(flow, start, end)
        if origin is None or _referrer(origin[0]):
            continue
        function = innermost(flow.functions, offset)
        body = text[function.body_open : function.body_close] if function else text
        guard = _text_guard(body, origin[2])
        if guard != "strong":
            yield _finding(path, text, source.line_of(offset), describe(origin), guard == "weak", language)


def _url_input(source: JsSource, start: int, end: int) -> tuple[int, int]:
    """`new URL(input, request.url)`: the input decides the host (the base is this site's own
    address, used only for a relative input), so only it is followed."""
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    first = source.skip_space(start)
    match = re.compile(r"new\s+URL\s*\(").match(source.masked, first, end)
    if match is None:
        return start, end
    arguments = call_arguments(source, match.end() - 1)
    return arguments[0] if arguments else (start, end)


def _referrer(source: str) -> bool:
    """"Back to where you came from": the browser sets the Referer to the page that linked here,
    so a link from another site sends its visitor back there, which it could do itself."""
    return "referer" in source.lower() or "referrer" in source.lower()


def _leading_origin(flow: TextFlow, start: int, end: int) -> tuple[str, int, str] | None:
    from reviewgate.reviewers.builtin.languages.expression_spans import leading_span

    span = leading_span(flow.source, start, end)
    return None if span is None else flow.origin(*span)


def _text_sinks(source: JsSource, go: bool) -> Iterator[tuple[int, tuple[int, int]]]:
    """(offset of the sink, span of the target expression) of every redirect sink in the file."""
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
    from reviewgate.reviewers.builtin.languages.text_flow import statement_end

    masked, text, patterns = source.masked, source.text, _patterns()
    redirect = patterns["go_redirect" if go else "js_redirect"]
    for match in redirect.finditer(masked):
        arguments = call_arguments(source, match.end() - 1)
        if not arguments:
            continue
        if go:
            index = 2 if match.group(0).startswith("http") else 1
            if len(arguments) > index:
                yield match.start(), arguments[index]
            elif index == 1 and arguments:  # Fiber's `c.Redirect(location, status...)`: the target first
                yield match.start(), arguments[0]
        else:
            yield match.start(), arguments[-1]  # Express's `res.redirect(301, url)`
    header = patterns["go_header" if go else "js_header"]
    for match in header.finditer(masked):
        arguments = call_arguments(source, match.end() - 1)
        if len(arguments) == 2 and text[slice(*arguments[0])].strip().strip("\"'`").lower() == "location":
            yield match.start(), arguments[1]
    if go:
        return
    for match in patterns["js_res_location"].finditer(masked):
        arguments = call_arguments(source, match.end() - 1)
        if arguments:
            yield match.start(), arguments[0]
    for match in patterns["js_location_set"].finditer(masked):
        yield match.start(), (match.end(), statement_end(source, match.end(), len(masked)))
    for match in patterns["js_write_head"].finditer(masked):
        arguments = call_arguments(source, match.end() - 1)
        opener = source.skip_space(arguments[-1][0]) if len(arguments) >= 2 else -1
        if opener < 0 or masked[opener] != "{":
            continue
        for key in patterns["location_key"].finditer(text, opener, source.pairs.get(opener, opener)):
            yield match.start(), (key.end(), statement_end(source, key.end(), source.pairs.get(opener, opener)))


def _text_guard(body: str, name: str) -> str:
    patterns = _patterns()
    if patterns["guard_call"].search(body) or patterns["strong_js"].search(body):
        return "strong"
    if patterns["parsed"].search(body) and patterns["host_checked"].search(body):
        return "strong"
    if name and re.search(rf"\.(?:includes|has|indexOf)\(\s*{re.escape(name)}\b|\[{re.escape(name)}\]", body):
        return "strong"  # an allowlist: `ALLOWED.includes(next)`, `allowed[target]`
    return "weak" if patterns["weak_js"].search(body) else ""


# Java, C#, Ruby, PHP ----------------------------------------------------------------------------

# Each redirect sink: the pattern that finds it (on the text; a match inside a string or comment is
# dropped), and how its target is read: the nth argument of the call the match ends in (`(`), or
# what follows the match to the end of the statement (`rest`), or a Ruby call without parentheses.
_SERVER_SINKS: dict[Language, tuple[tuple[str, str], ...]] = {
    Language.JAVA: (
        (r"\.\s*sendRedirect\s*\(", "0"), (r"\bnew\s+RedirectView\s*\(", "0"),
        (r"\.\s*location\s*\(\s*URI\s*\.\s*create\s*\(", "0"), (r"\bsetHeader\s*\(\s*\"Location\"\s*,", "rest"),
        (r"\"redirect:\"\s*\+", "rest"),
    ),
    Language.CSHARP: (
        (r"(?<![\w.])Redirect(?:Permanent|PreserveMethod|PermanentPreserveMethod)?\s*\(", "0"),
        (r"\b(?:Response|Results)\s*\.\s*Redirect\s*\(", "0"),
        (r"\bHeaders\s*\[\s*\"Location\"\s*\]\s*=(?!=)", "rest"),
    ),
    Language.RUBY: (
        (r"\bredirect_to\b\s*", "line"), (r"^\s*redirect\b\s*", "line"),
        (r"\bheaders\s*\[\s*['\"]Location['\"]\s*\]\s*=(?!=)", "line"),
    ),
    Language.PHP: (
        (r"(?<![\w>$:])redirect\s*\((?!\s*\))", "0"), (r"\bredirect\s*\(\s*\)\s*->\s*(?:to|away)\s*\(", "0"),
        (r"\bRedirect::(?:to|away)\s*\(", "0"), (r"\bnew\s+RedirectResponse\s*\(", "0"),
        (r"->\s*withHeader\s*\(\s*['\"]Location['\"]\s*,", "rest"),
        (r"\bheader\s*\(\s*['\"]Location:\s*['\"]\s*\.", "rest"),
    ),
}
# Checks that the target stays on this site, in these frameworks' words.
_SERVER_GUARDS = LazyPattern(
    r"\bIsLocalUrl\b|\burl_from\b|\bLocalRedirect\b|\bisLocalUrl\b|\ballowed_hosts?\b|\bin_array\s*\(|\.includes?\?\s*\("
    r"|\bUriComponentsBuilder\b|\.getHost\s*\(|\bparse_url\s*\("
)


# Rails's and Laravel's route helpers: a path or URL the application builds.
_ROUTE_HELPER = LazyPattern(r"(?:\w+_(?:path|url)(?:_for)?|route|url_for|action)\s*[(\s]")


def _server_target(source: JsSource, match: re.Match[str], how: str) -> tuple[int, int] | None:
    from reviewgate.reviewers.builtin.languages.server_input import line_argument, sink_arguments
    from reviewgate.reviewers.builtin.languages.text_flow import statement_end

    if how == "rest":
        return match.end(), statement_end(source, match.end(), len(source.masked))
    if how == "line":
        start = source.skip_space(match.end())
        if start < len(source.masked) and source.masked[start] == "(" and start in source.pairs:
            arguments = sink_arguments(source, start)
            return arguments[0] if arguments else None
        return line_argument(source, start)
    arguments = sink_arguments(source, match.end() - 1)
    index = int(how)
    return arguments[index] if len(arguments) > index else None


def _server(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.server_input import origin_of

    source = read_js(text)
    guard_call = _patterns()["guard_call"]
    for pattern, how in _SERVER_SINKS[language]:
        for match in re.finditer(pattern, text, re.MULTILINE):
            start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
            line = source.line_of(start)
            if line not in added or source.masked[start] != text[start]:
                continue
            span = _server_target(source, match, how)
            if span is None:
                continue
            first = source.skip_space(span[0])
            if first < span[1] and text[first] in "\"'" and text[first + 1 : first + 3].strip("\"'") not in ("", "/"):
                continue  # starts with fixed text: the host is this site's
            if _ROUTE_HELPER.match(text, first, span[1]):
                continue  # a path this application builds from its routes (`after_sign_in_path_for(user)`)
            origin = origin_of(source, language, span[0], span[1], None)
            if origin is None or _referrer(origin.source):
                continue
            window = text[source.line_starts[max(0, line - 30)] : span[1]]
            if guard_call.search(window) or _SERVER_GUARDS.search(window):
                continue
            yield _finding(path, text, line, origin.describe(), False, language)


OPEN_REDIRECT_LENS = TwoReaderLens(RULE_OPEN_REDIRECT, _LANGUAGES, _NEEDLES,
                                   _python,
                                   _text,
                                   lambda tree, added: bool(_added_sinks(tree, added)))

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (OPEN_REDIRECT_LENS,)
