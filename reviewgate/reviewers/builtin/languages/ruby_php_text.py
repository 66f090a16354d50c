"""Ruby's and PHP's lines as their live code: what the security sinks and the open-redirect reader
look for in these languages, strings' literal text and comments blanked, interpolations kept."""

from __future__ import annotations

import re

from reviewgate.reviewers.builtin.language_table import Language

# Where the reader must look: a comment's or a string's start (everything else is code as it is).
_SPECIAL = {Language.RUBY: re.compile(r"[#\"'`]"), Language.PHP: re.compile(r"[#/\"'`]")}
# Within a string: an escape, its closing quote, and where an interpolation may start.
_STRING_STOPS = {
    (language, quote): re.compile("[\\\\" + re.escape(quote) + (extra if quote != "'" else "") + "]")
    for language, extra in ((Language.RUBY, "#"), (Language.PHP, "$\\{"))
    for quote in "\"'`"
}
_NOT_A_LINE_BREAK = re.compile(r"[^\n]")


def live_code(text: str, language: Language) -> str:
    """`text` (a line or a whole file) with its comments (PHP's `/* … */` too) and the literal parts of its strings
    blanked, line breaks kept (same length, same lines), the code of an interpolation kept: Ruby's
    `#{…}` in double-quoted strings and backticks, PHP's `$name`, `{$…}` and `${…}` in double-quoted
    strings and backticks. A string may run over several lines (`"INSERT … VALUES` then `('{$ip}')"`)."""
    out = list(text)
    index, length = 0, len(text)
    special = _SPECIAL[language]
    while index < length:
        found = special.search(text, index)
        if found is None:
            break
        index = found.start()
        char = text[index]
        ruby_comment = char == "#" and language is Language.RUBY and not text.startswith("{", index + 1)
        php_comment = language is Language.PHP and (text.startswith("//", index) or (char == "#" and not text.startswith("[", index + 1)))
        if language is Language.PHP and text.startswith("/*", index):  # a block or doc comment, line breaks kept
            end = text.find("*/", index + 2)
            end = length if end < 0 else end + 2
            _blank(out, text, index, end)
            index = end
            continue
        if ruby_comment or php_comment:
            end = text.find("\n", index)
            end = length if end < 0 else end
            out[index:end] = " " * (end - index)
            index = end
            continue
        if char in "\"'`":
            index = _blank_string(text, out, index, char, language)
            continue
        index += 1
    return "".join(out)


def _blank(out: list[str], text: str, start: int, end: int) -> None:
    """Blank `text[start:end]` in `out`, its line breaks kept."""
    if end > start:
        out[start:end] = _NOT_A_LINE_BREAK.sub(" ", text[start:end])


def _blank_string(text: str, out: list[str], start: int, quote: str, language: Language) -> int:
    """Blank the string opening at `start`, keeping its interpolations and line breaks; the index
    after it."""
    interpolates = quote != "'"
    stops = _STRING_STOPS[(language, quote)]
    index = start + 1
    while index < len(text):
        found = stops.search(text, index)
        end = len(text) if found is None else found.start()
        _blank(out, text, index, end)
        index = end
        if found is None:
            break
        char = text[index]
        if char == "\\":
            out[index] = " "
            if index + 1 < len(text) and text[index + 1] != "\n":
                out[index + 1] = " "
            index += 2
            continue
        if char == quote:
            return index + 1
        if interpolates and language is Language.RUBY and text.startswith("#{", index):
            index = _skip_braces(text, index + 1)
            continue
        if interpolates and language is Language.PHP and char == "$" and index + 1 < len(text) and (
            text[index + 1].isalpha() or text[index + 1] in "_{"
        ):
            index = _php_variable_end(text, index)
            continue
        if interpolates and language is Language.PHP and text.startswith("{$", index):
            index = _skip_braces(text, index)
            continue
        out[index] = " "  # a `#`, `$` or `{` that opens nothing
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


def open_brackets(text: str) -> int:
    """How many of the call's parentheses are still open at the end of `text` (-1: closed)."""
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return -1
    return depth


def argument_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the top-level arguments of a call whose `(` came just before `text`."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return [*spans, (start, index)] if text[start:index].strip() or spans else spans
            depth -= 1
        elif char == "," and depth == 0:
            spans.append((start, index))
            start = index + 1
    return [*spans, (start, len(text))] if text[start:].strip() else spans
