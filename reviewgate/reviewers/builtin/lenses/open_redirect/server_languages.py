"""The open-redirect reader of Java, C#, Ruby and PHP: the redirects of servlets and Spring,
ASP.NET, Rails and Sinatra, Laravel, Slim and PHP's own `header`, as a table of sinks per
language, on added lines; the request value each target starts with
(languages/server_input.py), and the checks in these frameworks' words that clear it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.open_redirect.guards import guard_patterns, is_referrer

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

# Each redirect sink: the pattern that finds it (on the text; a match inside a string or comment is
# dropped), and how its target is read: the nth argument of the call the match ends in (`(`), or
# what follows the match to the end of the statement (`rest`), or a Ruby call without parentheses.
# A header's name is read in any case (`header("location: " . $target)`).
_SERVER_SINKS: dict[Language, tuple[tuple[str, str], ...]] = {
    Language.JAVA: (
        (r"\.\s*sendRedirect\s*\(", "0"), (r"\bnew\s+RedirectView\s*\(", "0"),
        (r"\.\s*location\s*\(\s*URI\s*\.\s*create\s*\(", "0"), (r"\bsetHeader\s*\(\s*\"(?i:location)\"\s*,", "rest"),
        (r"\"redirect:\"\s*\+", "rest"),
    ),
    Language.CSHARP: (
        (r"(?<![\w.])Redirect(?:Permanent|PreserveMethod|PermanentPreserveMethod)?\s*\(", "0"),
        (r"\b(?:Response|Results)\s*\.\s*Redirect\s*\(", "0"),
        (r"\bHeaders\s*\[\s*\"(?i:location)\"\s*\]\s*=(?!=)", "rest"),
    ),
    Language.RUBY: (
        (r"\bredirect_to\b\s*", "line"), (r"^\s*redirect\b\s*", "line"), (r"\bredirect_back_or_to\b\s*", "line"),
        (r"\bredirect_back\b\s*\(?[^\n]*?\bfallback_location:\s*", "rest"),
        (r"\bheaders\s*\[\s*['\"](?i:location)['\"]\s*\]\s*=(?!=)", "line"),
    ),
    Language.PHP: (
        (r"(?<![\w>$:])redirect\s*\((?!\s*\))", "0"), (r"\bredirect\s*\(\s*\)\s*->\s*(?:to|away)\s*\(", "0"),
        (r"\bRedirect::(?:to|away)\s*\(", "0"), (r"\bnew\s+RedirectResponse\s*\(", "0"),
        (r"->\s*withHeader\s*\(\s*['\"](?i:location)['\"]\s*,", "rest"),
        (r"\bheader\s*\(\s*['\"](?i:location):\s*['\"]\s*\.", "rest"),
    ),
}
# Checks that the target stays on this site, in these frameworks' words.
_SERVER_GUARDS = LazyPattern(
    r"\bIsLocalUrl\b|\burl_from\b|\bLocalRedirect\b|\bisLocalUrl\b|\ballowed_hosts?\b|\bin_array\s*\(|\.includes?\?\s*\("
    r"|\bUriComponentsBuilder\b|\.getHost\s*\(|\bparse_url\s*\("
    # A prefix check against something other than a literal `/`: this site's own base URL
    # (`str_starts_with($returnUrl, url('/'))`, `target.start_with?(request.base_url)`).
    r"|\bstr_starts_with\s*\(\s*[^,()]+,\s*(?!['\"]/)|\.start_with\?\s*\(?\s*(?!['\"]/)[\w@$]"
    r"|\.(?:startsWith|StartsWith)\s*\(\s*(?![\"']/)[\w@$]"
)
# A record the parameter looks up (`Product.friendly.find(params[:id])`, `User::findOrFail($id)`):
# redirecting to it goes to the URL this application builds for it (Rails's `url_for(record)`),
# or to one of its attributes, which the database holds, not the request.
_RECORD_LOOKUP: dict[Language, LazyPattern] = {
    Language.RUBY: LazyPattern(r"\.\s*(?:find|find_by!?|find_or_create_by!?|find_or_initialize_by)\b(?!\s*\{)"),
    Language.PHP: LazyPattern(r"(?:::|->)\s*(?:find|findOrFail|findOrNew|firstOrFail|firstWhere)\s*\("),
}
# Rails refuses a redirect to another host with `allow_other_host: false`.
_OTHER_HOSTS_REFUSED = LazyPattern(r"\ballow_other_host:\s*false\b")


# Rails's, Laravel's and Symfony's route helpers: a path or URL the application builds
# (`$this->generateUrl('profile', …)`, `$this->router->generate('_profiler', …)`).
_ROUTE_HELPER = LazyPattern(
    r"(?:[\w:]+\.)?(?:\w+_(?:path|url)(?:_for)?|route|url_for|action)\s*[(\s]"
    r"|\$\w+\s*->\s*(?:\w+\s*->\s*)?(?:generate|generateUrl)\s*\("
)
# A choice between two of them, or literals, that a parameter makes (`params[:continue] ? new_group_path
# : groups_path`): the parameter picks one of the application's own paths.
_ROUTE_OR_LITERAL = r"(?:[\w.]*_(?:path|url)(?:\([^()]*\))?|'[^']*'|\"[^\"]*\")"
_ROUTE_CHOICE = LazyPattern(rf"\(?[^?]+\?\s*{_ROUTE_OR_LITERAL}\s*:\s*{_ROUTE_OR_LITERAL}\s*\)?")


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


def _in_comment_or_string(source: JsSource, line: int, offset: int, language: Language) -> bool:
    """Whether `offset` is in a Ruby or PHP comment or string (the JS reader masks neither `#` nor
    Ruby's strings): `#     redirect_to params[:redirect_url]` in a doc comment runs nothing."""
    if language not in (Language.RUBY, Language.PHP):
        return False
    from reviewgate.reviewers.builtin.languages.ruby_php_text import live_code

    line_start = source.line_starts[line - 1]
    line_end = source.text.find("\n", line_start)
    raw = source.text[line_start : len(source.text) if line_end < 0 else line_end]
    column = offset - line_start
    return column < len(raw) and live_code(raw, language)[column] != raw[column]


def unchecked_redirects(
    text: str, path: str, added: dict[int, str], language: Language
) -> Iterator[tuple[int, str, bool, str]]:
    """(line, the request value it goes to, False, its source) of each redirect on an added line whose
    target starts with request input no guard checks (a check of only a leading `/` is not told apart)."""
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.server_input import origin_of

    if is_test_file(path):
        return  # a test's handler is a fixture, never deployed
    source = read_js(text)
    guard_call = guard_patterns()["guard_call"]
    lookup = _RECORD_LOOKUP.get(language)
    record_lookup = None if lookup is None else lookup.compiled()
    for pattern, how in _SERVER_SINKS[language]:
        for match in re.finditer(pattern, text, re.MULTILINE):
            start = match.start() + len(match.group(0)) - len(match.group(0).lstrip())
            line = source.line_of(start)
            if line not in added or source.masked[start] != text[start] or _in_comment_or_string(source, line, start, language):
                continue
            line_end = text.find("\n", start)
            if _OTHER_HOSTS_REFUSED.search(text, start, len(text) if line_end < 0 else line_end):
                continue
            span = _server_target(source, match, how)
            if span is None:
                continue
            first = source.skip_space(span[0])
            if first < span[1] and text[first] in "\"'" and text[first + 1 : first + 3].strip("\"'") not in ("", "/"):
                continue  # starts with fixed text: the host is this site's
            if _ROUTE_HELPER.match(text, first, span[1]) or _ROUTE_CHOICE.fullmatch(text[first : span[1]].strip()):
                continue  # a path this application builds from its routes (`after_sign_in_path_for(user)`)
            origin = origin_of(source, language, span[0], span[1], record_lookup)
            if origin is None or is_referrer(origin.source):
                continue
            window = text[source.line_starts[max(0, line - 30)] : span[1]]
            if guard_call.search(window) or _SERVER_GUARDS.search(window):
                continue
            yield line, origin.describe(), False, origin.source

