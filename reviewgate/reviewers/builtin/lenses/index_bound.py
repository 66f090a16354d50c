"""A substring search's "not found" result (-1) used as a slice bound with nothing that checks it
(Go, Python, JavaScript/TypeScript, Java, Kotlin, C#): `idx := strings.Index(s, "."); s[idx:]`,
`s[s.find(":"):]`, `s.slice(0, s.indexOf("?"))`, `s.substring(s.indexOf('.'))`,
`s.Substring(s.IndexOf('.'))`. A search held in a name is reported once, at the search when the
change wrote it (the check belongs right after it), else at the slice.

When the text is not there the search returns -1, and the slice then panics (Go: "slice bounds
out of range"), throws (Java's `StringIndexOutOfBoundsException`, C#'s
`ArgumentOutOfRangeException`) or quietly cuts the wrong part (Python and JavaScript read -1 as
"the last character": `s[:-1]` drops it, `s.slice(-1)` keeps only it). Not reported: the index
compared with anything between the search and the slice (`if idx < 0`, `idx != -1`, `idx > 0`), the
search shifted (`s[idx+1:]`: -1 + 1 is the whole string, the usual "after the separator, or all of
it"), a containment test of the same text just before (`"." in s`, `s.includes(".")`,
`strings.Contains(s, ".")`), and test files.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

NOT_FOUND_INDEX_BOUND = Rule(
    id="correctness/not-found-index-as-bound",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="A search's -1 used as a slice bound unchecked",
    full=(
        "A substring search returns -1 when the text is not there, and the result is used as a slice bound "
        "with nothing that checks it: Go panics, Java and C# throw, Python and JavaScript read -1 as the last "
        "character and cut the wrong part. Check the index (`if idx < 0`) or the text (`\".\" in s`) first."
    ),
    tags=("correctness", "reliability"),
    precision="medium",
    fires_on=(
        "outside test files, a slice bound that is a substring search's result, called in place on an added "
        "line, or held in a name assigned from it a few lines before, the search or the slice on an added line "
        "(reported at the search when the change wrote it, where the check belongs; once per search): Go `s[idx:]`/`s[:idx]` after "
        "`strings.Index`/`LastIndex`/`IndexByte`/`IndexRune` (and `bytes.`), Python `s[s.find(x):]`/`s[:i]` "
        "after `find`/`rfind`, JS/TS `slice`/`substring`/`substr` after `indexOf`/`lastIndexOf`, Java and Kotlin "
        "`substring` after `indexOf`/`lastIndexOf`, C# `Substring`/`Remove` after `IndexOf`/`LastIndexOf`"
    ),
    not_on=(
        "the index compared with anything between the search and the slice (`idx < 0`, `idx != -1`, `idx > 0`, "
        "`max(idx, 0)`); the index shifted (`s[idx+1:]`, `indexOf(x) + 1`: -1 + 1 is the whole string); a "
        "containment test of the same text on the lines just before (`\".\" in s`, `s.includes(\".\")`, "
        "`strings.Contains(s, \".\")`, `s.contains(\".\")`); Python's `index` (it raises instead); test files"
    ),
    fires=(
        Example(file=File("middleware/stack.go", "go", """\
package middleware

import "strings"

func split(pkg string) (string, string) {
\tidx := strings.Index(pkg, ".")
\treturn pkg[:idx], pkg[idx:]
}
""")),
    ),
    does_not_fire=(
        Example(file=File("middleware/stack.go", "go", """\
package middleware

import "strings"

func split(pkg string) (string, string) {
\tidx := strings.Index(pkg, ".")
\tif idx < 0 {
\t\treturn pkg, ""
\t}
\treturn pkg[:idx], pkg[idx:]
}
""")),
    ),
    by_record=True,
    record=Record(
        findings=47,
        holding=2,
        where=(
            "the whole trees of the tuning half's 26 projects and of 122 PyPI and npm packages (24 on 2026-12-06, "
            "98 on 2026-12-07): 47, 2 **hold**: okhttp `-CacheControlCommon.kt:169`, `pos = value.indexOf('\"', "
            "pos)` then `value.substring(parameterStart, pos)`: a quoted Cache-Control parameter without its "
            "closing quote throws `StringIndexOutOfBoundsException`; rfc3986 `misc.py:127`, "
            "`path[:path.rfind(\"/\")]` in `merge_paths`: "
            "`uri_reference(\"baz\").resolve_with(uri_reference(\"foo:bar\"))` gives `foo:ba/baz` where RFC 3986 "
            "§5.2.3 says `foo:baz` (run). Do not: the text is there by what the code around it guarantees (gin "
            "`tree.go:229`, a segment cut from the same path; okhttp `HttpUrl.kt:489`, a canonical URL's path; "
            "eslint `no-regex-spaces.js:152` and `require-unicode-regexp.js:111`, a regex literal's closing "
            "slash; webpack `Compilation.js:3805`, `syntax-printer.js:348, 2890, 2904`, "
            "`CreateRequireParserPlugin.js:188`, `ExternalModuleFactoryPlugin.js:330`, keys and text webpack "
            "wrote itself or tested with a regular expression a few lines up; tornado `http1connection.py:640`, a "
            "header block read up to its blank line; ioredis `DataHandler.js:322`, a MONITOR reply; sanic "
            "`form.py:54`, a multipart part's header lines; 2026-12-07, 32: a regular expression's match "
            "(docutils `states.py:1601, 2601`, clean-css `unit.js:37`), text the code built (bullmq "
            "`queue-getters.js:515` Redis's CLIENT LIST, `postgres-queue-backend.js:322` its own keys; nestjs "
            "`route-info-path-extractor.js:277` after `addLeadingSlash`; yaml `cst-scalar.js:56, 135` its own "
            "stringified block scalar; moment `locale/lb.js:26`, `el.js:28`; typeorm `DriverUtils.js:189`, "
            "`JoinAttribute.js:143`, `RelationIdAttribute.js:80` (`alias.property` paths); linkify-it "
            "`index.mjs:185` a constant table; postgres `types.js:433` an ISO date; joi `annotate.js:108` a value "
            "found in the stack, `manifest.js:463` its own regex description; clean-css `tokenize.js:213` a "
            "comment it just matched), a guard the rule does not see (clean-css `is-mergeable.js:167`, a ternary "
            "on `indexOf(…) > -1`; openai `partial-json-parser/parser.ts:207`, the last character tested), a -1 "
            "that does no harm (nodemailer `message-parser.js:171`, `substr(0, -1)` is the empty field name; "
            "clean-css `tidy-rules.js:172`; yaml `lexer.js:456`, handled two lines on; typeorm "
            "`SqlServerQueryRunner.js:230`; papaparse `papaparse.js:1534`, reset before it is read; postcss "
            "`previous-map.js:66`, only an error message's text), converter output whose failure is read from its "
            "stderr next (docutils `tex2mathml_extern.py:141, 166, 208`), a theme path (docutils "
            "`s5_html/__init__.py:276`), a TZif file's NUL-terminated names (python-dateutil `_tzfile.py:759`), "
            "yargs `platform-shims/esm.mjs:18` (the empty string falls back to `process.cwd()` on purpose). "
            "Written for a later fix on the tuning half: chi 188a1675b7, `idx = strings.Index(pkg, \".\")` then "
            "`pkg[idx:]` panicking under Go 1.17 (chi #496's lines)"
        ),
    ),
)

RULES = (NOT_FOUND_INDEX_BOUND,)
RULE_NOT_FOUND_INDEX_BOUND = NOT_FOUND_INDEX_BOUND.id

_LANGUAGES = frozenset({
    Language.PYTHON, Language.GO, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.JAVA, Language.KOTLIN,
    Language.CSHARP,
})
_NEEDLES = ("find(", "ndex(", "ndexOf(", "ndexByte(", "ndexRune(")
_PYTHON_SEARCHES = frozenset({"find", "rfind"})
# How many lines a name may sit between its search and the slice (one function's reach).
_REACH = 30
# How many lines before the search a containment test of the same text still guards it.
_GUARD_LINES = 6
_CONTAINS = r"(?:\bin\b|includes|contains|Contains|startsWith|endsWith|StartsWith|EndsWith|HasPrefix|HasSuffix)"
# A test of a text: containment, a regular expression, or a search compared with something.
_TESTS = (
    _CONTAINS + r"|\.test\(|\bmatch|Match|\b(?:indexOf|IndexOf|find|Index|LastIndex)\s*\([^()]*\)\s*(?:[<>]=?|[!=]==?)"
)
# A line that decides something: a branch, a loop, a ternary, an assertion, a short-circuit.
_CONDITIONS = r"\bif\b|\bwhile\b|\bunless\b|\?|&&|\|\||\bassert\b|\brequire\s*\(|\bcheck\s*\("


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    go_search = r"(?:strings|bytes)\s*\.\s*(?:Last)?Index(?:Byte|Rune)?\s*\("
    dotted_search = r"\.\s*(?:indexOf|lastIndexOf|IndexOf|LastIndexOf)\s*\("
    return {
        # A name assigned a search's result: the search is the whole right-hand side.
        "go_assign": re.compile(rf"(?<![\w.])(?P<name>[A-Za-z_]\w*)\s*:?=\s*(?P<search>{go_search})"),
        "dotted_assign": re.compile(
            rf"(?<![\w.$])(?P<name>[A-Za-z_$][\w$]*)\s*(?::\s*\w+\s*)?=\s*(?P<receiver>[\w$.]+?)\s*(?P<search>{dotted_search})"
        ),
        "go_inline": re.compile(rf"\[\s*(?P<search>{go_search})|:\s*(?P<upper>{go_search})"),
        "dotted_inline": re.compile(
            r"\.\s*(?:slice|substring|substr|Substring|Remove)\s*\(\s*(?:[^,()]+,\s*)?(?P<receiver>[\w$.]+?)\s*"
            r"\.\s*(?:indexOf|lastIndexOf|IndexOf|LastIndexOf)\s*\("
        ),
    }


def _finding(path: str, text: str, line: int, what: str, language: Language) -> Finding:
    code = code_line(text, line)
    consequence = {
        Language.GO: "the slice panics (slice bounds out of range)",
        Language.PYTHON: "Python reads -1 as the last character and the slice cuts the wrong part",
        Language.JAVASCRIPT: "JavaScript reads -1 as the last character (`slice`) or as 0 (`substring`) and cuts the wrong part",
        Language.TYPESCRIPT: "JavaScript reads -1 as the last character (`slice`) or as 0 (`substring`) and cuts the wrong part",
        Language.CSHARP: "`Substring` throws `ArgumentOutOfRangeException`",
    }.get(language, "`substring` throws `StringIndexOutOfBoundsException`")
    return bug_finding(
        rule=RULE_NOT_FOUND_INDEX_BOUND,
        category="correctness",
        title="A search's -1 used as a slice bound unchecked",
        body=(
            f"{matched(code)}: {what}. When the text is not there the search returns -1 and {consequence}. "
            "Check the index first (`if idx < 0`), or the text (`contains`/`in`)."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _search(node: ast.AST | None) -> ast.Call | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _PYTHON_SEARCHES
        and node.args
    ):
        return node
    return None


def _bounds(tree: ast.Module, added: dict[int, str]) -> Iterator[tuple[ast.Subscript, ast.expr]]:
    for subscript in nodes_of(tree, ast.Subscript):
        if subscript.lineno in added and isinstance(subscript.slice, ast.Slice):
            for bound in (subscript.slice.lower, subscript.slice.upper):
                if isinstance(bound, (ast.Call, ast.Name)):
                    yield subscript, bound


def _python_candidates(tree: ast.Module, added: dict[int, str]) -> bool:
    return any(True for _ in _bounds(tree, added))


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    if is_test_file(path):
        return
    searches: dict[str, list[ast.Call]] = {}
    for assign in nodes_of(tree, ast.Assign):
        call = _search(assign.value)
        for target in assign.targets:
            if call is not None and isinstance(target, ast.Name):
                searches.setdefault(target.id, []).append(call)
    reassigned: dict[str, list[int]] = {}
    for assign in nodes_of(tree, ast.Assign):
        for target in assign.targets:
            if isinstance(target, ast.Name):
                reassigned.setdefault(target.id, []).append(assign.lineno)
    compared = list(nodes_of(tree, ast.Compare))
    reported: set[int] = set()
    for subscript, bound in _bounds(tree, added):
        line = subscript.lineno
        if line in reported:
            continue
        call = _search(bound)
        what = ""
        if call is not None:
            what = f"the bound is `{ast.unparse(call)}`, used without a check"
        elif isinstance(bound, ast.Name) and bound.id in searches:
            before = [item for item in searches[bound.id] if 0 < line - item.lineno <= _REACH]
            if not before:
                continue
            call = max(before, key=lambda item: item.lineno)
            if max((number for number in reassigned.get(bound.id, []) if number < line), default=0) > call.lineno:
                continue  # assigned something else since the search
            if any(_mentions(node, bound.id) and call.lineno <= node.lineno <= line for node in compared):
                continue
            if any(_maximum(node, bound.id) for node in nodes_of(tree, ast.Call) if call.lineno <= node.lineno <= line):
                continue
            what = _held(bound.id, ast.unparse(call), call.lineno, line)
        else:
            continue
        if _python_guarded(tree, call, compared):
            continue
        # Reported at the search when the change wrote it: the check belongs right after it.
        at = call.lineno if call.lineno in added else line
        if at in reported:
            continue
        reported.update({at, line})
        yield _finding(path, text, at, what, Language.PYTHON)


def _held(name: str, search: str, search_line: int, use_line: int) -> str:
    return (
        f"`{name}` holds `{search}` (line {search_line}) and is a slice bound at line {use_line}, with nothing "
        "that checks it between"
    )


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(item, ast.Name) and item.id == name for item in ast.walk(node))


def _maximum(node: ast.Call, name: str) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id in {"max", "min"} and _mentions(node, name)


def _python_guarded(tree: ast.Module, call: ast.Call, compared: list[ast.Compare]) -> bool:
    """The text tested a few lines before the search: `"." in s`, or a condition on the searched
    value (`if s.endswith(".json")`, `if not has_dot(s): return`)."""
    needle = ast.dump(call.args[0])
    receiver = ast.dump(call.func.value) if isinstance(call.func, ast.Attribute) else ""
    near = range(call.lineno - _GUARD_LINES, call.lineno + 1)
    if any(
        node.lineno in near and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
        and ast.dump(node.left) == needle
        for node in compared
    ):
        return True
    tests: list[ast.expr] = [
        *(node.test for node in nodes_of(tree, ast.If)),
        *(node.test for node in nodes_of(tree, ast.While)),
        *(node.test for node in nodes_of(tree, ast.IfExp)),
        *(node.test for node in nodes_of(tree, ast.Assert)),
    ]
    tests = [test for test in tests if test.lineno in near]
    return any(ast.dump(item) == receiver for test in tests for item in ast.walk(test))


# Go, JavaScript/TypeScript, Java, Kotlin, C# -----------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    if is_test_file(path):
        return
    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    go = language is Language.GO
    lines = text.splitlines()
    reported: set[int] = set()

    def search_end(opener: int) -> int:
        closer = source.pairs.get(opener)
        return -1 if closer is None else closer + 1

    def shifted(after: int) -> bool:
        return bool(re.match(r"\s*[-+]", masked[after:after + 8]))

    def needle_of(opener: int) -> str:
        spans = call_arguments(source, opener)
        return text[slice(*spans[1 if go and len(spans) > 1 else 0])].strip() if spans else ""

    def first_argument(opener: int) -> str:
        spans = call_arguments(source, opener)
        return text[slice(*spans[0])].strip() if spans else ""

    masked_lines = masked.splitlines()

    def guarded(offset: int, needle: str, receiver: str) -> bool:
        line, first = source.line_of(offset), text.rfind("\n", 0, offset) + 1
        window = [*lines[max(0, line - 1 - _GUARD_LINES):line - 1], text[first:offset]]
        blanked = [*masked_lines[max(0, line - 1 - _GUARD_LINES):line - 1], masked[first:offset]]
        return _guarded(window, blanked, needle, receiver)

    # A bound that is the search itself.
    inline = patterns["go_inline"] if go else patterns["dotted_inline"]
    for match in inline.finditer(masked):
        line = source.line_of(match.start())
        if line not in added or line in reported:
            continue
        opener = match.end() - 1
        end = search_end(opener)
        if end < 0 or shifted(end):
            continue
        if go and not re.match(r"\s*[:\]]", masked[end:end + 4]):
            continue  # a search inside a bound's arithmetic, not the bound
        if not go and not re.match(r"\s*[,)]", masked[end:end + 4]):
            continue
        receiver = match.group("receiver") if not go else first_argument(opener)
        if guarded(match.start(), needle_of(opener), receiver):
            continue
        reported.add(line)
        yield _finding(path, text, line, f"the bound is `{text[match.start():end].lstrip('[:. ')}`, used without a check", language)

    # A bound held in a name assigned from a search.
    assign = patterns["go_assign"] if go else patterns["dotted_assign"]
    assignments = list(assign.finditer(masked))
    for position, match in enumerate(assignments):
        opener = match.end() - 1
        end = search_end(opener)
        if end < 0 or not re.match(r"\s*(?:;|\n|$)", masked[end:end + 3]):
            continue  # the search is part of a larger expression
        name, start_line = match.group("name"), source.line_of(match.start())
        receiver = first_argument(opener) if go else match.group("receiver")
        if guarded(match.start(), needle_of(opener), receiver):
            continue
        later = [item.start() for item in assignments[position + 1:] if item.group("name") == name]
        reassigned = re.search(rf"(?<![\w.$]){re.escape(name)}\s*(?:[-+*/]?=)(?!=)", masked[end:])
        stop = min([*later, end + reassigned.start() if reassigned else len(masked)])
        for use in _uses(masked, name, go, end, stop):
            line = source.line_of(use.start())
            if line - start_line > _REACH:
                break
            between = masked[end:use.start()]
            # A search in a loop's update (`for (…; i !== -1; i = s.indexOf(x, i + 1))`) or one
            # followed by `continue` reaches the slice only through the loop's test.
            through_loop = bool(re.match(r"\s*\)\s*\{", between)) or re.search(r"\bcontinue\b", between) is not None
            if _checked(between, name) or (through_loop and _loop_checks(lines[max(0, line - 1 - _REACH):line], name)):
                break
            # Reported at the search when the change wrote it: the check belongs right after it.
            at = start_line if start_line in added else line
            if line in added or start_line in added:
                if at not in reported:
                    reported.add(at)
                    search = text[match.start("search") - (0 if go else len(match.group("receiver"))):end]
                    yield _finding(path, text, at, _held(name, " ".join(search.split()), start_line, line), language)
                break


def _uses(masked: str, name: str, go: bool, start: int, stop: int) -> Iterator[re.Match[str]]:
    escaped = re.escape(name)
    if go:
        pattern = rf"\[\s*{escaped}\s*:|:\s*{escaped}\s*\]"
    else:
        pattern = (
            rf"\.\s*(?:slice|substring|substr|Substring|Remove)\s*\(\s*{escaped}\s*[,)]"
            rf"|\.\s*(?:slice|substring|Substring)\s*\([^,()]+,\s*{escaped}\s*\)"
        )
    yield from re.compile(pattern).finditer(masked, start, stop)


def _guarded(window: list[str], blanked: list[str], needle: str, receiver: str) -> bool:
    """Whether the lines before the search test the text first: a containment or regular
    expression test of the same text (`"." in s`, `s.includes(".")`, `/^--[^=]+=/.test(arg)`,
    `s.indexOf("(") > -1`), or a condition on the searched value (`if (!hasDot(raw)) return`,
    `path.endsWith(".json") ? …`)."""
    content = needle.strip("'\"`") if len(needle) >= 2 and needle[0] in "'\"`" else ""
    escaped = re.escape(receiver)
    # A call on the searched value or given it: `s.endsWith(".json")`, `hasDot(s)`, `re.test(s)`.
    tested = re.compile(
        rf"(?<![\w$.]){escaped}\s*\??\.\s*\w+\s*\(|\(\s*(?:[^()]*,\s*)?{escaped}\s*[,)]"
    ) if receiver else None
    for index, (item, code) in enumerate(zip(window, blanked, strict=False)):
        if content and content in item and re.search(_TESTS, code):
            return True
        # The condition may open a line or two above the test (`if (\n typeof x === "string" &&\n re.test(x)`).
        if tested is not None and tested.search(code) and any(
            re.search(_CONDITIONS, line) for line in blanked[max(0, index - 2):index + 1]
        ):
            return True
    return False


def _loop_checks(window: list[str], name: str) -> bool:
    """A loop whose header compares the name (`while (at !== -1)`, `for (let i = …; i !== -1; …)`):
    the value a search inside the loop gives reaches the slice only through that test."""
    escaped = re.escape(name)
    header = re.compile(rf"\b(?:while|for)\b.*(?<![\w$.]){escaped}\s*(?:[<>]=?|[!=]==?)")
    return any(header.search(item) for item in window) or bool(
        re.search(rf"^\s*(?<![\w$.]){escaped}\s*(?:[<>]=?|[!=]==?)[^;]*;\s*$", "\n".join(window), re.MULTILINE)
    )


def _checked(between: str, name: str) -> bool:
    """Whether the text between the search and the slice compares the name or clamps it."""
    escaped = re.escape(name)
    return bool(
        re.search(rf"(?<![\w$.]){escaped}\s*(?:[<>]=?|[!=]==?)|(?:[<>]=?|[!=]==?)\s*{escaped}(?![\w$])", between)
        or re.search(rf"\b(?:max|min|Max|Min)\s*\([^()]*(?<![\w$.]){escaped}(?![\w$])", between)
    )


NOT_FOUND_INDEX_BOUND_LENS = TwoReaderLens(
    RULE_NOT_FOUND_INDEX_BOUND, _LANGUAGES, _NEEDLES, _python, _text, _python_candidates
)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (NOT_FOUND_INDEX_BOUND_LENS,)
