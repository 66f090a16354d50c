"""What makes request input safe in the text a Ruby or PHP sink runs (lenses/security/ruby_php.py):
an escape or a number conversion around the value itself, or a check above the sink that the value
is all digits or one of a list the code holds.

An escape clears the value it wraps, not the text around it: in
`"… id = #{id.to_i} AND name = '#{params[:name]}'"` the name still writes SQL. PHP's SQL quote
escapes are kept apart (`QUOTE_ESCAPES`): they protect only a value written between quotes
(`sql_quoted`). The values a nested `prepare(…)` binds are not the statement's text at all.
"""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.ruby_php_text import argument_spans

# PHP's escapes for a value written inside SQL quotes: written unquoted (`WHERE id = $id`) it still
# writes SQL (`1 OR 1=1`), and no such escape makes a value safe in a shell command or code.
# `addslashes` is none of them (multi-byte character sets defeat it): its value is followed on.
QUOTE_ESCAPE_FUNCTIONS = ("mysqli_real_escape_string", "mysql_real_escape_string", "pg_escape_string", "sqlite_escape_string")
QUOTE_ESCAPE_METHODS = ("real_escape_string", "escape_string", "escape")
_QUOTE_ESCAPE_PATTERN = (
    rf"\b(?:{'|'.join(QUOTE_ESCAPE_FUNCTIONS)})\s*\(|->\s*(?:{'|'.join(QUOTE_ESCAPE_METHODS)})\s*\("
)
QUOTE_ESCAPES = LazyPattern(_QUOTE_ESCAPE_PATTERN)
# Where the value is made safe for the text it goes into: a number, or an escape of its kind. Each
# is a call around the value (`Integer(…)`, `intval(…)`), a cast before it (`(int) $id`), or a
# conversion after it (`id.to_i`).
_CALLS = {
    Language.RUBY: r"\b(?:Integer|Float)\s*\(|\bquote\s*\(|\bsanitize_sql\w*\s*\(|\bShellwords\.(?:escape|join)\s*\(",
    Language.PHP: r"\b(?:intval|floatval|boolval|pg_escape_literal|escapeshellarg|escapeshellcmd)\s*\(|->\s*quote\s*\(",
}
_AFTER = r"\.(?:to_[if]|shellescape)\b"
_CAST = r"\(\s*(?:int|float|bool)\s*\)"
_ESCAPE_PARTS = {
    Language.RUBY: LazyPattern(rf"(?P<call>{_CALLS[Language.RUBY]})|(?P<after>{_AFTER})"),
    Language.PHP: LazyPattern(rf"(?P<call>{_CALLS[Language.PHP]})|(?P<cast>{_CAST})"),
}
ESCAPES = {
    Language.RUBY: LazyPattern(rf"{_CALLS[Language.RUBY]}|{_AFTER}|\bShellwords\.escape\b|\bconnection\.quote\b"),
    Language.PHP: LazyPattern(rf"{_CALLS[Language.PHP]}|{_CAST}|{_QUOTE_ESCAPE_PATTERN}"),
}
# A check above the sink that the value is all digits, or one of a list the code holds
# (`in_array($sort, $sorts)`, `COLUMNS.include?(column)`): it can then write no SQL or shell syntax.
_DIGITS = r"['\"]/\^\\d[+*]\$/\w*['\"]|/\\A\\d[+*]\\z/|/\^\\d[+*]\$/"
_VALIDATED = {
    Language.PHP: LazyPattern(
        r"\b(?:is_numeric|ctype_digit|is_int)\s*\(\s*(?P<value>[^()]+?)\s*\)"
        rf"|\bpreg_match\s*\(\s*(?:{_DIGITS})\s*,\s*(?P<matched>[^(),]+?)\s*[,)]"
        r"|\bfilter_var\s*\(\s*(?P<filtered>[^(),]+?)\s*,\s*FILTER_VALIDATE_INT\b"
        r"|\bin_array\s*\(\s*(?P<listed>[^(),]+?)\s*,"
    ),
    Language.RUBY: LazyPattern(
        rf"(?P<value>[\w@.\[\]:'\"]+?)\s*(?:=~|\.match\??\s*\(?)\s*(?:{_DIGITS})"
        r"|\.include\?\s*\(?\s*(?P<listed>[\w@.\[\]:'\"]+?)\s*(?:\)|$|\s(?:then|&&|and|\|\||or)\b)"
    ),
}


def validated_values(lines: list[str], first: int, number: int, language: Language) -> set[str]:
    """The values (whitespace taken out) a check between `first` and the sink makes sure are digits
    or one of a list."""
    pattern = _VALIDATED[language].compiled()
    found = set()
    for line in lines[first : number - 1]:
        for match in pattern.finditer(line):
            value = next(group for group in match.groups() if group)
            found.add(compact(value))
    return found


def compact(text: str) -> str:
    return re.sub(r"\s+", "", text).rstrip(";")


def without_escapes(live: str, written: str, language: Language) -> tuple[str, str]:
    """`live` (the live code of `written`, aligned with it) and `written` with every value an escape
    or a number conversion clears blanked, with the escape: the text the sender still writes."""
    spans = []
    for match in _ESCAPE_PARTS[language].compiled().finditer(live):
        if match.group("call") is not None:
            spans.append((match.start(), _closing(live, match.end() - 1)))
        elif match.lastgroup == "after":
            spans.append((_receiver_start(live, match.start()), match.end()))
        else:
            spans.append((match.start(), _operand_end(live, match.end())))
    for start, end in sorted(spans, reverse=True):
        blank = " " * (end - start)
        live, written = live[:start] + blank + live[end:], written[:start] + blank + written[end:]
    return live, written


def _closing(text: str, opener: int) -> int:
    """The index after the bracket that closes the one at `opener` (the text's end if none does)."""
    depth = 0
    for index in range(opener, len(text)):
        if text[index] in "([{":
            depth += 1
        elif text[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _receiver_start(text: str, end: int) -> int:
    """Where the receiver ending at `end` starts: `params[:id]` in `params[:id].to_i`, `user.age`
    in `user.age.to_i`, `(a + b)` in `(a + b).to_i`."""
    index = end
    while index > 0:
        char = text[index - 1]
        if char in ")]}":
            depth = 0
            while index > 0:
                index -= 1
                depth += text[index] in ")]}"
                depth -= text[index] in "([{"
                if depth == 0:
                    break
        elif re.match(r"[\w@$.:?!]", char):
            index -= 1
        else:
            break
    return index


def _operand_end(text: str, start: int) -> int:
    """The index after the operand a cast at `start` applies to: a name with what follows it
    (`$row['id']`, `$this->id`, `count($rows)`), or a parenthesized expression."""
    index = start
    while index < len(text) and text[index] in " \t":
        index += 1
    if index < len(text) and text[index] == "(":
        return _closing(text, index)
    name = re.compile(r"[$\w\\:]+").match(text, index)
    if name is None:
        return index
    index = name.end()
    while index < len(text):
        if text[index] in "([":
            index = _closing(text, index)
        elif text.startswith("->", index):
            field = re.compile(r"->\s*\w+").match(text, index)
            if field is None:
                break
            index = field.end()
        else:
            break
    return index


def sql_quoted(written: str, offset: int) -> bool:
    """Whether the value written at `offset` of a PHP statement sits between SQL quotes: `'$id'`,
    `'{$id}'`, or `"… = '" . $id . "'"` (the literal before the concatenation ends in a quote)."""
    before = written[:offset].rstrip()
    if before.endswith("{"):
        before = before[:-1]
    if before.endswith("."):  # a concatenation: the SQL text is the literal that ends before it
        before = before[:-1].rstrip()
        if not before or before[-1] not in "'\"":
            return False
        before = before[:-1]
    return before.endswith(("'", '"'))


_PREPARE = re.compile(r"\bprepare\s*\(")


def without_bound_values(run: str) -> str:
    """`run` with the values a nested `prepare(…)` binds blanked: WordPress's
    `$wpdb->query($wpdb->prepare("… %s", $_GET['name']))` writes no request text into the SQL."""
    for match in reversed(list(_PREPARE.finditer(run))):
        spans = argument_spans(run[match.end() :])
        if len(spans) > 1:
            start, end = match.end() + spans[1][0], match.end() + spans[-1][1]
            run = run[:start] + " " * (end - start) + run[end:]
    return run
