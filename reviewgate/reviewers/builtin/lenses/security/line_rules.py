"""What a security rule looks for in the C-like languages (JavaScript, TypeScript, Go, Java, C#,
Kotlin): a pattern over one added line at a time, comments skipped, and the check of a match
that tells it from the exceptions; a template literal opened on the line is read to its end."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from reviewgate.lazy_patterns import LazyPattern


class LineRule(NamedTuple):
    """One pattern of a rule. The first rule of the lens's order that matches a line reports it."""

    rule: str
    pattern: LazyPattern
    what: str  # what the matched code does, the finding's title
    # (the text searched, where the match starts): the finding's evidence, or None when the match
    # is one of the exceptions.
    evidence: Callable[[str, int], str | None]
    skip_in_tests: bool = False  # a test of that path (TLS turned off) does not fire
    spans_lines: bool = False  # the text searched runs to the end of a template literal or parenthesis the line opens
    # How many added lines just above the line the evidence also reads (the text it is given starts
    # with them, the match's start counted in that text): a condition a setting sits under.
    lines_before: int = 0
    # The pattern's group the request chain is followed from (a statement passed as a name), rather
    # than the whole statement, whose other arguments (a query's parameters) may hold input safely.
    chained_group: str = ""
    # The evidence where `evidence` answers "" (a statement passed as it came) and request input
    # reaches `chained_group`: the request's text is the statement.
    chained_evidence: str = ""


# A choice between literals (`all ? "-a" : "-l"`, `${ifExists ? "IF EXISTS " : ""}`): text the code
# writes, whatever picks it.
LITERAL_CHOICE = LazyPattern(r"[\w$.!\s]+\?\s*(?:\"[^\"]*\"|'[^']*')\s*:\s*(?:\"[^\"]*\"|'[^']*')")


def passed_as_it_came(text: str, start: int, pattern: LazyPattern) -> str | None:
    """"" (evidence only with a request chain, `chained_evidence`) where the name the call is given
    is not assigned text in the lines above (`query = "…" + x`, a choice of literals): a value
    passed on as it came. None where it is built here, which the formatted rules judge."""
    passed = pattern.compiled().match(text, start)
    if passed is None:
        return None
    values = assigned_texts(text[:start], passed.group("name"))
    built = any(FORMATTED.search(value) or re.match(r"\s*[\"'`]", value) or LITERAL_CHOICE.search(value)
                for value in values)
    return None if built else ""


# A template literal or a call's parenthesis opened on a line and closed this many added lines later
# at most is read whole.
MAX_TEMPLATE_LINES = 30


def lines_above(number: int, added: dict[int, str], count: int) -> str:
    """The added lines just above the line, up to `count` of them, each ending in a newline;
    the first line that is not added ends the run."""
    lines: list[str] = []
    for previous in range(number - 1, number - 1 - count, -1):
        line = added.get(previous)
        if line is None:
            break
        lines.append(line + "\n")
    return "".join(reversed(lines))


def statement_text(code: str, number: int, added: dict[int, str]) -> str:
    """The line, and when it opens a template literal or a parenthesis it does not close, the added
    lines up to the closing backtick or parenthesis: a query written over several lines, or a
    call's arguments on the lines after it (`connection.prepareStatement(` then `queryString, …)`),
    is one piece of evidence."""
    parts = [code]
    for following in range(number + 1, number + 1 + MAX_TEMPLATE_LINES):
        text = "\n".join(parts)
        if text.count("`") % 2 == 0 and text.count("(") <= text.count(")"):
            break
        line = added.get(following)
        if line is None:
            break
        parts.append(line)
    return "\n".join(parts)


# How many added lines above a call given a name are read for the text assigned to that name.
NAME_LINES_ABOVE = 40
# Text built from values rather than written whole: a string joined to a value, a template's `${`, a
# format call, C#'s `$"…{`, Kotlin's `"…$name"`.
FORMATTED = LazyPattern(
    r"[\"'`]\s*\+|\+\s*[\"'`]|\$\{|\bfmt\.Sprintf\(|\bString\.format\(|\$\"[^\"\n]*\{|\"[^\"\n]*\$[A-Za-z_]"
)


def assigned_texts(above: str, name: str) -> list[str]:
    """What the lines above assign `name`, from its last plain assignment (`query = …`, `query :=
    …`) through the `+=` after it: each value to its `;`, or to a line end where no bracket or
    template is open and no `+` carries on."""
    values: list[str] = []
    for found in re.finditer(rf"(?<![\w$.]){re.escape(name)}\s*(?P<operator>:=|\+=|=)(?![=>])", above):
        if found.group("operator") != "+=":
            values = []
        end = found.end()
        while end < len(above) and above[end] != ";":
            if above[end] == "\n":
                before, after = above[found.end() : end].rstrip(), above[end + 1 :].lstrip()
                open_brackets = before.count("(") > before.count(")") or before.count("`") % 2 == 1
                if before and not (open_brackets or before.endswith(("+", ",")) or after.startswith(("+", "."))):
                    break
            end += 1
        values.append(above[found.end() : end])
    return values
