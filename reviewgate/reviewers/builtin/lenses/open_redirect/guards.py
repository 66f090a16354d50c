"""What the open-redirect readers of every language share: the names of a check that a URL stays
on this site (`isSafeRedirect`, `url_has_allowed_host_and_scheme`), the `Referer`, which is not
input worth following, and the sources a link sets by name, which make a redirect block."""

from __future__ import annotations

import functools
import re

from reviewgate.lazy_patterns import LazyPattern

# A value the sender sets by name in a link or form: a query, form or route parameter, a parsed
# body's field, in each framework's words (the sources of python_flow.py, text_flow.py and
# server_input.py). A link to the page is all it takes to send a user anywhere, wherever the
# handler is deployed. Not here: the request's own path or raw query string (what reaches a handler
# is what its routes match), headers and cookies (a link cannot set them).
_SET_BY_NAME = LazyPattern(
    # Python: Flask, Django, Starlette/FastAPI, Pyramid; a route's parameter (python_flow.route_input).
    r"\b(?:request|req)\.(?:args|values|form|GET|POST|REQUEST|query_params|path_params|params|matchdict|json"
    r"|get_json)\b|^the (?:query|path) parameter `"
    # JS/TS: Express, Koa, Fastify, Hono, the URL's search parameters.
    r"|\b(?:req|request)\s*\.\s*(?:query|params|body)\b|\b(?:req|request)\.param\s*\("
    r"|\b(?:ctx|context)\.(?:query|params|request\.(?:query|body))\b|\bc\.req\.(?:query|param)\s*\("
    r"|searchParams\s*\.\s*get\s*\("
    # Go: net/http, gin, echo, Fiber, chi, gorilla/mux.
    r"|URL\.Query\(\)\.Get\(|\.(?:FormValue|PostFormValue)\(|\.(?:Form|PostForm)\.Get\("
    r"|\b(?:c|ctx)\.(?:Query|DefaultQuery|Param|PostForm|QueryParam|FormValue)\(|\bchi\.URLParam\(|\bmux\.Vars\("
    # Java: the servlet API, Spring's bound parameters (server_input.py).
    r"|\.getParameter(?:Values)?\s*\(|@(?:RequestParam|PathVariable)\b|^the handler parameter `String "
    # C#: ASP.NET's request collections, an action's string parameter not taken from a header.
    r"|\bRequest\s*\.\s*(?:Query|Form|RouteValues)\b|^the action parameter `(?!\[FromHeader)"
    # Ruby: Rails's and Sinatra's params.
    r"|(?<![\w.@:])params\b|\brequest\s*\.\s*(?:params|query_parameters|request_parameters)\b"
    # PHP: the superglobals, Laravel's and PSR-7's readers.
    r"|\$_(?:GET|POST|REQUEST)\b|\$request\s*->\s*(?:input|query|get|post|all|string)\s*\("
    r"|->\s*(?:getQueryParams|getParsedBody|getQueryParam|getParam)\s*\(|\brequest\s*\(\s*['\"]"
)


def set_by_name(source: str) -> bool:
    """Whether `source` (an origin's source as the readers describe it) is a value a link sets by
    name: the textbook open redirect, `redirect(request.args["next"])`."""
    return _SET_BY_NAME.search(source) is not None


@functools.cache
def guard_patterns() -> dict[str, re.Pattern[str]]:
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
    }


def is_referrer(source: str) -> bool:
    """"Back to where you came from": the browser sets the Referer to the page that linked here,
    so a link from another site sends its visitor back there, which it could do itself."""
    return "referer" in source.lower() or "referrer" in source.lower()

