"""The open-redirect reader of JavaScript, TypeScript and Go: the redirects of Express, Koa,
Fastify, Hono, Hapi, Next, the browser's `location`, net/http, gin, echo and Fiber, and a
`Location` header, on added lines; the request value each starts with, followed within its
function over blanked text (languages/text_flow.py); the checks that clear it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.open_redirect.guards import guard_patterns, is_referrer

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow

# The request's own path, as the sender wrote it: a trailing-slash redirect of `//evil.example`
# (`res.redirect(req.originalUrl + '/')`) goes to another host.
_JS_PATH = r"(?:req|request)\.(?:originalUrl|url|path)\b"
_GO_PATH = r"URL\.(?:Path|RawPath)\b|\.RequestURI\b"


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
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


def unchecked_redirects(
    text: str, path: str, added: dict[int, str], language: Language
) -> Iterator[tuple[int, str, bool, str]]:
    """(line, the request value it goes to, whether the only check is that it starts with `/`, its
    source) of each redirect on an added line whose target starts with request input no guard checks."""
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
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
        if origin is None or is_referrer(origin[0]):
            continue
        function = innermost(flow.functions, offset)
        body = text[function.body_open : function.body_close] if function else text
        guard = _text_guard(body, origin[2])
        if guard != "strong":
            yield source.line_of(offset), describe(origin), guard == "weak", origin[0]


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
    if guard_patterns()["guard_call"].search(body) or patterns["strong_js"].search(body):
        return "strong"
    if patterns["parsed"].search(body) and patterns["host_checked"].search(body):
        return "strong"
    if name and re.search(rf"\.(?:includes|has|indexOf)\(\s*{re.escape(name)}\b|\[{re.escape(name)}\]", body):
        return "strong"  # an allowlist: `ALLOWED.includes(next)`, `allowed[target]`
    return "weak" if patterns["weak_js"].search(body) else ""

