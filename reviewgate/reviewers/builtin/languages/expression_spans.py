"""Spans of one expression in blanked JavaScript, TypeScript or Go source (js_source.read_js): a
call's arguments, the operand before an index, the part of a URL expression that decides where
it goes."""

from __future__ import annotations

from reviewgate.reviewers.builtin.languages.javascript_source import JsSource


def closing_parenthesis(code: str, opener: int, end: int) -> int:
    """The `)` of the `(` at `opener` where the brackets were not paired (inside a template
    literal's `${...}`, blanked when they were paired); `opener` when there is none before `end`."""
    depth = 0
    for index in range(opener, end):
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        if depth == 0:
            return index
    return opener


def call_arguments(source: JsSource, opener: int) -> list[tuple[int, int]]:
    """The (start, end) span of each argument of the call whose `(` is at `opener`."""
    closer = source.pairs.get(opener)
    if closer is None or closer < opener:
        return []
    masked = source.masked
    spans: list[tuple[int, int]] = []
    start = index = opener + 1
    while index < closer:
        char = masked[index]
        if char in "([{" and index in source.pairs:
            index = source.pairs[index] + 1
            continue
        if char == ",":
            spans.append((start, index))
            start = index + 1
        index += 1
    if masked[start:closer].strip():
        spans.append((start, closer))
    return spans


def operand_before(source: JsSource, index: int) -> int:
    """Where the operand that ends just before `index` starts: a name, member chain, index or
    call (`bytes[i]`, `buf.readUInt32BE(0)`, `int(b[i])`)."""
    masked = source.masked
    position = source.skip_space_back(index - 1)
    start = position + 1
    while position >= 0:
        char = masked[position]
        if char in ")]" and position in source.pairs:
            position = source.pairs[position] - 1
        elif char.isalnum() or char in "_$.":
            position -= 1
        else:
            break
        start = position + 1
    return start


def leading_span(source: JsSource, start: int, end: int) -> tuple[int, int] | None:
    """The part of an expression that decides where a URL goes: the first operand of a `+`
    concatenation, or the first `${...}` of a template literal that starts with one; None when it
    starts with literal text (`'/items/' + id`, `` `/a?next=${x}` ``). A lone `/` before the
    input is no fixed text: `'/' + path` with a path of `/evil.example` is `//evil.example`."""
    masked, text = source.masked, source.text
    first = source.skip_space(start)
    if first >= end:
        return None
    if text[first] in "\"'":
        closing = masked.find(text[first], first + 1)  # the content is blanked: no quote inside
        after = source.skip_space(closing + 1) if closing > 0 else end
        if text[first + 1 : closing] in ("", "/") and after < end and masked[after] == "+":
            return leading_span(source, after + 1, end)
        return None
    if text[first] == "`":
        opener = first + 2 if text.startswith("/${", first + 1) else first + 1
        if text.startswith("${", opener):
            depth, index = 0, opener
            while index < end:
                depth += text[index] == "{"
                depth -= text[index] == "}"
                if depth == 0 and text[index] == "}":
                    return opener + 2, index
                index += 1
        return None
    index = first
    while index < end:
        char = masked[index]
        if char in "([{" and index in source.pairs and source.pairs[index] > index:
            index = source.pairs[index] + 1
            continue
        if char == "+" and masked[index + 1 : index + 2] != "+":
            return first, index
        index += 1
    return first, end
