"""A whole value checked with a regular expression whose anchors match at line boundaries (Ruby,
JavaScript/TypeScript, Python): Ruby's `value =~ /^[a-z]+$/`, `value.match?(/^plain$|^S256$/)`;
JavaScript's `/^\\d+$/m.test(value)`; Python's `re.match(r"^\\d+$", value, re.MULTILINE)`.

In Ruby `^` and `$` always match at the start and end of any line, and so do they under the
multiline flag (`m` in JavaScript, `re.M` in Python). A check meant for the whole value accepts
`"plain\\n<anything>"`: the second line rides through a validation (a header, a redirect, a
configured method), as Rails' `validates ... format:` refuses such a pattern for. `\\A` and `\\z`
anchor on the whole value in Ruby (`\\Z` in Python; in JavaScript, the pattern without `m`).
Not reported: a pattern anchored on one end only (a prefix test), a value named for a line (`line
=~ /^#/` inside `each_line`) or one piece of a `split("\n")`, a match read back through `$1` on its
line or the three after it, substitution and splitting (`sub`, `gsub`, `scan`, `split`), test files.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

LINE_ANCHORED_REGEX = Rule(
    id="security/line-anchored-regex",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Whole value checked with line anchors",
    full=(
        "A regular expression anchored at both ends decides whether a whole value is acceptable, but its "
        "`^`/`$` match at any line boundary (always in Ruby, under the multiline flag in JavaScript and Python): "
        "`\"plain\\n<anything>\"` passes. Anchor on the whole value: `\\A` and `\\z` in Ruby, `\\A` and `\\Z` "
        "(or `re.fullmatch`) in Python, the pattern without the `m` flag in JavaScript."
    ),
    tags=("security", "correctness", "external/cwe/cwe-777"),
    precision="medium",
    fires_on=(
        "on an added line of product code, a regular expression literal anchored at its start (`^` or `\\A`) and "
        "at its end (`$` or `\\z`), at least one of them a line anchor, used as a test of a value: Ruby "
        "`value =~ /^…$/`, `value !~ /^…$/`, `/^…$/ =~ value`, `value.match?(/^…$/)`, `value.match(%r{^…$})`, "
        "`/^…$/.match?(value)`, `/^…$/ === value`; JS/TS a literal with the `m` flag in `.test(…)`/`.exec(…)` or "
        "a string's `.match(…)`/`.search(…)`; Python `re.match`/`re.search`/`re.fullmatch` with `re.M`/"
        "`re.MULTILINE` or an inline `(?m)`"
    ),
    not_on=(
        "a pattern anchored on one end only (`/^Bearer /`: a prefix test); `\\A…\\z` in Ruby; JS/TS without the "
        "`m` flag and Python without multiline (there `^`/`$` anchor on the string); a value named for a line "
        "(`line`, `each_line`, `lines`), which is one line by design; Ruby's match read back on its line or the three after it (`$1`, "
        "`Regexp.last_match`: `name = $1 if name =~ /^\"(.*)\"$/` unquotes, it does not judge); the pieces of a "
        "`split(\"\\n\")`; `sub`, `gsub`, `scan`, `split`, `replace` "
        "(they rewrite or cut text, they do not judge it); test files"
    ),
    fires=(
        Example(
            file=File("lib/settings/validations.rb", "ruby", """\
module Settings
  module Validations
    def validate_methods
      return if methods.all? { |method| method =~ /^plain$|^S256$/ }

      raise ArgumentError, "unsupported method"
    end
  end
end
"""),
            caption="`\"plain\\nnone\"` passes: `^` and `$` match at the line break.",
        ),
    ),
    does_not_fire=(
        Example(
            file=File("lib/settings/validations.rb", "ruby", """\
module Settings
  module Validations
    def validate_methods
      return if methods.all? { |method| method.match?(/\\A(?:plain|S256)\\z/) }

      raise ArgumentError, "unsupported method"
    end
  end
end
"""),
            caption="`\\A` and `\\z` anchor on the whole value.",
        ),
    ),
    by_record=True,
    record=Record(
        findings=53,
        holding=7,
        where=(
            "the whole trees of 14 of the tuning half's projects (2026-12-07), each at its newest, at the oldest "
            "pull request the catch-power measurement reviews, and (rack, grape, doorkeeper) at the parent of the "
            "commit that re-anchored its checks with `\\A`/`\\z`: 4, all hold. doorkeeper "
            "`config/validations.rb:108` (`method =~ /^plain$|^S256$/`: a configured PKCE method `\"plain\\nx\"` "
            "passed; the project fixed it to `\\A(?:plain|S256)\\z`) and `oauth/pre_authorization.rb:149` (the "
            "same check of the client's `code_challenge_method` request parameter, gone from the newest tree), "
            "grape `types/json.rb:22` (`/^\\s*$/` took a value with a blank line for a blank value; fixed to "
            "`blank?`), faraday `nested_params_encoder.rb:156` (`k =~ /^\\d+$/` takes a query key `\"1\\nx\"` "
            "for an array index). Not one since: zod's `/^status:\\s*(.+)$/m.exec(…)`, one line of front matter "
            "read (only `.test` judges), rack `multipart/parser.rb:352, 356` (`filename = $1 if filename =~ "
            "/^\"(.*)\"$/` unquotes; a match read back through `$1` extracts). The whole trees of 28 Ruby "
            "projects outside the development set (2026-12-07: rails, redmine, spree, solidus, mail, webrick, "
            "openstreetmap-website, activeadmin, mechanize, huginn, lobsters, diaspora and 16 with no hit): 49 "
            "after the read-back shape below, 3 **hold**, all redmine `lib/redmine/field_format.rb` (an integer, "
            "a progress and a date custom field checked with `^…$`: `\"12\\nx\"` is stored, and PostgreSQL's "
            "`CAST` in the issue list's sort and totals then fails). Do not: tokens a parser produced, Symbols "
            "and routes the developer wrote, a document searched for a line on purpose, ids whose first line "
            "is all that is used, display choices where both paths escape, admin-only values, migrations, "
            "Cucumber steps, a vendored parser. Not one since (37 of 86 first read, none held): the match read "
            "back through `$1`/`Regexp.last_match` on the lines after it, the pieces of a `split(\"\\n\")`"
        ),
    ),
)


RULES = (LINE_ANCHORED_REGEX,)
RULE_LINE_ANCHORED_REGEX = LINE_ANCHORED_REGEX.id

_LANGUAGES = frozenset({Language.RUBY, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.PYTHON})
_NEEDLES = ("$/", "$|", "$)", "$}", "\\z/", "\\z}", "$'", '$"')
# A regular expression literal: Ruby's and JavaScript's `/…/flags` (not after a value: that is a
# division), and Ruby's `%r{…}flags`. A class may hold `/`; `#{…}` interpolation keeps its braces.
_SLASH_LITERAL = LazyPattern(
    r"(?:(?<=[=~(,{|!&?:\s])|^)/(?P<slash>(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[\s])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])*)"
    r"/(?P<slash_flags>[a-z]*)"
    r"|%r\{(?P<brace>(?:\\.|\{[^{}\n]*\}|[^{}\\\n])+)\}(?P<brace_flags>[a-z]*)",
    re.MULTILINE,
)
# How a literal is used as a test: what comes just before it, or just after it.
_RUBY_BEFORE = LazyPattern(r"(?:=~|!~|===|\.\s*match\?\s*\(?)\s*$")
_RUBY_AFTER = LazyPattern(r"^\s*(?:=~|!~|===|\.\s*match\?)")
# JavaScript: only `.test(…)` judges; `.exec(…)` and a string's `.match(…)` extract a line.
_JS_AFTER = LazyPattern(r"^\s*\.\s*test\s*\(")
# Ruby reads a match back through `$1`, `$~` or `Regexp.last_match`, on its line or the next few (a
# `when`/`if` whose body takes the captures): the pattern extracts (unquotes a value, takes its
# digits) rather than judges it.
_READ_BACK = LazyPattern(r"\$[1-9~]|\bRegexp\s*\.\s*last_match\b")
_READ_BACK_LINES = 3
# A value that is one line by design: `line`, `lines.each`, `each_line`, `first_line`, the pieces of
# a `split("\n")`.
_ONE_LINE = LazyPattern(r"(?i)(?:\b|_)lines?(?:\b|_)|\beach_line\b|\.split\(\s*[\"'](?:\\r)?\\n[\"']\s*\)")
_PYTHON_TESTS = frozenset({"re.match", "re.search", "re.fullmatch"})
_PYTHON_MULTILINE = frozenset({"M", "MULTILINE"})


def anchored_by_line(pattern: str, multiline: bool, ruby: bool) -> bool:
    """Whether `pattern` is anchored at its start and end (each top-level alternative) and one of
    those anchors matches at a line boundary: `^`/`$` in Ruby or under the multiline flag."""
    if not ruby and not multiline:
        return False
    alternatives = _top_level_alternatives(pattern)
    if not alternatives:
        return False
    line_anchor = False
    for alternative in alternatives:
        body = alternative.strip()
        while body.startswith("(") and body.endswith(")") and _closes_at_end(body):
            body = re.sub(r"^\((?:\?:|\?<[\w]+>)?", "", body)[:-1]  # `(?:^a$)`: the group's own anchors
        starts = body.startswith("^") or body.startswith("\\A")
        ends = (body.endswith("$") and not body.endswith("\\$")) or body.endswith("\\z") or body.endswith("\\Z")
        if not (starts and ends):
            return False
        line_anchor = line_anchor or body.startswith("^") or (body.endswith("$") and not body.endswith("\\$"))
    return line_anchor


def _top_level_alternatives(pattern: str) -> list[str]:
    """The pattern cut at each `|` outside groups and classes."""
    parts, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
        index += 1
    parts.append(pattern[start:])
    return parts


def _closes_at_end(body: str) -> bool:
    """Whether the `(` that opens `body` is closed by its last character (one group around it all)."""
    depth, index = 0, 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        depth += char == "("
        depth -= char == ")"
        if depth == 0:
            return index == len(body) - 1
        index += 1
    return False


def _finding(path: str, text: str, line: int, language: Language) -> Finding:
    code = code_line(text, line)
    fix = {
        Language.RUBY: "anchor on the whole value with `\\A` and `\\z` (`/\\A(?:plain|S256)\\z/`)",
        Language.PYTHON: "drop the multiline flag and anchor with `\\A` and `\\Z`, or call `re.fullmatch`",
    }.get(language, "drop the `m` flag, under which `^` and `$` match at every line break")
    return bug_finding(
        rule=RULE_LINE_ANCHORED_REGEX,
        category="security",
        title="Whole value checked with line anchors",
        body=(
            f"{matched(code)}: the pattern is anchored at both ends, so it judges a whole value, but its `^`/`$` "
            "match at any line boundary: a value with a second line (`\"plain\\n<anything>\"`) passes when its "
            f"first line does. To check the whole value, {fix}."
        ),
        path=path,
        line=line,
        code=code,
    )


# Ruby, JavaScript, TypeScript ----------------------------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    if is_test_file(path):
        return
    ruby = language is Language.RUBY
    before, after = (_RUBY_BEFORE, _RUBY_AFTER) if ruby else (None, _JS_AFTER)
    reported: set[int] = set()
    for number, line in added.items():
        if number in reported or not _might_hold_a_literal(line):
            continue
        for match in _SLASH_LITERAL.compiled().finditer(line):
            if _in_comment(line, match.start(), ruby):
                break
            pattern = match.group("slash") if match.group("slash") is not None else match.group("brace")
            if pattern is None or (not ruby and match.group("brace") is not None):
                continue
            flags = match.group("slash_flags") or match.group("brace_flags") or ""
            if not anchored_by_line(pattern, "m" in flags and not ruby, ruby):
                continue
            used_as_test = (before is not None and before.compiled().search(line[: match.start()])) or (
                after.compiled().search(line[match.end():]))
            rest = line[: match.start()] + line[match.end():]
            if not used_as_test or _ONE_LINE.compiled().search(rest) or (ruby and _read_back(text, number, rest)):
                continue
            reported.add(number)
            yield _finding(path, text, number, language)
            break


def _read_back(text: str, number: int, rest: str) -> bool:
    """Whether the match is read back through `$1`, `$~` or `Regexp.last_match` on its line (`rest`,
    the line without the literal) or the next `_READ_BACK_LINES` of the file."""
    if _READ_BACK.compiled().search(rest):
        return True
    following = text.split("\n", number + _READ_BACK_LINES)[number : number + _READ_BACK_LINES]
    return any(_READ_BACK.compiled().search(line) for line in following)


def _might_hold_a_literal(line: str) -> bool:
    return ("/" in line or "%r{" in line) and ("$" in line or "\\z" in line)


def _in_comment(line: str, offset: int, ruby: bool) -> bool:
    """Whether `offset` is after a comment marker on its line (Ruby's `#` that opens no `#{`, `//`)."""
    head = line[:offset]
    if ruby:
        return bool(re.search(r"(?:^|\s)#(?!\{)", head))
    return head.lstrip().startswith(("//", "*", "/*"))


# Python --------------------------------------------------------------------------------------------


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    if is_test_file(path):
        return
    for node in _judged_calls(tree):
        if node.lineno not in added or not node.args or call_name(node) not in _PYTHON_TESTS:
            continue
        pattern = node.args[0]
        if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
            continue
        flags = [*node.args[2:3], *(keyword.value for keyword in node.keywords if keyword.arg == "flags")]
        inline = re.match(r"\(\?[a-zA-Z]*m[a-zA-Z]*\)", pattern.value)
        multiline = bool(inline) or any(_names_multiline(flag) for flag in flags)
        body = pattern.value[inline.end():] if inline else pattern.value
        if anchored_by_line(body, multiline, ruby=False):
            yield _finding(path, text, node.lineno, Language.PYTHON)


def _judged_calls(tree: ast.Module) -> Iterator[ast.Call]:
    """Calls whose result is only asked yes or no: an `if`/`while`/`assert` test, `not`, `and`/`or`,
    `is None`, `bool(...)`. A match kept in a name or asked for `.group(1)` extracts a line."""
    tested: list[ast.expr] = []
    for kind in (ast.If, ast.While, ast.IfExp, ast.Assert):
        tested += [node.test for node in nodes_of(tree, kind)]  # type: ignore[attr-defined]
    tested += [node.operand for node in nodes_of(tree, ast.UnaryOp) if isinstance(node.op, ast.Not)]
    tested += [value for node in nodes_of(tree, ast.BoolOp) for value in node.values]
    tested += [node.left for node in nodes_of(tree, ast.Compare)
               if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)]
    tested += [node.args[0] for node in nodes_of(tree, ast.Call)
               if isinstance(node.func, ast.Name) and node.func.id == "bool" and node.args]
    yield from (item for item in tested if isinstance(item, ast.Call))


def _names_multiline(flag: ast.expr) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in _PYTHON_MULTILINE for node in ast.walk(flag))


# Python's `^`/`$` are line anchors only under the multiline flag: a module that never names it
# (`re.M`, `re.MULTILINE`, an inline `(?m)`) is not parsed for this rule.
_PYTHON_MULTILINE_MENTION = LazyPattern(r"\.M\b|MULTILINE|\(\?[aiLsux]*m")


def _mentions_multiline(text: str) -> bool:
    return _PYTHON_MULTILINE_MENTION.compiled().search(text) is not None


LINE_ANCHORED_REGEX_LENS = TwoReaderLens(RULE_LINE_ANCHORED_REGEX, _LANGUAGES, _NEEDLES, _python, _text,
                                         python_mentions=_mentions_multiline)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (LINE_ANCHORED_REGEX_LENS,)
