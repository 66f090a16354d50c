"""Request input in Java (servlets, Spring), C# (ASP.NET), Ruby (Rails, Sinatra), PHP (Laravel,
Slim, plain PHP) and, for the security rules' chains, Kotlin (servlets, Spring, Ktor), and the calls a
bug rule looks for it in, read from text with strings
and comments blanked (javascript_source.read_js: the same quotes and `//` comments).

A scanner, not a parser: a name is input when the lines before its use assign it from a source
(`String next = request.getParameter("next");`, `$next = $request->input('next');`), or when it is
a parameter that the framework fills from the request (Spring's `@RequestParam String next`, an
ASP.NET controller action's `string returnUrl`). What a rule's guard or escape looks like is the
rule's own (`Input.clean`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

SERVER_LANGUAGES = frozenset({Language.JAVA, Language.CSHARP, Language.RUBY, Language.PHP})
# How far back from a use the scan looks for the assignment or the parameter that makes a name input.
_LOOK_BACK_LINES = 40

_SERVLET_INPUT = (
    r"\b\w+\s*\.\s*(?:getParameter|getParameterValues|getParameterMap|getParameterNames|getHeader|getHeaders"
    r"|getHeaderNames|getQueryString|getCookies|getRequestURI|getRequestURL|getPathInfo|getInputStream|getReader"
    r"|getPart|getParts)\s*\("
)
# Ruby's request read by name (`request.params`, `request.headers` …): what a Rack app or middleware
# reads, where a bare `params` may be any method's argument (lenses/security/ruby_php.py).
RUBY_REQUEST_READS = (
    r"\brequest\s*\.\s*(?:params|query_parameters|request_parameters|headers|body|query_string|raw_post)\b"
)
_SOURCES = {
    # The servlet API's request input, every reader of it (javax/jakarta HttpServletRequest).
    Language.JAVA: _SERVLET_INPUT,
    Language.CSHARP: (
        r"\bRequest\s*\.\s*(?:Query|Form|Headers|Cookies|QueryString|RouteValues)\b"
    ),
    # Kotlin: the servlet API as in Java, and Ktor's call (read by the security rules' chains only).
    Language.KOTLIN: (
        _SERVLET_INPUT + r"|\bcall\s*\.\s*(?:parameters|request\s*\.\s*(?:queryParameters|headers|cookies))\b|\breceiveParameters\s*\("
    ),
    Language.RUBY: rf"(?<![\w.@:$])params\b|{RUBY_REQUEST_READS}|(?<![\w.@:$])cookies\s*\[",
    # PHP's superglobals and its raw body (`php://input`); Laravel's, PSR-7's, Symfony's,
    # CodeIgniter's, OpenCart's and Yii's readers.
    Language.PHP: (
        r"\$_(?:GET|POST|REQUEST|COOKIE)\b|\b(?:file_get_contents|fopen)\s*\(\s*['\"]php://input['\"]"
        r"|\$request\s*->\s*(?:input|query|get|post|header|cookie|all|string|json|getContent)\s*\("
        r"|->\s*(?:getQueryParams|getParsedBody|getQueryParam|getParam|getHeaderLine)\s*\(|\brequest\s*\(\s*\)\s*->"
        r"|\brequest\s*\(\s*['\"]|\$request\s*->\s*(?:query|request|cookies|headers|attributes)\s*->\s*(?:get|all)\s*\("
        r"|\$this\s*->\s*input\s*->\s*(?:get|post|get_post|post_get|cookie)\s*\("
        r"|\$this\s*->\s*request\s*->\s*(?:get|post|request|cookie|files)\s*\[|\bYii::\$app\s*->\s*request\s*->"
    ),
}
def request_source_pattern(language: Language) -> str:
    """The pattern of the language's request input (Java, C#, Kotlin, Ruby, PHP)."""
    return _SOURCES[language]


_ASSIGNMENT = {
    # A value ends at its `;`, never past a block's brace (`try (Connection c = open()) {`).
    Language.JAVA: r"(?P<name>[A-Za-z_]\w*)\s*=(?!=)\s*(?P<value>[^;{}]+);",
    Language.CSHARP: r"(?P<name>[A-Za-z_]\w*)\s*=(?!=)\s*(?P<value>[^;{}]+);",
    Language.KOTLIN: r"\b(?:val|var)\s+(?P<name>[A-Za-z_]\w*)(?:\s*:\s*[\w.<>?]+)?\s*=(?!=)\s*(?P<value>[^;\n]+)",
    Language.RUBY: r"(?P<name>[a-z_]\w*)\s*=(?![=~])\s*(?P<value>[^\n]+)",
    Language.PHP: r"(?P<name>\$\w+)\s*=(?![=>])\s*(?P<value>[^;]+);",
}
# Parameters the framework fills from the request: Spring's annotations, an ASP.NET action's strings.
_SPRING_PARAMETER = r"@(?:RequestParam|PathVariable|RequestHeader|CookieValue|RequestBody)\b(?:\([^)]*\))?\s*(?:final\s+)?[\w.<>\[\]]+\s+(?P<name>\w+)"
_SPRING_KOTLIN_PARAMETER = r"@(?:RequestParam|PathVariable|RequestHeader|CookieValue|RequestBody)\b(?:\([^)]*\))?\s*(?P<name>\w+)\s*:"
# A Spring handler method (`@GetMapping(…)`, `@PostMapping`, `@RequestMapping` …, more annotations
# after it) and its parameter list: a `String` parameter with no annotation is bound from the
# request's parameter of its name, as `@RequestParam` binds one.
_SPRING_HANDLER = (
    r"@(?:Get|Post|Put|Delete|Patch|Request)Mapping\b(?:\([^)]*\))?(?:\s*@\w+(?:\([^)]*\))?)*\s*"
    r"(?:(?:public|protected|private|final|static)\s+)*[\w.<>\[\]]+\s+\w+\s*\((?P<parameters>[^)]*)\)"
)
_UNANNOTATED_STRING = r"(?:^|,)\s*(?:final\s+)?String\s+(?P<name>\w+)\s*(?=,|$)"
_CSHARP_ACTION = (
    r"\bpublic\s+(?:async\s+)?(?:virtual\s+)?(?:Task\s*<\s*)?(?:IActionResult|ActionResult|IResult|RedirectResult)\b"
    r"[^(]*\((?P<parameters>[^)]*)\)"
)
_CSHARP_STRING_PARAMETER = r"(?:\[From\w+[^\]]*\]\s*)?string\??\s+(?P<name>\w+)"


@dataclass(frozen=True)
class Origin:
    """Where a use's value came from: the source as written, its line, the name it went through ("" for a source used directly)."""

    source: str
    line: int
    name: str = ""

    def describe(self) -> str:
        # A parameter's source is already words with its code quoted, not code to quote.
        source = self.source if "`" in self.source else f"`{self.source}`"
        if self.name:
            return f"`{self.name}`, from {source} at line {self.line}"
        return f"{source} (line {self.line})"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _shorten(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 70 else flat[:69] + "…"


def origin_of(
    source: JsSource,
    language: Language,
    start: int,
    end: int,
    escapes: re.Pattern[str] | None,
    sources: re.Pattern[str] | None = None,
    through_names: bool = False,
) -> Origin | None:
    """The input that the expression `text[start:end]` holds, directly or through a name assigned
    from it (or a request parameter) in the lines before; None when none does, or an escape wraps it.
    `sources` stands for the language's request input where another value is followed (a parameter).
    `through_names`: also through names assigned from such names (`query = "…" + name`), in turn."""
    text = source.text
    expression = text[start:end]
    if escapes is not None and escapes.search(expression):
        return None
    followed = sources or _compiled(_SOURCES[language])
    direct = followed.search(source.masked, start, end)
    if direct is not None:
        return Origin(_shorten(text[direct.start() : end]), source.line_of(start))
    line = source.line_of(start)
    window_start = source.line_starts[max(0, line - 1 - _LOOK_BACK_LINES)]
    names = set(re.findall(r"\$?[A-Za-z_]\w*", source.masked[start:end]))
    parameters = {
        parameter[0]: Origin(parameter[1], source.line_of(parameter[2]), parameter[0])
        for parameter in (() if sources is not None else _request_parameters(source, language, window_start, start))
    }
    for name, parameter in parameters.items():
        if name in names:
            return parameter
    if through_names:
        return _through_names(source, language, window_start, start, names, followed, parameters, escapes)
    found: Origin | None = None
    for assignment in _compiled(_ASSIGNMENT[language]).finditer(source.masked, window_start, start):
        name = assignment.group("name")
        if name not in names:
            continue
        value_start, value_end = assignment.span("value")
        value = followed.search(source.masked, value_start, value_end)
        if value is None or (escapes is not None and escapes.search(text, value_start, value_end)):
            found = None if found is not None and found.name == name else found  # reassigned from something else
            continue
        found = Origin(_shorten(text[value_start:value_end]), source.line_of(assignment.start()), name)
    return found


def _through_names(
    source: JsSource,
    language: Language,
    window_start: int,
    start: int,
    names: set[str],
    followed: re.Pattern[str],
    parameters: dict[str, Origin],
    escapes: re.Pattern[str] | None,
) -> Origin | None:
    """The input a name of `names` holds through the assignments between `window_start` and
    `start`, each read in order: a value with a source, a request parameter or a name holding input
    makes its name hold it; any other value, or one an escape wraps, clears it."""
    text = source.text
    holding = dict(parameters)
    escaped: set[str] = set()  # names assigned an escaped value: no longer what `followed` finds
    for assignment in _compiled(_ASSIGNMENT[language]).finditer(source.masked, window_start, start):
        name = assignment.group("name")
        value_start, value_end = assignment.span("value")
        if escapes is not None and escapes.search(text, value_start, value_end):
            holding.pop(name, None)
            escaped.add(name)
            continue
        escaped.discard(name)
        found = (match.group(0) for match in followed.finditer(source.masked, value_start, value_end))
        if any(match not in escaped for match in found):
            holding[name] = Origin(_shorten(text[value_start:value_end]), source.line_of(assignment.start()), name)
            continue
        mentioned = re.findall(r"\$?[A-Za-z_]\w*", source.masked[value_start:value_end])
        via = next((holding[other] for other in mentioned if other in holding and other != name), None)
        if via is None:
            holding.pop(name, None)
        else:
            holding[name] = Origin(via.source, via.line, name)
    return next((holding[name] for name in sorted(names) if name in holding), None)


def _request_parameters(source: JsSource, language: Language, start: int, end: int) -> Iterator[tuple[str, str, int]]:
    """(name, how it is declared, offset) of each parameter filled from the request declared in `text[start:end]`."""
    text = source.text
    if language in (Language.JAVA, Language.KOTLIN):
        spring = _SPRING_PARAMETER if language is Language.JAVA else _SPRING_KOTLIN_PARAMETER
        for match in _compiled(spring).finditer(text, start, end):
            yield match.group("name"), _shorten(match.group(0)), match.start()
        if language is Language.JAVA:
            for handler in _compiled(_SPRING_HANDLER).finditer(text, start, end):
                for parameter in _compiled(_UNANNOTATED_STRING).finditer(handler.group("parameters")):
                    declared = f"the handler parameter `String {parameter.group('name')}` (bound from the request)"
                    yield parameter.group("name"), declared, handler.start("parameters")
    elif language is Language.CSHARP and re.search(r":\s*(?:Controller|ControllerBase)\b|\[Http(?:Get|Post)", text):
        actions = list(_compiled(_CSHARP_ACTION).finditer(text, start, end))
        if actions:
            action = actions[-1]  # the method the use is in
            for parameter in _compiled(_CSHARP_STRING_PARAMETER).finditer(action.group("parameters")):
                yield parameter.group("name"), f"the action parameter `{parameter.group(0).strip()}`", action.start()


def sink_arguments(source: JsSource, opener: int) -> list[tuple[int, int]]:
    """The arguments of the call whose `(` is at `opener` (text_flow's reading of a call)."""
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    return call_arguments(source, opener)


def line_argument(source: JsSource, start: int) -> tuple[int, int]:
    """A call without parentheses (Ruby's `redirect_to params[:next], allow_other_host: true`):
    its first argument, to the first top-level comma or the end of the line."""
    masked = source.masked
    end = masked.find("\n", start)
    end = len(masked) if end < 0 else end
    depth = 0
    for index in range(start, end):
        char = masked[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return start, index
            depth -= 1
        elif char == "," and depth == 0:
            return start, index
    return start, end
