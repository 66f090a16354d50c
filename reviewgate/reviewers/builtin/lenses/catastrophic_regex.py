"""A regular expression that backtracks exponentially (Python, JavaScript/TypeScript, Java,
Kotlin, C#): a repeated group whose body can match the same text in more than one way,
`^([A-Z0-9_+-]+\\.?)*@…$`, `^(\\p{Extended_Pictographic}|\\p{Emoji_Component})+$` (the shapes:
lenses/regex_shapes.py).

On an input that almost matches, a backtracking engine tries every way of splitting the text
among the group's turns before it fails: 2^n for n characters, so a hundred-byte string stalls the
process for minutes (a denial of service where the text comes from a request). Go's `regexp` and
Rust's `regex` are linear and are not read. The pattern is read where it is written: a regex
literal, a string literal given to `re.compile`/`re.match`/…, `new RegExp`, `Pattern.compile`,
`Regex(…)`/`new Regex(…)`, or a name assigned such a literal in the same file.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

CATASTROPHIC_BACKTRACKING = Rule(
    id="correctness/catastrophic-backtracking",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Regular expression that backtracks exponentially",
    full=(
        "A repeated group can match the same text in more than one way (a repeated character inside it with "
        "nothing else required, or an alternation of characters that overlap): on an input that almost "
        "matches, the engine tries every split, 2^n for n characters, and a short string stalls the process. "
        "Make each turn of the group unambiguous: a single character class (`[ab]+` for `(a|b)+`), a required "
        "separator (`(\\w+\\.)*`), or an atomic group or possessive quantifier where the engine has them."
    ),
    tags=("correctness", "reliability", "performance"),
    precision="high",
    fires_on=(
        "Python, JS/TS, Java, Kotlin, C#: on an added line, a regular expression written as a literal (a JS "
        "regex literal; a string given to `re.compile`/`match`/`search`/`fullmatch`/`findall`/`finditer`/`sub`/"
        "`split`, `new RegExp`, `Pattern.compile`, Kotlin `Regex`, C# `new Regex`/`Regex.IsMatch`/…; or assigned "
        "to a name given to one of them in the same file) with a repeated group (`*`, `+`, `{n,}`), followed "
        "by something that can fail, whose turns are ambiguous: one repeated character in it can match every "
        "part the turn requires (`(a+)+$`, `(\\w+\\s?)*$`, `([A-Z0-9_+-]+\\.?)*@`, `(.*a)*$`), or it is an "
        "alternation of single characters two of which overlap (`(\\w|\\d)+$`, two `\\p{…}` properties other than "
        "general categories)"
    ),
    not_on=(
        "a required separator the repeated character cannot match (`(\\w+\\.)*\\w+$`, `(\\s*,\\s*\\w+)*$`); a run a "
        "lookahead keeps whole (`\\s+(?!\\s)`, `#+(?=[^#])`) or a turn that starts at `\\b` over word characters "
        "(`(?:\\b[a-z_]\\w*)+`); an "
        "alternation of disjoint characters (`(a|b)+`, `(\\p{L}|\\p{N})+`); bounded counts (`{0,61}`); a group "
        "at the very end of the pattern (nothing after it can fail); atomic groups `(?>…)` and possessive "
        "quantifiers; patterns built at run time; Go and Rust (their engines are linear)"
    ),
    fires=(
        Example(file=File("src/email.ts", "typescript", """\
export const email = /^([A-Z0-9_+-]+\\.?)*[A-Z0-9_+-]@([A-Z0-9][A-Z0-9-]*\\.)+[A-Z]{2,}$/i;
""")),
    ),
    does_not_fire=(
        Example(file=File("src/email.ts", "typescript", """\
export const email = /^[A-Z0-9_+-]+(?:\\.[A-Z0-9_+-]+)*@([A-Z0-9][A-Z0-9-]*\\.)+[A-Z]{2,}$/i;
""")),
    ),
    by_record=True,
    record=Record(
        findings=8,
        holding=2,
        where=(
            "the whole trees of the tuning half's 26 projects (Rust's regex crate is linear; Ruby is not among "
            "the rule's languages) and of 122 PyPI and npm packages (24 on 2026-12-06, 98 on 2026-12-07, among "
            "them markdown, markdown2, mistune, marked, markdown-it, showdown, ua-parser-js, validator, moment, "
            "highlight.js, sanitize-html, xss, linkify-it, docutils, bleach, sqlparse, dateparser, prismjs, less, "
            "pluralize, markdown-it-py, mistletoe): 8, 2 **hold**: sequelize `dialects/sqlite/query.js:255, 262`, "
            "`\\((?:[^)(]+|\\(…\\))*\\)`: an unclosed parenthesis in a table's SQL makes Node backtrack exponentially "
            "(24 characters: 0.55 s, doubling every character or two). Do not: sequelize "
            "`dialects/mariadb/query.js:184`, `((.|\\s)*?)'?\\s.*$`: the branches overlap only on whitespace, and "
            "any whitespace lets the rest match; markdown2 `markdown2.py:2206`, `.*[\\n\\r]*` overlapping on `\\r` "
            "only (exponential on `\"> !a\\r\\n\" * 22`, 2.5 s, but `convert()` has turned every `\\r` into `\\n` "
            "first); mssql `utils.js:31`, `[\\p{L}\\p{N}\\p{M}\\p{Pc}…]|\\u200C|\\u200D` (a class with `\\p{…}` inside "
            "is read as any non-ASCII character; the joiners are in none of those categories); Prism "
            "`prism-docker.js:39` (`(?:\\s|#.*$)*`: a comment runs to the line's end), `prism-kumir.js:80` "
            "(`[^<nonId>]`, a placeholder its code replaces), `prism-php.js:285` (alternatives that start apart). "
            "Not one since: a run a lookahead keeps whole or a turn that starts at `\\b` (markdown "
            "`blockprocessors.py:470`, `#+(?=[^#\\n])`; Prism 28, `\\s+(?![\\s)])` in `prism-javascript.js:94` and "
            "its copies, `(?:\\\\?\\b[a-z_]\\w*)+` in `prism-php.js:40` …; timed: no Prism grammar over 0.8 s on "
            "6,000-character inputs). Written for later fixes on the tuning half: zod f238fbd2d7 (the emoji "
            "pattern's overlapping alternation) and 2ba00fe23 (the email pattern's `([A-Z0-9_+-]+\\.?)*`)"
        ),
    ),
)

RULES = (CATASTROPHIC_BACKTRACKING,)
RULE_CATASTROPHIC_BACKTRACKING = CATASTROPHIC_BACKTRACKING.id

_LANGUAGES = frozenset({
    Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.JAVA, Language.KOTLIN, Language.CSHARP,
})
_NEEDLES = ("*", "+")
_PYTHON_CALLS = frozenset({"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
_PYTHON_MODULES = frozenset({"re", "regex"})


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        # A regex literal where an expression starts (after `(`, `,`, `=`, `:`, an operator, `return`).
        "js_literal": re.compile(
            r"(?:(?<=[(,=:\[!&|?{};])|(?<=\breturn)|(?<=^))\s*/(?![/*])(?P<body>(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])+)"
            r"/(?P<flags>[dgimsuvy]*)",
            re.MULTILINE,
        ),
        "js_constructor": re.compile(r"(?<![\w$.])(?:new\s+)?RegExp\s*\("),
        "jvm_constructor": re.compile(r"(?<![\w$])(?:Pattern\s*\.\s*compile|Regex|new\s+Regex|Regex\s*\.\s*(?:IsMatch|Match|Matches|Replace|Split))\s*\("),
        "kotlin_to_regex": re.compile(r"(?P<literal>\"(?:[^\"\\\n]|\\.)*\"|\"\"\"[\s\S]*?\"\"\")\s*\.\s*toRegex\s*\("),
        "string": re.compile(
            r"""^\s*(?P<verbatim>@)?(?P<quote>\"\"\"|["'`])(?P<body>[\s\S]*)(?P=quote)\s*$"""
        ),
    }


def _shape(pattern: str, ignore_case: bool) -> str:
    from reviewgate.reviewers.builtin.lenses.regex_shapes import exponential_shape

    return exponential_shape(pattern, ignore_case)


def _finding(path: str, text: str, line: int, shape: str) -> Finding:
    code = code_line(text, line)
    return bug_finding(
        rule=RULE_CATASTROPHIC_BACKTRACKING,
        category="security",
        title="Regular expression that backtracks exponentially",
        body=(
            f"{matched(code)}: the repeated group `{shape}` can match the same text in more than one way, so on an "
            "input that almost matches the engine tries every way of splitting it among the group's turns: 2^n "
            "steps for n characters, and a string of a hundred characters from a request stalls the process. Make "
            "each turn unambiguous: one character class for an alternation of characters (`[ab]+`), a required "
            "separator the repeated part cannot match (`(\\w+\\.)*`), or an atomic group or possessive quantifier."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _python_patterns(tree: ast.Module) -> Iterator[tuple[ast.Constant, bool]]:
    """(the pattern's string literal, whether the call ignores case) for each regular expression
    call whose pattern is a literal, or a name assigned one."""
    constants: dict[str, ast.Constant] = {}
    for assign in nodes_of(tree, ast.Assign):
        if isinstance(assign.value, ast.Constant) and isinstance(assign.value.value, str):
            for target in assign.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = assign.value
    for call in nodes_of(tree, ast.Call):
        function = call.func
        if not (
            isinstance(function, ast.Attribute)
            and function.attr in _PYTHON_CALLS
            and isinstance(function.value, ast.Name)
            and function.value.id in _PYTHON_MODULES
            and call.args
        ):
            continue
        argument = call.args[0]
        literal = constants.get(argument.id) if isinstance(argument, ast.Name) else argument
        if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
            ignore_case = any(
                isinstance(node, ast.Attribute) and node.attr in {"I", "IGNORECASE"}
                for extra in [*call.args[1:], *(keyword.value for keyword in call.keywords)]
                for node in ast.walk(extra)
            )
            yield literal, ignore_case


def _python_candidates(tree: ast.Module, added: dict[int, str]) -> bool:
    return any(
        isinstance(call.func, ast.Attribute) and call.func.attr in _PYTHON_CALLS and call.lineno in added
        for call in nodes_of(tree, ast.Call)
    ) or any(
        isinstance(node.value, str) and node.lineno in added and ("*" in node.value or "+" in node.value)
        for node in nodes_of(tree, ast.Constant)
    )


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    reported: set[int] = set()
    for literal, ignore_case in _python_patterns(tree):
        line = literal.lineno
        if line not in added or line in reported or not isinstance(literal.value, str):
            continue
        shape = _shape(literal.value, ignore_case)
        if shape:
            reported.add(line)
            yield _finding(path, text, line, shape)


# JavaScript, TypeScript, Java, Kotlin, C# ----------------------------------------------------------


def _unquoted(written: str) -> str | None:
    """The text of a string literal as the regex engine gets it, or None if it is not one
    literal (a template with `${…}`, a concatenation)."""
    found = _patterns()["string"].match(written)
    if not found:
        return None
    body = found.group("body")
    if found.group("quote") == "`" and "${" in body:
        return None
    if found.group("verbatim") or found.group("quote") == '"""':
        return body.replace('""', '"') if found.group("verbatim") else body
    if re.search(r"(?<!\\)(?:\\\\)*" + re.escape(found.group("quote")), body):
        return None  # the quote appears unescaped inside: two literals joined
    return re.sub(r"\\([\\'\"`/])", r"\1", body)


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    source = read_js(text)
    masked, patterns = source.masked, _patterns()
    javascript = language in (Language.JAVASCRIPT, Language.TYPESCRIPT)
    reported: set[int] = set()

    def report(offset: int, pattern: str, ignore_case: bool) -> Iterator[Finding]:
        line = source.line_of(offset)
        if line in added and line not in reported:
            shape = _shape(pattern, ignore_case)
            if shape:
                reported.add(line)
                yield _finding(path, text, line, shape)

    if javascript:
        for match in patterns["js_literal"].finditer(text):
            start = match.start("body") - 1
            if masked[start] == "/" and masked[match.start("body")] == text[match.start("body")]:
                yield from report(start, match.group("body"), "i" in match.group("flags"))
    constructor = patterns["js_constructor"] if javascript else patterns["jvm_constructor"]
    for match in constructor.finditer(masked):
        spans = call_arguments(source, match.end() - 1)
        written = [(start, text[start:end].strip()) for start, end in spans]
        # The pattern: JavaScript's first argument (a literal or a name declared with one); the first
        # literal argument elsewhere (C#'s `Regex.IsMatch(input, pattern)` takes it second).
        candidates = written[:1] if javascript else written
        literal = next(((start, value) for start, value in candidates if _unquoted(value) is not None), None)
        if literal is None and javascript and written:
            literal = _declared(text, written[0][1])
        if literal is None:
            continue
        pattern = _unquoted(literal[1])
        flags = " ".join(value for _start, value in written[1:])
        ignore_case = bool(re.search(r"""['"`][a-z]*i[a-z]*['"`]|CASE_INSENSITIVE|IgnoreCase|IGNORE_CASE""", flags))
        if pattern is not None:
            yield from report(source.skip_space(literal[0]), pattern, ignore_case)
    if language is Language.KOTLIN:
        for match in patterns["kotlin_to_regex"].finditer(text):
            pattern = _unquoted(match.group("literal"))
            if pattern is not None:
                yield from report(match.start(), pattern, False)


def _declared(text: str, name: str) -> tuple[int, str] | None:
    """The string literal a name is declared with in the file: `const _emoji = `^(…)+$``."""
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
        return None
    declaration = re.search(
        rf"(?<![\w$.]){re.escape(name)}\s*(?::\s*\w+\s*)?=\s*(?P<literal>(['\"`])(?:\\.|(?!\2)[^\\\n])*\2)",
        text,
    )
    return (declaration.start("literal"), declaration.group("literal")) if declaration else None


CATASTROPHIC_BACKTRACKING_LENS = TwoReaderLens(
    RULE_CATASTROPHIC_BACKTRACKING, _LANGUAGES, _NEEDLES, _python, _text, _python_candidates
)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (CATASTROPHIC_BACKTRACKING_LENS,)
