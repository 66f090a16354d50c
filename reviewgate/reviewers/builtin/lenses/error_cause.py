"""An error wrapped with its message but not itself (Go, Java, JavaScript/TypeScript): Go's
`fmt.Errorf("load: %v", err)` or `errors.New("load: " + err.Error())` where `%w` keeps the
error; Java's `throw new XException("..." + e.getMessage())` in `catch (... e)` without `e` as the
cause; JavaScript's `throw new Error(`... ${error.message}`)` in `catch (error)` without
`{ cause: error }`.

The new error copies the old one's text and drops the old error: `errors.Is`/`errors.As` no longer
find `os.ErrNotExist` or a typed error behind it, a Java stack trace stops at the wrapper (the
"Caused by" that says where it failed is gone), and JavaScript's `error.cause` is empty. Not
reported: a message that does not carry the caught error (a deliberate new error), an error
built for a client at an API boundary (a class named for HTTP, a response, a user, validation),
Go before 1.13 (`go.mod` on the target side: no `%w` yet), Node before 16.9 (no `cause`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

ERROR_CAUSE_DROPPED = Rule(
    id="correctness/error-cause-dropped",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Error wrapped without its cause",
    full=(
        "A new error takes the caught error's message but not the error: `errors.Is`/`errors.As`, "
        "`instanceof` on the cause and the stack trace's \"Caused by\" no longer find what failed. Wrap it: "
        "`%w` in Go, the cause argument in Java, `{ cause: error }` in JavaScript."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "Go: `fmt.Errorf` with an error argument (`err`, `…Err`, `err.Error()`) and no `%w`, "
        "`errors.New(\"…\" + err.Error())`/`errors.New(fmt.Sprintf(…, err))`; Java: in `catch (X e)`, "
        "`throw new Y(… e.getMessage() …)` or `(\"…\" + e)` without `e` as an argument or `initCause`; "
        "JS/TS: in `catch (error)` or `.catch((error) => {…})`, `throw new Error(`… ${error.message}`)` "
        "without `{ cause: error }`"
    ),
    not_on=(
        "`%w` anywhere in the format (`fmt.Errorf(\"%w: %v\", ErrInvalid, err)`); a new error that carries "
        "nothing of the caught one; an error class meant for a client at an API boundary (named for HTTP, a "
        "response, a user, validation, status); `http.Error(w, err.Error(), …)` and logging; a catch block "
        "that logs the caught error's trace before it throws (`logger.error(`…${e.stack}`)`, "
        "`e.printStackTrace()`, `log.error(\"…\", e)`); the cause passed through a conditional (`error "
        "instanceof Error ? error : undefined`); JS/TS: an error built with "
        "an error code first (`new AppError(ErrorCodes.INVALID_CREDENTIAL, …)`, `new XError({ code, message })`), "
        "a library's public error; Go before 1.13 "
        "(the target branch's go.mod: no `%w` yet); Node before 16.9 (the target branch's `engines.node`: "
        "no `cause` yet)"
    ),
    fires=(
        Example(
            file=File("store/load.go", "go", """\
package store

import (
\t"fmt"
\t"os"
)

func Load(path string) ([]byte, error) {
\tdata, err := os.ReadFile(path)
\tif err != nil {
\t\treturn nil, fmt.Errorf("load %s: %v", path, err)
\t}
\treturn data, nil
}
"""),
            base=(File("go.mod", "text", "module example.com/shop\n\ngo 1.21\n"),),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("store/load.go", "go", """\
package store

import (
\t"fmt"
\t"os"
)

func Load(path string) ([]byte, error) {
\tdata, err := os.ReadFile(path)
\tif err != nil {
\t\treturn nil, fmt.Errorf("load %s: %w", path, err)
\t}
\treturn data, nil
}
"""),
            base=(File("go.mod", "text", "module example.com/shop\n\ngo 1.21\n"),),
        ),
    ),
    by_record=True,
    record=Record(
        findings=13,
        holding=0,
        where=(
            "with each tree's package.json, pyproject.toml, setup.cfg, setup.py and go.mod at the base, as a pull "
            "request sees them: the whole trees of the tuning half's 26 projects and of 153 PyPI and npm packages "
            "(2026-12-06 and 2026-12-07; the 98 of 2026-12-07 chosen as libraries that wrap and rethrow errors, "
            "compile regular expressions from literals or declare a runtime floor): 13, none holds. Each dropped "
            "error's text is in the new one and no caller matches what is lost: fastify `route.js:446` (the "
            "serializer build's error, its route named), tedious `aead-aes-256-cbc-hmac-algorithm.js:68` and "
            "`-encryption-key.js:41` (a padding error after a valid MAC, an HMAC over a checked key: no input "
            "reaches them), typeorm `SqljsDriver.js:138` (the fs error's code is in its text) and "
            "`EntityMetadataValidator.js:199` (the cycle, all a dependency graph's error holds), firebase-admin "
            "`utils/jwt.js:70` and `machine-learning.js:166`, parse-server `Config.js:64` (the config key named), "
            "undici `mock-utils.js:411, 416` (its own MockNotMatchedError rebuilt), hono `ssg.js:27`, less "
            "`parser/parser.js:262` (its own parse error, moved to the file's offset), mongodb `azure.ts:167` (its own "
            "network timeout error turned into its public one). Not one since: an error "
            "code first, the library's public error (firebase-admin 19, parse-server 4); a cause passed through a "
            "conditional (openai `subject-token-providers.ts:44, 173`). Not reported under an "
            "`engines.node` before 16.9 (knex `Migrator.js:473`, webpack `NormalModule.js:1633`, restify "
            "`authorization.js:72`, read with an empty base before)"
        ),
    ),
)

RULES = (ERROR_CAUSE_DROPPED,)
RULE_ERROR_CAUSE_DROPPED = ERROR_CAUSE_DROPPED.id

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

_LANGUAGES = frozenset({Language.GO, Language.JAVA, Language.JAVASCRIPT, Language.TYPESCRIPT})
_NEEDLES = ("Errorf", "errors.New", "catch")
# An error class meant for a client: its message is the point, its cause may be kept from it on purpose.
_BOUNDARY = LazyPattern(r"(?i)http|response|client|user|public|badrequest|notfound|forbidden|unauthori[sz]ed|validation|api|graphql|trpc|status")


# An error built with an error code first (`new FirebaseAppError(AppErrorCodes.INVALID_CREDENTIAL, …)`,
# `new Parse.Error(Parse.Error.INVALID_QUERY, …)`, `new XError({ code, message })`): a library's public
# error, whose code is what its callers match, made from a failure on purpose.
_CODED = LazyPattern(r"[\w$.]*\.[A-Z][A-Z0-9_]+|\{\s*(?:[^{}]*,\s*)?code\s*[:,}][\s\S]*\}")


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "go_errorf": re.compile(r"\bfmt\.Errorf\s*\("),
        "go_new": re.compile(r"\berrors\.New\s*\("),
        "go_error_name": re.compile(r"^(?:err|e|\w*Err|\w*[a-z]Error)$"),
        "catch": re.compile(
            r"\bcatch\s*\(\s*(?:final\s+)?(?:[\w.]+(?:\s*\|\s*[\w.]+)*\s+)?(?P<name>[A-Za-z_$][\w$]*)\s*(?::\s*[\w$]+\s*)?\)\s*\{"
            r"|\.\s*catch\s*\(\s*(?:async\s*)?\(?\s*(?P<callback>[A-Za-z_$][\w$]*)\s*(?::\s*[\w$]+\s*)?\)?\s*=>\s*\{"
        ),
        "throw": re.compile(r"\bthrow\s+new\s+(?P<class>[\w$.]+)\s*\("),
    }


def _finding(path: str, text: str, line: int, what: str, language: Language) -> Finding:
    code = code_line(text, line)
    advice = {
        Language.GO: "Wrap it with `%w` (`fmt.Errorf(\"load %s: %w\", path, err)`), which keeps the message and the error",
        Language.JAVA: "Pass the caught exception as the cause (`new XException(\"...\", e)`, or `initCause(e)`)",
    }.get(language, "Pass it as the cause: `new Error(`...`, { cause: error })`")
    return bug_finding(
        rule=RULE_ERROR_CAUSE_DROPPED,
        category="error-handling",
        title="Error wrapped without its cause",
        body=(
            f"{matched(code)}: {what}: the caught error's text goes into the new error, the error itself does not. "
            "Callers can no longer match it (`errors.Is`/`errors.As`, `instanceof` on the cause), and the trace "
            f"that says where it failed is lost. {advice}."
        ),
        path=path,
        line=line,
        code=code,
    )


class ErrorCauseLens:
    rule = RULE_ERROR_CAUSE_DROPPED

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, language, text in changed_sources(request, _LANGUAGES, _NEEDLES):
            from reviewgate.reviewers.builtin.languages.javascript_source import read_js

            added = change.added_lines()
            source = read_js(text)
            from reviewgate.reviewers.builtin.lenses.target_manifest import go_version, node_minimum

            if language is Language.GO:
                version = go_version(request, change.path)
                if version is None or version >= (1, 13, 0):
                    yield from _go(source, change.path, added)
                continue
            if language is not Language.JAVA:
                declared = node_minimum(request, change.path)
                if declared is not None and declared[2] < (16, 9, 0):
                    continue  # `cause` arrived in Node 16.9
            yield from _caught(source, change.path, added, language)


def _go(source: JsSource, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    text, masked, patterns = source.text, source.masked, _patterns()
    for match in patterns["go_errorf"].finditer(masked):
        line = source.line_of(match.start())
        arguments = call_arguments(source, match.end() - 1)
        if line not in added or len(arguments) < 2:
            continue
        format_text = text[slice(*arguments[0])]
        if "%w" in format_text or not format_text.strip().startswith(('"', "`")):
            continue
        for span in arguments[1:]:
            argument = text[slice(*span)].strip()
            name = argument.removesuffix(".Error()")
            if patterns["go_error_name"].match(name) and not _not_an_error(source, name, match.start()):
                yield _finding(path, text, line, f"`fmt.Errorf` formats `{argument}` with a verb other than `%w`",
                               Language.GO)
                break
    for match in patterns["go_new"].finditer(masked):
        line = source.line_of(match.start())
        arguments = call_arguments(source, match.end() - 1)
        if line not in added or len(arguments) != 1:
            continue
        argument = text[slice(*arguments[0])]
        found = re.search(r"\b(\w+)\.Error\(\)|\bfmt\.Sprint[f]?\([^()]*\b(err|\w+Err)\s*\)", argument)
        if found:
            yield _finding(path, text, line, f"`errors.New` makes a new error from `{found.group(0)}`", Language.GO)


def _not_an_error(source: JsSource, name: str, offset: int) -> bool:
    """A value named like an error that is not one: `recover()`'s (`err := recover()`), a parameter
    of type `any` or `interface{}`, or one the function asserts to `error` (`e, ok := err.(error)`):
    `%w` needs an error, so `%v` is what formats it."""
    line = source.line_of(offset)
    before = source.masked[source.line_starts[max(0, line - 40)] : offset]
    escaped = re.escape(name)
    return re.search(
        rf"\b{escaped}\s*:?=\s*recover\s*\(\s*\)|\b{escaped}\s+(?:any|interface\s*\{{\s*\}})\s*[,)]|\b{escaped}\s*\.\s*\(\s*error\s*\)",
        before,
    ) is not None


def _trace_logged(name: str, before: str) -> bool:
    """Whether the catch block writes the caught error's trace before it throws the new one
    (`logger.error(`${message}\\n${e.stack}`)`, `e.printStackTrace()`, `log.error("...", e)`): where it
    failed is kept in the log, and the new error carries its message for the caller."""
    escaped = re.escape(name)
    return re.search(
        rf"(?<![\w$.]){escaped}\s*\.\s*(?:stack\b|printStackTrace\s*\()"
        rf"|\b(?:log|logger|LOG|LOGGER|console)\s*\.\s*\w+\s*\([^;]*?(?<![\w$.]){escaped}\s*\)",
        before,
    ) is not None


def _caught(source: JsSource, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    """A `throw new X(...)` in a catch block that carries the caught error's text but not the error."""
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    text, masked, patterns = source.text, source.masked, _patterns()
    java = language is Language.JAVA
    for catch in patterns["catch"].finditer(masked):
        name = catch.group("name") or catch.group("callback")
        opener = catch.end() - 1
        closer = source.pairs.get(opener, opener)
        body = text[opener:closer]
        if re.search(rf"\b{re.escape(name)}\s*\.\s*initCause\s*\(|\.initCause\s*\(\s*{re.escape(name)}\b", body):
            continue
        for throw in patterns["throw"].finditer(masked, opener, closer):
            line = source.line_of(throw.start())
            if line not in added or _BOUNDARY.search(throw.group("class")):
                continue
            if _trace_logged(name, text[opener : throw.start()]):
                continue
            arguments = call_arguments(source, throw.end() - 1)
            carried = " ".join(text[slice(*span)] for span in arguments)
            escaped = re.escape(name)
            # Its text: `e.getMessage()`, `error.message`, `${error}`, `"..." + e`, `String(e)`.
            if not re.search(
                rf"(?<![\w$.]){escaped}\s*\.\s*(?:getMessage|getLocalizedMessage|toString|message)\b"
                rf"|\+\s*{escaped}\b(?!\s*\.)|(?<![\w$.]){escaped}\s*\+|\$\{{\s*{escaped}\s*\}}"
                rf"|\b(?:String|String\.valueOf)\s*\(\s*{escaped}\s*\)",
                carried,
            ):
                continue  # a new error of its own, or one handed a throwable (`e.getCause()`)
            whole = [text[slice(*span)].strip() for span in arguments]
            # The caught error (or the one it wraps) passed on, also through `error instanceof Error ? error : undefined`.
            if any(item == name or item.startswith((f"{name}.getCause(", f"{name}.getTargetException(", f"{name}.cause"))
                   or re.match(rf"{escaped}\s+instanceof\s+[\w$.]+\s*\?\s*{escaped}\s*:", item)
                   for item in whole) or re.search(rf"\bcause\s*:\s*{escaped}\b|\bcause\b(?=\s*[,}}])", carried):
                continue
            if not java and whole and _CODED.fullmatch(whole[0]):
                continue
            shown = f"`new {throw.group('class')}(...)` in the `catch` of `{name}`"
            what = f"{shown} takes `{name}`'s message" if java else f"{shown} takes `{name}`'s text and no `{{ cause: {name} }}`"
            yield _finding(path, text, line, what, language)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (ErrorCauseLens(),)
