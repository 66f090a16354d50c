"""The Ruby and PHP sinks the security rules read (lenses/security/ruby_php.py) and the text each
runs: the chosen argument of a call, with or without parentheses, a backtick string or `%x()`; for
Active Record's condition methods only text written there or a request value handed whole (a hash
is bound), for an argument array's first element only, for a shell named with `-c` in an argument
list its command line, for Kernel#open only the value a path starts with."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.ruby_php_text import argument_spans, open_brackets
from reviewgate.reviewers.builtin.lenses.security.code_evaluation import RULE_EVAL
from reviewgate.reviewers.builtin.lenses.security.shell_injection import RULE_SHELL, SHELL_LIST
from reviewgate.reviewers.builtin.lenses.security.sql_injection import RULE_SQL


class Sink(NamedTuple):
    rule: str
    pattern: LazyPattern  # up to the opening of what the sink runs: `(`, a backtick, `%x(`
    argument: int  # which argument is the text run (-1: the last of the first two, mysqli's and pg's)
    bare: bool  # whether a bare name or source there is the whole text (it always is run as SQL or a command)
    leading: bool = False  # only the value the text starts with counts (Kernel#open runs `|command`)
    evidence: str = ""  # what the finding says of the sink, where not its rule's


# Active Record's methods that take SQL text as well as a hash (`where(id: params[:id])` is bound):
# a finding only for text written there. `order`, `reorder`, `group` and `pluck` refuse anything
# but column names since Rails 6.1, and are left out.
_RUBY_SQL_BUILT = (
    r"where|rewhere|having|joins|from|select|reselect|update_all|delete_all|exists\?|find_by!?|find_or_create_by!?"
    r"|find_or_initialize_by|create_or_find_by!?|destroy_by|delete_by"
)
_RUBY_SQL_ONLY = (
    r"find_by_sql|count_by_sql|execute|exec_query|exec_update|exec_delete|exec_insert|select_all|select_one"
    r"|select_rows|select_value|select_values"
)
# Where a Ruby call's arguments open: a parenthesis, or (called without one) the first argument.
RUBY_ARGUMENTS = r"(?:\s*\(|[ \t]+(?=[\w@:\"'\[%*$]))"
_SINKS = {
    Language.RUBY: (
        # On a receiver, or bare inside a model (`where("…")` in `def self.search`).
        Sink(RULE_SQL, LazyPattern(rf"(?:\.|(?<![\w.:@$]))(?:{_RUBY_SQL_ONLY}){RUBY_ARGUMENTS}|\bArel\.sql{RUBY_ARGUMENTS}"),
             0, True),
        Sink(RULE_SQL, LazyPattern(rf"(?:\.|(?<![\w.:@$]))(?:{_RUBY_SQL_BUILT})(?![\w?!]){RUBY_ARGUMENTS}"), 0, False),
        Sink(RULE_SHELL, LazyPattern(rf"(?:(?<![\w.:])(?:Kernel\.)?(?:system|exec|spawn)|\bIO\.popen"
                                     rf"|\bOpen3\.(?:capture2e?|capture3|popen2e?|popen3|pipeline\w*)){RUBY_ARGUMENTS}"), 0, True),
        Sink(RULE_SHELL, LazyPattern(r"`|%x[({\[]"), 0, False),
        Sink(RULE_SHELL, LazyPattern(rf"(?<![\w.:@$])(?:Kernel\.)?open{RUBY_ARGUMENTS}"), 0, True, leading=True,
             evidence="`open` runs a path that starts with `|` as a shell command: read files with `File.open`, URLs with `URI.open`"),
        Sink(RULE_EVAL, LazyPattern(rf"(?<![\w.:])(?:eval|instance_eval|class_eval|module_eval){RUBY_ARGUMENTS}"), 0, True),
    ),
    Language.PHP: (
        Sink(RULE_SQL, LazyPattern(r"\b(?:mysqli_query|mysqli_multi_query|mysqli_real_query|pg_query|pg_send_query)\s*\("),
             -1, True),
        Sink(RULE_SQL, LazyPattern(r"\b(?:mysql_query|sqlite_query|mssql_query|odbc_exec|db2_exec)\s*\("
                                   r"|->\s*(?:query|multi_query|real_query|prepare|exec)\s*\("
                                   r"|\bDB::(?:select|statement|unprepared|raw|insert|update|delete)\s*\("
                                   r"|->\s*(?:whereRaw|orWhereRaw|havingRaw|orderByRaw|selectRaw|groupByRaw)\s*\("), 0, True),
        Sink(RULE_SHELL, LazyPattern(r"(?<![\w>:$])(?:shell_exec|exec|system|passthru|popen|proc_open|pcntl_exec)\s*\("),
             0, True),
        Sink(RULE_SHELL, LazyPattern(r"`"), 0, False),
        Sink(RULE_EVAL, LazyPattern(r"(?<![\w>:$])(?:eval|assert|create_function)\s*\("), 0, True),
    ),
}
EVIDENCE = {
    RULE_SQL: "the statement is text with the value written into it, not a bound parameter",
    RULE_SHELL: "the command is one string a shell parses, not an argument list",
    RULE_EVAL: "the value becomes code the interpreter runs",
}
WHAT = {
    RULE_SQL: "an SQL statement is built from request input",
    RULE_SHELL: "a shell command is built from request input",
    RULE_EVAL: "code to evaluate is built from request input",
}


# A PHP method the file declares: `$this->prepare($values)` calls it, not a database's.
_OWN_METHOD = re.compile(r"\bfunction\s+&?\s*(\w+)\s*\(")
_THIS_METHOD = re.compile(r"\$this\s*->\s*(\w+)\s*\($")


def has_a_sink(text: str, language: Language) -> bool:
    """Whether `text` as written holds anything a sink's pattern matches (its live code can hold no
    more): a file without one needs no further reading."""
    return any(sink.pattern.search(text) for sink in _SINKS[language])


def declared_methods(text: str, language: Language) -> frozenset[str]:
    """The methods a PHP file declares (a Ruby file: none is told apart)."""
    return frozenset(_OWN_METHOD.findall(text)) if language is Language.PHP else frozenset()


def sink_texts(lines: list[str], live: list[str], number: int, language: Language,
               own: frozenset[str]) -> Iterator[tuple[Sink, str, str]]:
    """Each sink on line `number` with what it runs, live and as written (`own`: the methods the
    file declares, which `$this->` calls instead of a database's)."""
    for sink in _SINKS[language]:
        for match in sink.pattern.finditer(live[number - 1]):
            called = _THIS_METHOD.search(live[number - 1], 0, match.end())
            if called is not None and called.group(1) in own:
                continue
            run = _run_text(lines, live, number, match, sink, language)
            if run is not None:
                yield sink, *run


def _run_text(lines: list[str], live: list[str], number: int, match: re.Match[str], sink: Sink,
              language: Language) -> tuple[str, str] | None:
    """The live code and the text as written of what the sink runs: the chosen argument of its call
    (to the closing parenthesis, up to ten lines on), or the backtick string or `%x(…)`."""
    code, raw = live[number - 1], lines[number - 1]
    opener = match.group(0)
    if opener == "`" or opener.startswith("%x"):
        closer = {"`": "`", "%x(": ")", "%x{": "}", "%x[": "]"}[opener]
        end = raw.find(closer, match.end())
        end = len(raw) if end < 0 else end
        return (code[match.end() : end], raw[match.end() : end]) if end > match.end() else None
    text, written = arguments_text(lines, live, number, match.end(), opener.endswith("("))
    if sink.rule == RULE_SHELL and sink.bare:  # `system("bash", "-c", command)`: the shell's command line
        listed = _SHELL_LIST_FIRST.compiled().match(written)
        if listed is not None:
            text, written = text[listed.end() :], written[listed.end() :]
    arguments = argument_spans(text)
    if not arguments:
        return None
    index = sink.argument if sink.argument >= 0 else min(1, len(arguments) - 1)
    if index >= len(arguments):
        return None
    start, end = arguments[index]
    chosen = text[start:end]
    if language is Language.RUBY and chosen.lstrip().startswith("["):
        if sink.rule == RULE_SHELL:
            return None  # `Open3.pipeline(["sort", file])`: a program and its arguments, no shell
        # `where(["email LIKE ?", "%" + term + "%"])`: the first element is the SQL, the rest are bound
        opening = start + len(chosen) - len(chosen.lstrip()) + 1
        elements = argument_spans(text[opening:end] + ")")
        if not elements:
            return None
        start, end = opening + elements[0][0], opening + elements[0][1]
        chosen = text[start:end]
    if not sink.bare and not _built(chosen, written[start:end]):
        return None
    if sink.leading:
        return _leading_value(chosen, written[start:end])
    return chosen, written[start:end]


def arguments_text(lines: list[str], live: list[str], number: int, start: int, parenthesized: bool) -> tuple[str, str]:
    """The live code and the text as written of a call's arguments from column `start` of line
    `number`: to its closing parenthesis, over up to ten lines; for Ruby's call without one
    (`system params[:cmd] if …`), to the statement's end or its modifier, a line ending in `,` or
    `\\` continued, and a `)` added to close it as the other kind is closed."""
    text, written = live[number - 1][start:], lines[number - 1][start:]
    following = number
    while (open_brackets(text) >= 0 if parenthesized else text.rstrip().endswith((",", "\\"))) \
            and following < min(len(lines), number + 10):
        text, written = text + "\n" + live[following], written + "\n" + lines[following]
        following += 1
    if not parenthesized:
        statement_end = RUBY_STATEMENT_END.search(text)
        cut = len(text) if statement_end is None else statement_end.start()
        text, written = text[:cut] + ")", written[:cut] + ")"
    return text, written


def _leading_value(live: str, written: str) -> tuple[str, str] | None:
    """The value `written` starts with, live and as written: the whole of a name or call, or the
    interpolation that opens a string (`"#{path}/x"`); None for a string that starts with text."""
    indent = len(written) - len(written.lstrip())
    if not written.lstrip().startswith(("\"", "'", "%")):
        return live, written
    if not written.startswith("\"#{", indent):
        return None
    depth = 0
    for index in range(indent + 2, len(live)):
        depth += live[index] == "{"
        depth -= live[index] == "}"
        if depth == 0:
            return live[indent + 3 : index], written[indent + 3 : index]
    return None


RUBY_STATEMENT_END = re.compile(r"\s(?:if|unless|while|until|rescue|do)\b|(?<!#)\{|;")
# A shell named first in the argument list with `-c` (`["bash", "-c", …]`): what follows is its command.
_SHELL_LIST_FIRST = LazyPattern(rf"\s*\[?\s*{SHELL_LIST}")
# A request value handed whole as the conditions: a string there is SQL (`where(params[:filter])`).
_WHOLE_REQUEST_VALUE = re.compile(r"\*{0,2}(?:params|request\.params|cookies)(?:\s*\[[^\]]+\])+")


def _built(argument: str, written: str) -> bool:
    """Whether the argument is text written with values in it: a string literal (its interpolations
    kept in the live code), a concatenation, or a request value handed whole (`where(params[:filter])`,
    whose sender can make it a string). A name or a hash (`where(id: params[:id])`, `where(conditions)`)
    is conditions Active Record binds, not SQL."""
    if _HASH_KEY.match(written):  # `find_by(path: "/" + id)`, `where("$text" => {…})`: a hash's key
        return False
    return (written.lstrip().startswith(("\"", "'", "%Q", "%(", "<<")) or re.search(r"(?<![+<])\+(?!=)", argument) is not None
            or _WHOLE_REQUEST_VALUE.fullmatch(argument.strip()) is not None)


_HASH_KEY = re.compile(r"""\s*(?:"[^"\n]*"|'[^'\n]*'|:?\w+[?!]?)\s*(?:=>|:(?!:))""")
