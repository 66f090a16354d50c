"""The shell, SQL and eval sinks of Ruby and PHP, reported where request input reaches them.

Ruby and PHP write a value into text by interpolation (`"id = #{params[:id]}"`, `"id = '$id'"`)
as often as by concatenation, so each line is read as its live code: comments and the literal
parts of strings blanked, an interpolation's code kept. A sink on an added line is a finding when
the text it runs holds request input there (`params[…]`, `request.params`, `$_GET[…]`,
`$request->input(…)`, languages/server_input.py's sources), directly or through names assigned from
it on the lines above in the same method or script: `$id = $_REQUEST['id']; $query = "… '$id'";
mysqli_query($db, $query)`; or from a caller of the method, up to two calls up
(ruby_php_callers.py). A value through a number conversion or an escaping call (`.to_i`,
`Integer(…)`, `quote(…)`, `Shellwords.escape(…)`, `intval(…)`, `(int)`, `escapeshellarg(…)`),
checked to be digits or one of a list above the sink, or handed to a call that is not a string
function's holds no input; an SQL quote escape (`mysqli_real_escape_string(…)`) only where the
value is written between quotes (ruby_php_clearing.py). Bound parameters (`where("id = ?", params[:id])`, `$db->prepare("… ?")`) are not the
statement's text and are not read.

The sinks, and what text each runs, are ruby_php_sinks.py's.

Unlike the C-like languages, text built from other values is no finding at all here: Rails and PHP
code interpolates table and column names it owns everywhere, and only request input makes the
exposure the diff's."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.ruby_php_text import live_code, open_brackets
from reviewgate.reviewers.builtin.languages.server_input import RUBY_REQUEST_READS, request_source_pattern
from reviewgate.reviewers.builtin.lenses.security.ruby_php_clearing import (
    ESCAPES,
    QUOTE_ESCAPE_FUNCTIONS,
    QUOTE_ESCAPE_METHODS,
    QUOTE_ESCAPES,
    compact,
    sql_quoted,
    validated_values,
    without_bound_values,
    without_escapes,
)
from reviewgate.reviewers.builtin.lenses.security.ruby_php_sinks import (
    EVIDENCE,
    WHAT,
    declared_methods,
    has_a_sink,
    sink_texts,
)
from reviewgate.reviewers.builtin.lenses.security.shell_injection import RULE_SHELL
from reviewgate.reviewers.builtin.lenses.security.sql_injection import RULE_SQL

# How far above a sink its method's assignments are read.
_WINDOW_LINES = 60


_ASSIGNMENT = {
    Language.RUBY: LazyPattern(r"^\s*(?P<name>[a-z_]\w*)\s*(?:\+|<<|\|\|)?=(?![=~>])\s*(?P<value>.+)$"),
    # `@$sql = …`: the `@` that silences the statement's errors is no part of the name.
    Language.PHP: LazyPattern(r"^\s*@?\s*(?P<name>\$\w+)\s*\.?=(?![=>])\s*(?P<value>.+)$"),
}
# Where a method or function begins: the window above a sink stops there.
_SCOPE_START = {
    Language.RUBY: LazyPattern(r"^\s*def\s"),
    Language.PHP: LazyPattern(r"^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*function\s"),
}
# The request input of languages/server_input.py, and the server's variables the sender writes
# (`X-Forwarded-For`, the query string): in SQL or a command they are input like a parameter; a
# redirect to the request's own host is another matter, and that rule leaves them out.
_SOURCE_PATTERNS = {
    Language.RUBY: request_source_pattern(Language.RUBY),
    Language.PHP: (
        request_source_pattern(Language.PHP)
        + r"|\$_FILES\b|\$_SERVER\s*\[\s*['\"](?:HTTP_\w+|QUERY_STRING|REQUEST_URI|PATH_INFO)"
    ),
}
_SOURCES = {language: LazyPattern(pattern) for language, pattern in _SOURCE_PATTERNS.items()}
# Ruby's request read by name (a Rack app, middleware): what counts outside controllers and apps.
_RUBY_REQUEST_READS = LazyPattern(RUBY_REQUEST_READS)


class Found(NamedTuple):
    rule: str
    what: str
    evidence: str
    line: int
    code: str  # the line as written
    chain: str


# Where Ruby's bare `params` is the request's: a Rails controller, a Sinatra app, a Grape API. In any
# other file it is a name like another (`def bind(params)` in Active Record's statement cache).
_RUBY_REQUEST_FILE = LazyPattern(r"<\s*[\w:]*(?:Controller|Sinatra::(?:Base|Application)|Grape::API)\b|^\s*require\s+['\"]sinatra")


def request_sources(text: str, language: Language, path: str) -> LazyPattern:
    """The request input of this file: the language's, but in Ruby outside a controller, a Sinatra
    app or a Grape API only the request read by name."""
    if language is Language.RUBY and not (path.endswith("_controller.rb") or _RUBY_REQUEST_FILE.search(text)):
        return _RUBY_REQUEST_READS
    return _SOURCES[language]


# How request input reaches a sink's text from the method's callers (ruby_php_callers.py): given the
# sink's line, the live code and the text as written of what it runs, its rule, and the file's live code.
CallersChain = Callable[[int, str, str, str, list[str]], "str | None"]


def findings(text: str, language: Language, added: dict[int, str], sources: LazyPattern,
             callers: CallersChain | None = None) -> Iterator[Found]:
    """Each sink on an added line whose text request input (`sources`, request_sources) reaches,
    within its method or, through `callers`, from a call of it, with how it does."""
    if not has_a_sink(text, language):
        return
    lines = text.split("\n")
    live = _through_own_functions(lines, live_code(text, language).split("\n"), language)
    own = declared_methods(text, language)
    for number in sorted(added):
        if number > len(lines):
            continue
        found = next(_sinks_reached(lines, live, number, language, sources, callers, own), None)
        if found is not None:
            yield found


# A function the file declares, with its first parameter, and what it returns.
_DECLARED = {
    Language.PHP: re.compile(r"^\s*(?:(?:public|private|protected|static|final)\s+)*function\s+&?\s*(\w+)\s*\(\s*(?:[\w?\\|]+\s+)?&?(\$\w+)"),
    Language.RUBY: re.compile(r"^\s*def\s+(?:self\.)?(\w+[?!]?)\s*\(?\s*(\w+)"),
}
# What stands in the live code for the name of such a function: a call `_kept_as_text` passes.
_PASSED = "_"
_RETURN = re.compile(r"^\s*return\s+(?P<value>.+?);?\s*$")


def _through_own_functions(lines: list[str], live: list[str], language: Language) -> list[str]:
    """`live` with the name blanked where the file calls a function of its own that returns its
    first parameter through string functions only (`function blacklist($id) { $id =
    preg_replace('/or/i', "", $id); return $id; }`): the value comes out as the sender wrote it,
    less what the function strips, and is followed on as through a string function."""
    passing = set()
    declared = _DECLARED[language]
    for index, line in enumerate(live):
        header = declared.match(line)
        if header is None:
            continue
        name, parameter = header.groups()
        for number in range(index + 2, min(len(live), index + 40) + 1):
            if number - 2 > index and starts_a_method(lines[number - 2], language):
                break  # the next method: this one returned nothing on the way
            returned = _RETURN.match(live[number - 1])
            if returned is None:
                continue
            if ESCAPES[language].search("\n".join(live[index:number])):
                break  # it escapes or converts the value (a quote escape protects only where it is quoted)
            start, end = returned.span("value")
            if parameter_reaches(lines, live, index, parameter, number, live[number - 1][start:end],
                                 lines[number - 1][start:end], language, RULE_SHELL):
                passing.add(name)
            break
    if not passing:
        return live
    calls = re.compile(rf"(?<![\w$>:.]){'|'.join(map(re.escape, sorted(passing)))}(?=\s*\()")
    return [line if declared.match(line) else calls.sub(lambda found: _PASSED * len(found.group(0)), line) for line in live]


def _sinks_reached(lines: list[str], live: list[str], number: int, language: Language, sources: LazyPattern,
                   callers: CallersChain | None, own: frozenset[str]) -> Iterator[Found]:
    """Each sink on line `number` (`select(column).where("…")` has two) whose text request input reaches."""
    for sink, run, written in sink_texts(lines, live, number, language, own):
        chain = method_chain(run, written, lines, live, number, language, sink.rule, sources.compiled())
        if chain is None and callers is not None:
            chain = callers(number, run, written, sink.rule, live)
        if chain is not None:
            yield Found(sink.rule, WHAT[sink.rule], sink.evidence or EVIDENCE[sink.rule], number, lines[number - 1], chain)


def method_chain(run: str, written: str, lines: list[str], live: list[str], number: int, language: Language,
                 rule: str, sources: re.Pattern[str], direct: bool = True) -> str | None:
    """How request input (`sources`) is in `run` (the live code of `written`) on line `number`:
    directly (unless not `direct`: a parameter the method assigns again), or through a name the
    lines above in the same method assign from it; None where it is not, an escape wraps it, or a
    check above makes sure it is all digits or one of a list."""
    escapes = ESCAPES[language].compiled()
    shown = written
    run, written = without_escapes(run, written, language)
    if escapes.search(run):  # an SQL quote escape: the names it is assigned to are followed apart
        return None
    run = without_bound_values(run)
    first = scope_start(lines, number, language)
    validated = validated_values(lines, first, number, language)
    found = [match for match in _live_sources(sources, written, run) if _whole_source(written, match.start()) not in validated]
    if direct and found:
        return f"`{_shorten(shown)}` (line {number})"
    tainted, quote_escaped = _tainted_names(lines, live, first, number, language, sources, escapes, validated)
    for name, (source, line, note) in tainted.items():
        if name in validated or compact(source) in validated:
            continue
        if any(_kept_as_text(run, use.start()) for use in re.finditer(rf"(?<![\w$]){re.escape(name)}(?!\w)", run)):
            return f"`{name}`, from `{source}` at line {line}{note}"
    for name, (source, line, _note) in quote_escaped.items():
        uses = [found.start() for found in re.finditer(rf"(?<![\w$]){re.escape(name)}(?!\w)", run)]
        if any(rule != RULE_SQL or not sql_quoted(written, use) for use in uses):
            where = "written unquoted" if rule == RULE_SQL else "an SQL escape, which does not protect it here"
            return f"`{name}`, from `{source}` at line {line} ({where})"
    return None


def assigned_name(line: str, language: Language) -> str | None:
    """The name a line of live code assigns a value to, or None."""
    match = _ASSIGNMENT[language].compiled().match(line)
    return None if match is None else match.group("name")


def parameter_reaches(lines: list[str], live: list[str], header: int, parameter: str, number: int, run: str,
                      written: str, language: Language, rule: str) -> bool:
    """Whether `parameter`, of the method whose header is line index `header`, reaches `run` (the
    live code of `written`) on line `number` within the method; one assigned again above it reaches
    it only through what it is assigned."""
    assigned = any(assigned_name(line, language) == parameter for line in live[header + 1 : number - 1])
    if language is Language.PHP:
        pattern = re.compile(rf"(?<![\w$]){re.escape(parameter)}(?!\w)")
    else:
        pattern = re.compile(rf"(?<![\w.@:$]){re.escape(parameter)}(?![\w?!:(])")
    return method_chain(run, written, lines, live, number, language, rule, pattern, direct=not assigned) is not None


def starts_a_method(line: str, language: Language) -> bool:
    """Whether `line` declares a method or function (`def …`, `public static function …`)."""
    return _SCOPE_START[language].compiled().match(line) is not None


def scope_start(lines: list[str], number: int, language: Language) -> int:
    """The index of the first line of the method the sink on `number` is in, or of the window."""
    first = max(0, number - 1 - _WINDOW_LINES)
    scope = _SCOPE_START[language].compiled()
    for index in range(number - 2, first - 1, -1):
        if scope.match(lines[index]):
            return index
    return first


def _whole_source(text: str, start: int) -> str:
    """The source starting at `start` with its subscripts (`$_GET['id']`, `params[:user][:id]`)."""
    match = re.compile(r"[$\w.]+(?:\s*\[[^\]]*\])*").match(text, start)
    return compact(match.group(0)) if match else ""


def _live_sources(sources: re.Pattern[str], written: str, live: str) -> list[re.Match[str]]:
    """The sources in `written` that start in its live code (`live`, aligned with it) and outside any
    call that may turn them into something else: matched on the text as written, since
    `$_SERVER['HTTP_X_FORWARDED_FOR']` names its input in a string."""
    return [match for match in sources.finditer(written)
            if live[match.start()] == written[match.start()] and _kept_as_text(live, match.start())]


# Calls whose result is the text they were given, changed but still the sender's: a value inside any
# other call (`time_interval(params[:period])`, `Issue.find(id)`) may come out as anything, and is
# not followed. `isset`/`empty` answer a question; the value beside them is what is read.
_PASS_THROUGH = frozenset({
    "trim", "ltrim", "rtrim", "str_replace", "str_ireplace", "preg_replace", "stripslashes", "strtolower",
    "strtoupper", "urldecode", "rawurldecode", "base64_decode", "html_entity_decode", "sprintf", "vsprintf",
    "implode", "join", "substr", "strval", "isset", "empty", "array", "format", "String", "compact", "json_decode",
    # SQL text a nested prepare is given (its bound values are blanked before), `addslashes`, and the
    # quote escapes, whose result is followed apart (`QUOTE_ESCAPES`).
    "prepare", "addslashes", *QUOTE_ESCAPE_FUNCTIONS, *QUOTE_ESCAPE_METHODS,
})
_CALLED = re.compile(r"([A-Za-z_]\w*)\s*$")


def _kept_as_text(live: str, offset: int) -> bool:
    """Whether the value at `offset` reaches the end of the expression as text: every call around
    it is one of `_PASS_THROUGH` (parentheses that group, and brackets, keep it too)."""
    depth = 0
    for index in range(offset - 1, -1, -1):
        char = live[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth:
                depth -= 1
                continue
            if char == "(":
                called = _CALLED.search(live, 0, index)
                if called is not None and called.group(1) not in _PASS_THROUGH and called.group(1).strip(_PASSED):
                    return False
        elif char in ";\n" and depth == 0:
            break
    return True


def _whole_value(lines: list[str], live: list[str], index: int, start: int, language: Language) -> tuple[str, str]:
    """The value assigned on line `index` from column `start`, live and as written, with the lines
    it runs on to (up to ten): in PHP to the statement's `;`, in Ruby while a bracket is open or the
    line ends in an operator."""
    value, written = live[index][start:], lines[index][start:]
    for following in range(index + 1, min(len(live), index + 11)):
        if language is Language.PHP and ";" in value:
            break
        if language is Language.RUBY and open_brackets(value) <= 0 and not value.rstrip().endswith(("+", "\\", ",", "(")):
            break
        value, written = value + "\n" + live[following], written + "\n" + lines[following]
    if language is Language.RUBY:  # `x = y if params[:tag]`: the condition is not the value
        modifier = _RUBY_MODIFIER.search(value)
        if modifier is not None and open_brackets(value[: modifier.start()]) == 0:
            value, written = value[: modifier.start()], written[: modifier.start()]
    return value, written


_RUBY_MODIFIER = re.compile(r"\s(?:if|unless|while|until|rescue)\s")


def _shorten(text: str) -> str:
    flat = " ".join(text.split()).rstrip(";").strip()
    return flat if len(flat) <= 70 else flat[:69] + "…"


# A name, and the source it holds: the source as written, its line, and a note on how it got there.
Held = dict[str, tuple[str, int, str]]


def _tainted_names(lines: list[str], live: list[str], first: int, number: int, language: Language,
                   sources: re.Pattern[str], escapes: re.Pattern[str], validated: set[str]) -> tuple[Held, Held]:
    """Each name that holds request input at `number`: assigned from a source or a name holding
    one on the lines from `first` on, in order; another value, an escape, or only values checked to
    be digits (`$octet[0] . '.' . $octet[1]` after `is_numeric($octet[0])` …) clears it. And apart,
    the names that hold it through an SQL quote escape only (`mysqli_real_escape_string`)."""
    assignment = _ASSIGNMENT[language].compiled()
    holding: Held = {}
    quote_escaped: Held = {}
    for index in range(first, number - 1):
        match = assignment.match(live[index])
        if match is None:
            continue
        name = match.group("name")
        value, written = _whole_value(lines, live, index, match.start("value"), language)
        for checked in validated:  # spaced as it may be: `$octet[ 0 ]`; blanked in both, which stay aligned
            for found in list(re.finditer(r"\s*".join(map(re.escape, checked)), value)):
                blank = " " * (found.end() - found.start())
                value = value[: found.start()] + blank + value[found.end() :]
                written = written[: found.start()] + blank + written[found.end() :]
        appended = re.match(r"\s*@?\s*[$\w]+\s*(?:\+|<<|\.|\|\|)=", live[index]) is not None
        value, written = without_escapes(value, written, language)
        quote_escaped.pop(name, None)
        if escapes.search(value):
            held = _held_by(value, written, holding, sources, index + 1)
            only_quotes = QUOTE_ESCAPES.search(value) and not escapes.search(QUOTE_ESCAPES.compiled().sub(" ", value))
            if held is not None and only_quotes:
                quote_escaped[name] = held
            holding.pop(name, None)
            continue
        held = _held_by(value, written, holding, sources, index + 1)
        unquoted = next(((source, line, f" (escaped for quotes, written unquoted into `{name}`)")
                         for other, (source, line, _note) in quote_escaped.items()
                         for use in re.finditer(rf"(?<![\w$]){re.escape(other)}(?!\w)", value)
                         if not sql_quoted(written, use.start())), None)
        holds = held if held is not None else unquoted
        if holds is not None:
            holding[name] = holds
        elif not appended:
            holding.pop(name, None)
    return holding, quote_escaped


def _held_by(value: str, written: str, holding: Held, sources: re.Pattern[str], line: int) -> tuple[str, int, str] | None:
    """What request input a value holds: a source in it (`line` is its line), or a name holding one,
    the assigned name itself included (`$target = str_replace($blacklist, '', $target)` still holds it)."""
    if _live_sources(sources, written, value):
        return _shorten(written), line, ""
    return next((held for other, held in holding.items()
                 for use in re.finditer(rf"(?<![\w$]){re.escape(other)}(?!\w)", value)
                 if _kept_as_text(value, use.start())), None)
