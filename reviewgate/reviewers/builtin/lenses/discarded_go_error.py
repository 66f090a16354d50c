"""A discarded Go error whose value is used (Go here; a JS/TS callback's unread error in
discarded_callback_error.py): `v, _ := f(...)` where the `_` is the error of
a call that can fail, and `v` is read after it in the same function. On failure `v` is the zero
value (0, "", a nil pointer or map) and the code carries on with it: a wrong port of 0, an empty
body signed, a nil `*url.URL` dereferenced.

The call must be known to return an error last: a standard-library function from a table
(`strconv.Atoi`, `url.Parse`, `json.Marshal`, `os.ReadFile`...), or a function or method this
file declares with `error` as its last result. Not in test files (a test's fixed inputs cannot
fail), not when `v` is never read (`_ = v`-style drops) or is first compared with its zero value
(`if port == 0 { port = 8080 }`: the failure handled as the default) or is the bool an `if`
tests (`if ok, _ := strconv.ParseBool(tag); ok {`: false on failure is the default), not for map lookups, type assertions or
channel receives (their second value is not an error).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

DISCARDED_ERROR_USED = Rule(
    id="correctness/discarded-error-used",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Error discarded, its value used",
    full=(
        "Go: `v, _ := f()` throws away the error of a call that can fail, and `v` is used afterwards: "
        "on failure it is the zero value, read as if it were real. JavaScript/TypeScript: a "
        "Node-style callback never reads its error (`(err, data) => JSON.parse(data)`), and uses the "
        "value, undefined on failure. Check the error."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "Go: `v, _ := f(…)` where the `_` is the error of a call known to return one (a table of "
        "standard-library calls: `strconv.Atoi`, `url.Parse`, `json.Marshal`, `os.ReadFile` …, or a "
        "function or method of the file declared with `error` last) and `v` is read later in the "
        "function. JS/TS: a Node-style callback passed to a call, `(err, data) => …` or `function "
        "(err, rows) { … }` of 2 or 3 parameters, whose first (`err`, `error`, `er`, `e`) is never "
        "read and a later one is: `fs.readFile(p, (err, data) => JSON.parse(data))`"
    ),
    not_on=(
        "a checked `err`; `v` never read, or only `_ = v`; `v` first compared with its zero value "
        "(`if port == 0 { … }`: the failure handled as a default), or a bool an `if` tests (`if ok, _ "
        ":= strconv.ParseBool(tag); ok {`); map lookups, type assertions, channel receives; test "
        "files; JS/TS: the error read at all (`if (err) return cb(err)`, `if (err) throw err`, "
        "`next(err)`), or `arguments` read; an error named `_` or `_err` (ignored on purpose, by the "
        "`no-unused-vars` convention: not reported); a promise's `.then((data) => …)`; an array "
        "method's or event handler's callback (`map((e, i) => …)`, `Array.from(…, (e, i) => …)`, "
        "`.on('click', (e, data) => …)`); a request handler (`(err, req, res, next)`); test files"
    ),
    fires=(
        Example(
            file=File("config/port.go", "go", """\
package config

import (
	"fmt"
	"os"
	"strconv"
)

func Address() string {
	port, _ := strconv.Atoi(os.Getenv("PORT"))
	return fmt.Sprintf(":%d", port)
}
"""),
        ),
        Example(
            file=File("src/config.js", "javascript", """\
const fs = require('fs');

function loadConfig(path, done) {
  fs.readFile(path, 'utf8', (err, data) => {
    done(JSON.parse(data));
  });
}
module.exports = { loadConfig };
"""),
            caption=(
                "In JavaScript and TypeScript the same bug is the Node-style callback that never "
                "reads its error: when `readFile` fails, `data` is undefined and `JSON.parse` throws "
                "where nothing catches it."
            ),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("config/port.go", "go", """\
package config

import (
	"fmt"
	"os"
	"strconv"
)

func Address() string {
	port, err := strconv.Atoi(os.Getenv("PORT"))
	if err != nil {
		port = 8080
	}
	return fmt.Sprintf(":%d", port)
}
"""),
        ),
        Example(
            file=File("src/config.js", "javascript", """\
const fs = require('fs');

function loadConfig(path, done) {
  fs.readFile(path, 'utf8', (err, data) => {
    if (err) return done(err);
    done(null, JSON.parse(data));
  });
}

function warm(path, cache) {
  fs.readFile(path, 'utf8', (_err, data) => cache.load(data || ''));
}
module.exports = { loadConfig, warm };
"""),
            caption=(
                "The error read (returned, thrown or passed on), or named `_err` to say it is ignored "
                "on purpose."
            ),
        ),
    ),
    by_record=True,
    record=Record(
        findings=7,
        holding=3,
        where=(
            "the whole trees of the tuning half's 26 projects and of 123 PyPI and npm packages (25 on 2026-12-06, "
            "98 on 2026-12-07): 7. **Hold**: gin `context.go:1197`, `val, _ := url.QueryUnescape(cookie.Value)` "
            "then `return val, nil` (a malformed cookie reads as an empty one with no error); webpack "
            "`NormalModuleFactory.js:827`, a failing `createModule` hook's `err` never read; mysql2 "
            "`commands/server_handshake.js:54`, `(err, mysqlError) => { if (!mysqlError) connection.writeOk() }`: "
            "an auth callback that fails Node's way, `cb(new Error(…))`, lets the client in (run against mysql2 "
            "3.26.1: the client connects). Do not: chi's `_examples/fileserver` (`os.Getwd`'s `\"\"` joins to the "
            "same relative directory), webpack's `IgnoreErrorModuleFactory` (ignoring is its purpose), restify "
            "`cpuUsageThrottle.js` (`if (!stat) return` handles the failure), less `tree/ruleset.js:149` (`if "
            "(result)`: a selector that fails to parse stays as it was). Not a use by design: `if isUTC, _ := "
            "strconv.ParseBool(tag); isUTC {`"
        ),
    ),
)

RULES = (DISCARDED_ERROR_USED,)
RULE_DISCARDED_GO_ERROR = DISCARDED_ERROR_USED.id


_LANGUAGES = frozenset({Language.GO})
_NEEDLES = (", _ :=", ", _ =", ",_ :=", ",_=")
_CALLBACK_LANGUAGES = frozenset({Language.JAVASCRIPT, Language.TYPESCRIPT})
_CALLBACK_NEEDLES = ("err", "e,", "e :", "e:")
# Standard-library calls by how many results they return, the last an error.
_KNOWN: dict[str, int] = {
    **dict.fromkeys(
        (
            "strconv.Atoi", "strconv.ParseInt", "strconv.ParseUint", "strconv.ParseFloat", "strconv.ParseBool",
            "strconv.Unquote", "url.Parse", "url.ParseRequestURI", "url.ParseQuery", "url.QueryUnescape",
            "url.PathUnescape", "json.Marshal", "json.MarshalIndent", "xml.Marshal", "os.ReadFile",
            "ioutil.ReadFile", "io.ReadAll", "ioutil.ReadAll", "os.Open", "os.Create", "os.OpenFile", "os.Getwd",
            "os.Hostname", "os.UserHomeDir", "os.UserConfigDir", "os.Executable", "os.Stat", "os.Lstat",
            "os.ReadDir", "os.MkdirTemp", "os.CreateTemp", "filepath.Abs", "filepath.Rel", "filepath.EvalSymlinks",
            "time.Parse", "time.ParseDuration", "time.LoadLocation", "time.ParseInLocation", "http.NewRequest",
            "http.NewRequestWithContext", "http.Get", "http.Post", "regexp.Compile", "hex.DecodeString",
            "base64.StdEncoding.DecodeString", "base64.URLEncoding.DecodeString",
            "base64.RawStdEncoding.DecodeString", "base64.RawURLEncoding.DecodeString", "net.Dial", "net.Listen",
            "net.ResolveTCPAddr", "net.LookupHost", "user.Current", "user.Lookup", "exec.LookPath",
            "x509.ParseCertificate", "uuid.Parse", "template.ParseFiles", "template.ParseGlob", "ioutil.TempDir",
            "ioutil.ReadDir", "netip.ParseAddr", "netip.ParsePrefix", "mail.ParseAddress",
        ),
        2,
    ),
    "net.SplitHostPort": 3,
    "net.ParseCIDR": 3,
}  # fmt: skip
# Methods of well-known types, by name: `cmd.Output()`, `req.Cookie("id")`.
_KNOWN_METHODS: dict[str, int] = {"Output": 2, "CombinedOutput": 2, "Cookie": 2, "FormFile": 3}


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "declaration": re.compile(
            r"\bfunc\s+(?:\([^()]*\)\s*)?(?P<name>\w+)\s*(?:\[[^\]]*\])?\s*\((?P<params>[^()]*(?:\([^()]*\)[^()]*)*)\)"
            r"\s*(?:\((?P<results>[^()]*)\)|(?P<single>error))\s*\{"
        ),
        "discard": re.compile(
            r"(?m)^[ \t]*(?:(?:if|switch)\s+)?(?P<names>\w+(?:\s*,\s*\w+)*)\s*,\s*_\s*(?::=|=)\s*"
            r"(?P<call>[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\("
        ),
    }


class DiscardedErrorLens:
    """Go's `v, _ :=` here; the JS/TS callback that never reads its error in
    discarded_callback_error.py, imported for those files only (it loads their grammars)."""

    rule = RULE_DISCARDED_GO_ERROR

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, _language, text in changed_sources(request, _LANGUAGES, _NEEDLES):
            if not is_test_file(change.path):
                yield from _file(text, change.path, change.added_lines())
        for change, _language, text in changed_sources(request, _CALLBACK_LANGUAGES, _CALLBACK_NEEDLES):
            if not is_test_file(change.path):
                from reviewgate.reviewers.builtin.lenses.discarded_callback_error import callback_findings

                yield from callback_findings(self.rule, text, change.path, change.added_lines())


def _declared(masked: str) -> dict[str, int]:
    """Functions and methods of the file whose last result is an error, by result count."""
    found: dict[str, int] = {}
    for match in _patterns()["declaration"].finditer(masked):
        if match.group("single"):
            continue  # only an error: nothing else to discard it beside
        results = [item.strip() for item in (match.group("results") or "").split(",") if item.strip()]
        if len(results) >= 2 and results[-1].split()[-1] == "error":
            found[match.group("name")] = len(results)
    return found


def _file(text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js
    from reviewgate.reviewers.builtin.languages.text_flow import functions, innermost, statement_end

    source = read_js(text)
    masked = source.masked
    discards = [match for match in _patterns()["discard"].finditer(masked) if source.line_of(match.start("names")) in added]
    if not discards:
        return
    declared = _declared(masked)
    bodies = functions(source, go=True)
    for match in discards:
        call = re.sub(r"\s+", "", match.group("call"))
        leaf = call.rsplit(".", 1)[-1]
        names = [name.strip() for name in match.group("names").split(",")]
        expected = _KNOWN.get(call) or declared.get(leaf)
        if expected is None and "." in call:
            expected = _KNOWN_METHODS.get(leaf)
        if expected is None or len(names) + 1 != expected:
            continue
        function = innermost(bodies, match.start())
        if function is None:
            continue
        statement = statement_end(source, match.end() - 1, function.body_close)
        used = _first_use(masked, names, statement, function.body_close)
        if used is None:
            continue
        name, offset = used
        line = source.line_of(match.start("names"))
        code = code_line(text, line)
        yield bug_finding(
            rule=RULE_DISCARDED_GO_ERROR,
            category="swallowed-failure",
            title=f"Error of `{call}` discarded, and `{name}` used",
            body=(
                f"{matched(code)}: the `_` drops the error `{call}` returns, and `{name}` is used at line "
                f"{source.line_of(offset)}. When the call fails `{name}` is its zero value (0, \"\", a nil "
                "pointer or map) and the code carries on with it, or panics on the nil. Check the error "
                "(return it, or fall back explicitly with a comment saying why)."
            ),
            path=path,
            line=line,
            code=code,
        )


def _first_use(masked: str, names: list[str], start: int, end: int) -> tuple[str, int] | None:
    """The first read of one of `names` after the statement, within the function; a `_ = v` is
    not a read."""
    for name in names:
        if name == "_":
            continue
        for use in re.finditer(rf"(?<![\w.]){re.escape(name)}(?!\w)", masked[start:end]):
            offset = start + use.start()
            line_start = masked.rfind("\n", 0, offset) + 1
            if re.match(r"[ \t]*_\s*=\s*$", masked[line_start:offset]):
                continue
            after = masked[offset + len(name) : offset + len(name) + 4]
            if re.match(r"\s*(?::=|=(?!=)|,)", after) and masked[line_start:offset].strip() == "":
                break  # assigned again before any read
            if re.match(r"\s*[!=]=\s*(?:0|\"\"|nil|false)\b", masked[offset + len(name) : offset + len(name) + 12]):
                return None  # the zero value is tested first: the failure is handled by design
            if re.search(r"(?:\bif\s+|;\s*)!?$", masked[line_start:offset]) and re.match(r"\s*\{", after):
                return None  # a bool used as the condition: false on failure is the default
            return name, offset
    return None

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (DiscardedErrorLens(),)
