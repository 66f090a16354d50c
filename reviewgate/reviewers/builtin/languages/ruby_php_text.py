"""Ruby's and PHP's lines as their live code: what the security sinks and the open-redirect reader
look for in these languages, strings' literal text and comments blanked, interpolations kept."""

from __future__ import annotations

import re

from reviewgate.reviewers.builtin.language_table import Language


def live_code(line: str, language: Language) -> str:
    """The line with its comment and the literal parts of its strings blanked (same length), the
    code of an interpolation kept: Ruby's `#{…}` in double-quoted strings and backticks, PHP's
    `$name`, `{$…}` and `${…}` in double-quoted strings and backticks."""
    out = list(line)
    index, length = 0, len(line)
    while index < length:
        char = line[index]
        if char == "#" and language is Language.RUBY and not line.startswith("{", index + 1):
            return "".join(out[:index]) + " " * (length - index)
        if language is Language.PHP and (line.startswith("//", index) or char == "#"):
            return "".join(out[:index]) + " " * (length - index)
        if char in "\"'`":
            index = _blank_string(line, out, index, char, language)
            continue
        index += 1
    return "".join(out)


def _blank_string(line: str, out: list[str], start: int, quote: str, language: Language) -> int:
    """Blank the string opening at `start`, keeping its interpolations; the index after it."""
    interpolates = quote != "'"
    index = start + 1
    while index < len(line):
        char = line[index]
        if char == "\\":
            out[index] = " "
            if index + 1 < len(line):
                out[index + 1] = " "
            index += 2
            continue
        if char == quote:
            return index + 1
        if interpolates and language is Language.RUBY and line.startswith("#{", index):
            index = _skip_braces(line, index + 1)
            continue
        if interpolates and language is Language.PHP and char == "$" and index + 1 < len(line) and (
            line[index + 1].isalpha() or line[index + 1] in "_{"
        ):
            end = _php_variable_end(line, index)
            index = end
            continue
        if interpolates and language is Language.PHP and line.startswith("{$", index):
            index = _skip_braces(line, index)
            continue
        out[index] = " "
        index += 1
    return index


def _skip_braces(line: str, opening: int) -> int:
    """The index after the `}` that closes the `{` at `opening` (the line's end if none does)."""
    depth = 0
    for index in range(opening, len(line)):
        if line[index] == "{":
            depth += 1
        elif line[index] == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(line)


def _php_variable_end(line: str, start: int) -> int:
    """`$name`, `$name[key]` or `$name->field` inside a double-quoted string: where it ends."""
    if line.startswith("${", start):
        return _skip_braces(line, start + 1)
    match = re.compile(r"\$\w+(?:\[[^\]\"]*\]|->\w+)?").match(line, start)
    return start + 1 if match is None else match.end()
