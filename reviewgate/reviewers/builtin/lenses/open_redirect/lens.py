"""Open redirect (Python, JavaScript/TypeScript, Go, Java, C#, Ruby, PHP): a value the sender
chooses (query, form, body, header, a route's parameter) decides where a redirect goes, and nothing
checks it stays on this site.

The sinks of each framework: Flask's and Django's `redirect`, Starlette's and FastAPI's
`RedirectResponse`, aiohttp's and Pyramid's `HTTPFound`; Express's, Koa's, Fastify's, Hono's and
Hapi's `.redirect(...)`, Next's `redirect(...)` and `NextResponse.redirect(new URL(input, base))`;
net/http's `http.Redirect`, gin's, echo's and Fiber's `c.Redirect`; a servlet's `sendRedirect`,
Spring's `"redirect:" + x` and `RedirectView`; ASP.NET's `Redirect(...)`; Rails's `redirect_to`,
`redirect_back_or_to` and `redirect_back`'s `fallback_location`, and Sinatra's `redirect`;
Laravel's `redirect(...)`/`redirect()->to(...)`, Slim's `withHeader('Location', ...)`, PHP's
`header('Location: ' . x)`; and a `Location` header anywhere. A FastAPI
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

The readers, one module per family of languages, each with its table of sinks and its guards:
python.py, javascript_go.py, server_languages.py; each is imported where a file of its languages
mentions a redirect.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
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
        "parsed host against an allowlist. It blocks where the value is a parameter a link sets by "
        "name (`?next=`, a form field, a route parameter): that is an open redirect wherever the "
        "handler is deployed. A target from the request's own path or headers reports at minor until "
        "the rule's record earns more."
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
        "`Redirect(…)`, `redirect_to …`, `redirect_back_or_to …`, `redirect_back fallback_location: …`, "
        "Sinatra's `redirect …`, Laravel's `redirect(…)`/"
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
        "header (back to the linking page); in Ruby and PHP a record the parameter looks up "
        "(`redirect_to Product.find(params[:id])`, `redirect(User::findOrFail($id)->url())`: its URL on this "
        "site); a handler in a test file (a fixture, never deployed)"
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
    chained="where a query, form or route parameter, or a parsed body's field, reaches it",
    record=Record(
        findings=7,
        holding=0,
        where=(
            "the whole trees of the tuning half's 16 projects and of 25 PyPI and npm packages (2026-12-06): 7, none holds: pyramid's docs tutorial, `HTTPSeeOther(location=request.resource_url(page))` "
            "4 (`resource_url` builds a URL of this site); chi `middleware/strip.go:62`, a target rebuilt as "
            "`\"/\" + strings.Trim(path, \"/\")` (leading slashes collapsed: not seen as a guard); chi "
            "`middleware/profiler.go:27, 30`, `r.RequestURI + \"/pprof/\"` in routes that match only the "
            "mount path. None of the 7 is a parameter a link sets by name, the shape that blocks; pyramid's "
            "4 are gone since its `request.resource_url(…)` and route URL helpers count as this site's "
            "URLs (2026-12-07). Not one since: handlers in test files (django, fastify). Not one by design: "
            "`res.redirect(req.get('Referrer') || '/')` in express's examples (the `Referer` is not a source)"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
    ),
)

RULES = (OPEN_REDIRECT,)
RULE_OPEN_REDIRECT = OPEN_REDIRECT.id

_LANGUAGES = frozenset({
    Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO,
    Language.JAVA, Language.CSHARP, Language.RUBY, Language.PHP,
})
_NEEDLES = ("edirect", "ocation", "HTTPFound", "HTTPSeeOther", "HTTPMoved")

_WEAK_NOTE = (
    "and the only check is that it starts with `/`, which is not a guard: `//evil.example` (and "
    "`/\\evil.example` in browsers) starts with `/` and goes to another host."
)


_BY_NAME_NOTE = (
    " It is a parameter a link sets by name, so this blocks: the page is an open redirect for anyone "
    "who can send a link."
)

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


def _finding(path: str, text: str, line: int, where: str, weak: bool, language: Language, source: str) -> Finding:
    from reviewgate.reviewers.builtin.lenses.open_redirect.guards import set_by_name

    code = code_line(text, line)
    by_name = set_by_name(source)
    return bug_finding(
        rule=RULE_OPEN_REDIRECT,
        category="security",
        title="Redirect target comes from the request unchecked",
        body=(
            f"{matched(code)}: the redirect goes to {where}, which the sender chooses, "
            + (_WEAK_NOTE if weak else "and nothing checks that it stays on this site.")
            + (_BY_NAME_NOTE if by_name else "")
            + " A link to this page with `?next=https://evil.example` sends the user there from a "
            "trusted address (phishing, token theft). "
            + _ADVICE[Language.JAVASCRIPT if language is Language.TYPESCRIPT else language]
        ),
        path=path,
        line=line,
        code=code,
        chained=by_name,
    )


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.lenses.open_redirect.python import unchecked_redirects

    for line, where, weak, source in unchecked_redirects(tree, path, added):
        yield _finding(path, text, line, where, weak, Language.PYTHON, source)


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.server_input import SERVER_LANGUAGES

    if language in SERVER_LANGUAGES:
        from reviewgate.reviewers.builtin.lenses.open_redirect.server_languages import unchecked_redirects
    else:
        from reviewgate.reviewers.builtin.lenses.open_redirect.javascript_go import unchecked_redirects
    for line, where, weak, source in unchecked_redirects(text, path, added, language):
        yield _finding(path, text, line, where, weak, language, source)


def _has_added_redirect(tree: ast.Module, added: dict[int, str]) -> bool:
    from reviewgate.reviewers.builtin.lenses.open_redirect.python import has_added_redirect

    return has_added_redirect(tree, added)


class _RailsAwareLens(NamedTuple):
    """The rule's lens, less Ruby findings in a Rails application that refuses a redirect to
    another host by itself (rails_config.py) where the call does not allow one."""

    lens: TwoReaderLens

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        refusing: dict[str, bool] = {}  # by application root, each read once
        for finding in self.lens.check(request):
            if (finding.path or "").endswith(".rb") and _refused(request, finding, refusing):
                continue
            yield finding


def _refused(request: ReviewRequest, finding: Finding, refusing: dict[str, bool]) -> bool:
    """Whether the Rails application of a Ruby finding refuses its redirect to another host."""
    from reviewgate.reviewers.builtin.lenses.open_redirect.rails_config import (
        ALLOWS_OTHER_HOSTS,
        application_root,
        refuses_other_hosts,
    )

    path = finding.path or ""
    root = application_root(path)
    if root is None or ALLOWS_OTHER_HOSTS.search(code_line(request.head.read_text(path) or "", finding.line or 0)):
        return False
    if root not in refusing:
        refusing[root] = refuses_other_hosts(request.head.read_text, root)
    return refusing[root]


OPEN_REDIRECT_LENS = _RailsAwareLens(TwoReaderLens(RULE_OPEN_REDIRECT, _LANGUAGES, _NEEDLES,
                                                   _python,
                                                   _text,
                                                   _has_added_redirect))

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (OPEN_REDIRECT_LENS,)
