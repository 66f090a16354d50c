"""What the open-redirect readers of every language share: the names of a check that a URL stays
on this site (`isSafeRedirect`, `url_has_allowed_host_and_scheme`), the `Referer`, which is not
input worth following, and the sources a link sets by name, which make a redirect block."""

from __future__ import annotations

import functools
import re

from reviewgate.lazy_patterns import LazyPattern

# A value the sender sets by name in a link or form, read whole: a query, form or route parameter, a
# parsed body's field, in each framework's words (the sources of python_flow.py, text_flow.py and
# server_input.py). A link to the page is all it takes to send a user anywhere, wherever the
# handler is deployed. Not here: a value the parameter only picks or looks up (`Issue.find(params[:id])`,
# `params[:continue] ? a_path : b_path`), the request's own path or raw query string (what reaches a
# handler is what its routes match), headers and cookies (a link cannot set them).
_READ_BY_NAME = LazyPattern(
    r"(?:"
    # Python: Flask, Django, Starlette/FastAPI, Pyramid; a route's parameter (python_flow.route_input).
    r"(?:self\.)?(?:request|req)\.(?:args|values|form|GET|POST|REQUEST|query_params|path_params|params|matchdict|json)"
    r"(?:\.get\([^()]*\)|\[[^\[\]]+\])|(?:request|req)\.get_json\(\)\[[^\[\]]+\]|the (?:query|path) parameter `.*"
    # JS/TS: Express, Koa, Fastify, Hono, the URL's search parameters.
    r"|(?:req|request|ctx|context|ctx\.request)\.(?:query|params|body)(?:\.[\w$]+|\[[^\[\]]+\])"
    r"|(?:req|request)\.param\([^()]*\)|c\.req\.(?:query|param)\([^()]*\)|[\w$.]*searchParams\.get\([^()]*\)"
    # Go: net/http, gin, echo, Fiber, chi, gorilla/mux.
    r"|[\w.]*URL\.Query\(\)\.Get\([^()]*\)|\w+\.(?:FormValue|PostFormValue)\([^()]*\)|\w+\.(?:Form|PostForm)\.Get\([^()]*\)"
    r"|(?:c|ctx)\.(?:Query|DefaultQuery|Param|PostForm|QueryParam|FormValue)\([^()]*\)|chi\.URLParam\([^()]*\)"
    r"|mux\.Vars\(\w+\)\[[^\]]+\]"
    # Java: the servlet API, Spring's bound parameters (server_input.py describes them).
    r"|\w+\.getParameter\([^()]*\)|@(?:RequestParam|PathVariable)\b.*|the handler parameter `String .*"
    # C#: ASP.NET's request collections, an action's string parameter not taken from a header.
    r"|Request\.(?:Query|Form|RouteValues)\[[^\]]+\]|the action parameter `(?!\[FromHeader).*"
    # Ruby: Rails's and Sinatra's params.
    r"|(?:request\.)?params(?:\[[^\[\]]+\])+"
    # PHP: the superglobals, Laravel's and PSR-7's readers.
    r"|\$_(?:GET|POST|REQUEST)\s*\[[^\]]+\]|\$request\s*->\s*(?:input|query|get|post|string)\s*\([^()]*\)"
    r"|\$request\s*->\s*getQueryParams\(\)\s*\[[^\]]+\]|\$\w+\s*->\s*getParam\([^()]*\)|request\s*\(\s*['\"][^'\"]+['\"]\s*\)"
    r"|\$request\s*->\s*(?:query|request)\s*->\s*get\([^()]*\)|\$this\s*->\s*input\s*->\s*(?:get|post|get_post)\([^()]*\)"
    r"|\$this\s*->\s*request\s*->\s*(?:get|post|request)\s*\[[^\]]+\]|Yii::\$app\s*->\s*request\s*->\s*(?:get|post)\([^()]*\)"
    r")"
    # What keeps the value as it came: a string conversion or trim, a default after it.
    r"(?:\.(?:presence|to_s|strip|trim|toString)(?:\(\))?)*"
)
# A default that follows the value (`|| '/'`, `or "/"`, `?? $base`, `.get("next", "/")` is read whole).
_DEFAULT = re.compile(r"\s*(?:\|\||\?\?|\bor\b)\s*")
_TERNARY = re.compile(r"^(?P<condition>.+?)\s\?\s(?P<then>.+?)\s:\s(?P<otherwise>.+)$")


def set_by_name(source: str) -> bool:
    """Whether `source` (an origin's source as the readers describe it) is a value a link sets by
    name, itself: the textbook open redirect, `redirect(request.args["next"])`; also either branch
    of a choice (`params[:url].present? ? params[:url] : root_path`) or before a default."""
    text = " ".join(source.split()).rstrip(";").strip()
    choice = _TERNARY.match(text)
    candidates = [choice.group("then"), choice.group("otherwise")] if choice else [text]
    pattern = _READ_BY_NAME.compiled()
    return any(pattern.fullmatch(_DEFAULT.split(candidate)[0].strip()) for candidate in candidates)


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

