"""A value passed as the format of a printf-style call with nothing to format (Go, Java, Kotlin,
C#): `t.Fatalf(body)`, `fmt.Errorf(message)`, `log.Printf(line)`, `String.format(message)`,
`string.Format(text)`.

The call reads its first argument as a format: a `%` in the value (a URL's `%20`, a percentage, a
user's text) prints as `%!d(MISSING)` in Go, and throws in Java and Kotlin
(`UnknownFormatConversionException`, `MissingFormatArgumentException`); a `{` throws `FormatException`
in C#. `go vet` reports the Go form ("non-constant format string"). The plain call says what was
meant: `t.Fatal(body)`, `errors.New(message)`, `log.Print(line)`, the value itself, or a `"%s"`
format with the value as its argument.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

NON_CONSTANT_FORMAT = Rule(
    id="correctness/non-constant-format",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Value used as a format string with nothing to format",
    full=(
        "A printf-style call gets a value as its format and no arguments: a `%` in the value prints as "
        "`%!d(MISSING)` (Go) or throws (`UnknownFormatConversionException` in Java and Kotlin, a `{` throws "
        "`FormatException` in C#). Call the plain form (`t.Fatal`, `errors.New`, `log.Print`), or pass the value "
        "as an argument of a literal format (`\"%s\"`)."
    ),
    tags=("correctness", "reliability"),
    precision="high",
    fires_on=(
        "on an added line, a printf-style call whose format is not a string literal and which has no other "
        "argument: Go `fmt.Printf`/`Sprintf`/`Errorf`/`Fprintf(w, …)`, `log.Printf`/`Fatalf`/`Panicf`, a test's "
        "`t.Fatalf`/`Errorf`/`Logf`/`Skipf`, a logger's `Infof`/`Warnf`/`Debugf`/`Errorf`; Java and Kotlin "
        "`String.format(x)` (also after a `Locale`), `x.formatted()`, `System.out.printf(x)`; C# "
        "`string.Format(x)`"
    ),
    not_on=(
        "a string literal format (`t.Fatalf(\"got %d\", n)`, `String.format(\"%s\", x)`); a format with "
        "arguments after it; a name declared a constant in the file (Go `const`, Java `static final`, an "
        "upper-case constant name, C# `const`); the plain calls (`t.Fatal(body)`, `fmt.Print(x)`)"
    ),
    fires=(
        Example(file=File("server_test.go", "go", """\
package server

import "testing"

func TestGet(t *testing.T) {
\tif body := get(t, "/ping"); body != "pong" {
\t\tt.Fatalf(body)
\t}
}
""")),
    ),
    does_not_fire=(
        Example(file=File("server_test.go", "go", """\
package server

import "testing"

func TestGet(t *testing.T) {
\tif body := get(t, "/ping"); body != "pong" {
\t\tt.Fatalf("GET /ping: got %q", body)
\t}
}
""")),
    ),
    by_record=True,
    record=Record(
        findings=0,
        holding=0,
        where=(
            "no finding in the whole trees of the tuning half's Go, Java, Kotlin and C# projects (gin, chi, retrofit, "
            "okhttp, koin, FluentValidation; 2026-12-06), whose code `go vet` already keeps clean. Written for later "
            "fixes on the tuning half: chi's `t.Fatalf(body)` in its tests, changed to `t.Fatal(body)` by two fixes "
            "(\"non-constant format string\", 8 merged PRs' lines)"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
    ),
)

RULES = (NON_CONSTANT_FORMAT,)
RULE_NON_CONSTANT_FORMAT = NON_CONSTANT_FORMAT.id

_LANGUAGES = frozenset({Language.GO, Language.JAVA, Language.KOTLIN, Language.CSHARP})
_NEEDLES = ("f(", "format", "Format")
# Go's printf family and the printf-style methods of testing.T, log.Logger and the common
# loggers: the format is the first argument, after the writer for the Fprintf/Appendf forms.
_GO_FORMAT_FIRST = (
    r"Printf|Sprintf|Errorf|Fatalf|Panicf|Logf|Skipf|Infof|Warnf|Warningf|Debugf|Tracef|Noticef"
)
_GO_FORMAT_SECOND = r"Fprintf|Appendf"


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "go_first": re.compile(rf"(?<![\w$])(?:[A-Za-z_]\w*\s*\.\s*)+(?P<name>{_GO_FORMAT_FIRST})\s*\("),
        "go_second": re.compile(rf"(?<![\w$])fmt\s*\.\s*(?P<name>{_GO_FORMAT_SECOND})\s*\("),
        "jvm_format": re.compile(r"(?<![\w$.])(?:java\.lang\.)?String\s*\.\s*(?P<name>format)\s*\("),
        "jvm_printf": re.compile(r"(?<![\w$.])System\s*\.\s*(?:out|err)\s*\.\s*(?P<name>printf)\s*\("),
        "jvm_formatted": re.compile(r"(?P<receiver>[A-Za-z_]\w*)\s*\.\s*(?P<name>formatted)\s*\(\s*\)"),
        "csharp_format": re.compile(r"(?<![\w$.])(?:[Ss]tring|System\.String)\s*\.\s*(?P<name>Format)\s*\("),
        "literal": re.compile(r"""^\s*(?:@?\$?"|`|\"\"\"|')"""),
        "locale": re.compile(r"\bLocale\b|\bCultureInfo\b|\bIFormatProvider\b|^\s*(?:locale|provider|culture)\s*$"),
    }


def _finding(path: str, text: str, line: int, what: str, language: Language) -> Finding:
    code = code_line(text, line)
    advice = {
        Language.GO: "Call the plain form (`t.Fatal(body)`, `errors.New(message)`, `log.Print(line)`) or pass it "
        "to a literal format (`t.Fatalf(\"%s\", body)`)",
        Language.CSHARP: "Use the value itself, or pass it to a literal format (`string.Format(\"{0}\", text)`)",
    }.get(language, "Use the value itself, or pass it to a literal format (`String.format(\"%s\", message)`)")
    consequence = {
        Language.GO: "a `%` in it prints as `%!d(MISSING)` or eats the text after it",
        Language.CSHARP: "a `{` or `}` in it throws `FormatException`",
    }.get(language, "a `%` in it throws (`UnknownFormatConversionException`, `MissingFormatArgumentException`)")
    return bug_finding(
        rule=RULE_NON_CONSTANT_FORMAT,
        category="correctness",
        title="Value used as a format string with nothing to format",
        body=f"{matched(code)}: {what}: the call reads it as a format, so {consequence}. {advice}.",
        path=path,
        line=line,
        code=code,
    )


class NonConstantFormatLens:
    rule = RULE_NON_CONSTANT_FORMAT

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, language, text in changed_sources(request, _LANGUAGES, _NEEDLES):
            from reviewgate.reviewers.builtin.languages.javascript_source import read_js

            added = change.added_lines()
            source = read_js(text)
            constants = _constants(source.masked, language)
            yield from _calls(source, change.path, added, language, constants)


def _constants(masked: str, language: Language) -> set[str]:
    """Names the file declares as constants: a format held in one is the developer's own text."""
    if language is Language.GO:
        single = re.findall(r"\bconst\s+([A-Za-z_]\w*)", masked)
        grouped = [
            name
            for block in re.findall(r"\bconst\s*\(([^()]*)\)", masked)
            for name in re.findall(r"^\s*([A-Za-z_]\w*)", block, re.MULTILINE)
        ]
        return set(single) | set(grouped)
    if language is Language.CSHARP:
        return set(re.findall(r"\bconst\s+\w+\s+([A-Za-z_]\w*)", masked))
    return set(re.findall(r"\b(?:static\s+final|final\s+static|const\s+val)\s+(?:[\w<>\[\]]+\s+)?([A-Za-z_]\w*)\s*[=:]", masked))


def _calls(
    source: JsSource, path: str, added: dict[int, str], language: Language, constants: set[str]
) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    text, masked, patterns = source.text, source.masked, _patterns()
    if language is Language.GO:
        forms = [(patterns["go_first"], 0), (patterns["go_second"], 1)]
    elif language is Language.CSHARP:
        forms = [(patterns["csharp_format"], 0)]
    else:
        forms = [(patterns["jvm_format"], 0), (patterns["jvm_printf"], 0)]
    reported: set[int] = set()
    for pattern, position in forms:
        for match in pattern.finditer(masked):
            line = source.line_of(match.start())
            if line not in added or line in reported:
                continue
            arguments = [text[slice(*span)] for span in call_arguments(source, match.end() - 1)]
            if language is not Language.GO and len(arguments) == 2 and patterns["locale"].search(arguments[0]):
                arguments = arguments[1:]  # `String.format(Locale.ROOT, x)`: the format comes second
            if len(arguments) != position + 1:
                continue
            value = arguments[position].strip()
            if not value or patterns["literal"].match(value) or _constant(value, constants):
                continue
            reported.add(line)
            yield _finding(path, text, line, f"`{match.group('name')}` gets `{value}` as its format and no arguments", language)
    if language in (Language.JAVA, Language.KOTLIN):
        for match in patterns["jvm_formatted"].finditer(masked):
            line = source.line_of(match.start())
            receiver = match.group("receiver")
            if line in added and line not in reported and not _constant(receiver, constants):
                reported.add(line)
                yield _finding(path, text, line, f"`{receiver}.formatted()` formats `{receiver}` with no arguments", language)


def _constant(value: str, constants: set[str]) -> bool:
    """A constant's name (declared so in the file, or spelt as one: `DEFAULT_FORMAT`)."""
    name = value.rsplit(".", 1)[-1]
    return name in constants or (name.isupper() and len(name) > 1)


# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (NonConstantFormatLens(),)
