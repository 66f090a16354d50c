"""Functions of JS/TS, Go, Java, C# and Kotlin from a small tokenizer, for the tests lens.

The tokenizer knows what is not code: comments, strings, JS/TS template literals (with the code
inside `${}`), Go raw strings and JS regex literals, roughly. A shell `if` inside a Go raw string
is text, not a branch. Functions are found from tokens: `func Name(` and `func (r *T) Name(` in
Go; `name(...) {`, `function name(`, `name = (...) => {` and `name: (...) => {` elsewhere.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from reviewgate.reviewers.builtin.common import Language
from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes, add_shape

_TOKEN = re.compile(
    r"""\s*(?:(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<string>\"\"\".*?(?:\"\"\"|\Z)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)
    |(?P<backtick>`)
    |(?P<word>[A-Za-z_$\#@][\w$]*)
    |(?P<number>\d[\w.]*)
    |(?P<operator>&&|\|\||\?\?|\?\.|=>|->|::|[^\s\w]))""",
    re.DOTALL | re.VERBOSE,
)
_REGEX_LITERAL = r"/(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[a-z]*"
# After these a `/` starts a regex literal, not a division.
_BEFORE_REGEX_WORDS = frozenset(
    {"return", "typeof", "case", "in", "of", "delete", "void", "throw", "new", "instanceof", "yield", "await", "else"}
)
_CONTROL = frozenset(
    {
        "if", "for", "while", "switch", "catch", "with", "synchronized", "using", "foreach", "lock", "fixed",
        "function", "return", "new", "typeof", "await", "super", "this", "base", "else", "do", "try", "when",
    }
)
# A `{` after one of these opens a block or a literal, not a function body.
_STOP = frozenset(
    {";", "{", "}", "=", "=>", "(", "[", "class", "interface", "enum", "struct", "record", "object", "else",
     "try", "do", "finally", "return", "extends", "implements", "case", "default"}
)
_CLASS_WORDS = frozenset({"class", "interface", "enum", "struct", "record", "object", "namespace"})
_BRANCH_TOKENS = frozenset({"if", "case", "catch", "for", "while", "&&", "||", "??", "?", "foreach"})
_PAIRS = {"(": ")", "[": "]", "{": "}"}


class Tokens:
    __slots__ = ("lines", "strings", "texts")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.lines: list[int] = []
        self.strings: list[bool] = []  # the token is a string, template or regex literal


def _template_end(text: str, index: int) -> int:
    """The end of a template literal whose text starts at `index` (after the backtick)."""
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char == "`":
            return index + 1
        elif char == "$" and text.startswith("{", index + 1):
            index = _code_end(text, index + 2)
        else:
            index += 1
    return len(text)


def _code_end(text: str, index: int) -> int:
    """The end of the code in a template's `${ ... }`: after its closing brace."""
    depth = 1
    while index < len(text):
        match = _TOKEN.match(text, index)
        if match is None:
            return len(text)
        if match.lastgroup is None:  # only spaces were left
            return len(text)
        if match.lastgroup == "backtick":
            index = _template_end(text, match.end())
            continue
        token = match.group(match.lastgroup)
        depth += token == "{"
        depth -= token == "}"
        if depth == 0:
            return match.end()
        index = match.end()
    return len(text)


def tokenize(text: str, language: Language) -> Tokens:
    tokens = Tokens()
    texts, lines, strings = tokens.texts, tokens.lines, tokens.strings
    javascript = language in (Language.JAVASCRIPT, Language.TYPESCRIPT)
    line, counted, position = 1, 0, 0
    while position < len(text):
        resume = len(text)
        # Spaces and the token after them in one match; a template, raw string or regex literal
        # ends the run and the scan resumes after it.
        for match in _TOKEN.finditer(text, position):
            kind = match.lastgroup
            if kind is None or kind == "comment":
                continue
            start = match.start(kind)
            line += text.count("\n", counted, start)
            counted = start
            if kind == "backtick" or (
                javascript and kind == "operator" and text[start] == "/" and _regex_allowed(tokens)
            ):
                end = _literal_end(text, start, language)
                if end is not None:
                    texts.append('"')
                    lines.append(line)
                    strings.append(True)
                    resume = end
                    break
            texts.append('"' if kind == "string" else match.group(kind))
            lines.append(line)
            strings.append(kind == "string")
        line += text.count("\n", counted, resume)
        counted = position = resume
    return tokens


@functools.cache
def _regex_literal() -> re.Pattern[str]:
    """Compiled on first use (it costs more than the rest of the module's import): only JS/TS
    with a `/` where an expression starts needs it."""
    return re.compile(_REGEX_LITERAL)


def _literal_end(text: str, start: int, language: Language) -> int | None:
    """The end of the Go raw string, template literal or regex literal starting at `start`;
    None when a `/` there is a division after all."""
    if text[start] == "`":
        if language is Language.GO:
            closing = text.find("`", start + 1)
            return len(text) if closing < 0 else closing + 1
        return _template_end(text, start + 1)
    literal = _regex_literal().match(text, start)
    return None if literal is None else literal.end()


def _regex_allowed(tokens: Tokens) -> bool:
    if not tokens.texts:
        return True
    previous = tokens.texts[-1]
    if tokens.strings[-1] or previous in (")", "]", "}"):
        return False
    if previous[0].isalnum() or previous[0] in "_$":
        return previous in _BEFORE_REGEX_WORDS
    return True


def _matches(texts: list[str]) -> dict[int, int]:
    """Each opening bracket's closing one, both ways; unbalanced ones are left out."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for index, text in enumerate(texts):
        if text in _PAIRS:
            stack.append(index)
        elif text in (")", "]", "}"):
            while stack and _PAIRS[texts[stack[-1]]] != text:
                stack.pop()
            if stack:
                opening = stack.pop()
                pairs[opening], pairs[index] = index, opening
    return pairs


def _is_word(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] in "_$#")


class _Function(NamedTuple):
    name: str
    line: int
    opening: int  # index of the body's `{`
    public: bool


def _go_functions(tokens: Tokens, pairs: dict[int, int]) -> list[_Function]:
    texts, found = tokens.texts, []
    for index, text in enumerate(texts):
        if text != "func" or index + 1 >= len(texts):
            continue
        cursor, receiver = index + 1, ""
        if texts[cursor] == "(" and cursor in pairs:  # a method: `func (r *Router) Name(`
            words = [item for item in texts[cursor + 1 : pairs[cursor]] if _is_word(item)]
            receiver = words[1] if len(words) > 1 else (words[0] if words else "")
            cursor = pairs[cursor] + 1
        if cursor >= len(texts) or not _is_word(texts[cursor]):
            continue  # a function literal: part of the function around it
        name, name_index = texts[cursor], cursor
        cursor += 1
        if cursor < len(texts) and texts[cursor] == "[" and cursor in pairs:
            cursor = pairs[cursor] + 1
        if cursor >= len(texts) or texts[cursor] != "(" or cursor not in pairs:
            continue
        cursor = pairs[cursor] + 1
        # The result type runs to the body's brace. A `func` there is a function type (`func F()
        # func(int) error {`); one that starts a line is the next declaration (this one has no body).
        while cursor < len(texts) and texts[cursor] not in ("{", "}", ";") and not (
            texts[cursor] == "func" and tokens.lines[cursor - 1] != tokens.lines[cursor]
        ):
            cursor = pairs.get(cursor, cursor) + 1 if texts[cursor] in ("(", "[") else cursor + 1
            if cursor < len(texts) and texts[cursor] == "{" and texts[cursor - 1] in ("interface", "struct"):
                cursor = pairs.get(cursor, cursor) + 1
        if cursor < len(texts) and texts[cursor] == "{" and cursor in pairs:
            qualified = f"{receiver}.{name}" if receiver else name
            found.append(_Function(qualified, tokens.lines[name_index], cursor, name[0].isupper()))
    return found


def _name_before_parameters(texts: list[str], opening: int, language: Language) -> int | None:
    """The index of the name before a parameter list that starts at `opening`."""
    index = opening - 1
    if index >= 0 and texts[index] == ">":  # `name<T>(`
        depth = 0
        while index >= 0:
            depth += (texts[index] == ">") - (texts[index] == "<")
            if depth == 0:
                break
            index -= 1
        index -= 1
    if index < 0 or not _is_word(texts[index]) or texts[index] in _CONTROL:
        return None
    if index > 0 and texts[index - 1] in ("new", ".", "?."):
        return None
    if language is Language.KOTLIN and "fun" not in texts[max(0, index - 3) : index]:
        return None
    return index


def _arrow_name(texts: list[str], arrow: int, pairs: dict[int, int]) -> int | None:
    """The name an arrow function is assigned to: `name = (x) => {`, `name: async x => {`."""
    index = arrow - 1
    if index < 0:
        return None
    if texts[index] == ")":
        index = pairs.get(index, -1)
    index -= 1
    if index >= 0 and texts[index] == "async":
        index -= 1
    if index >= 1 and texts[index] in ("=", ":") and _is_word(texts[index - 1]):
        if texts[index] == ":" and (index < 2 or texts[index - 2] not in ("{", ",")):
            return None
        return index - 1
    return None


def _function_name(tokens: Tokens, brace: int, pairs: dict[int, int], language: Language) -> int | None:
    texts = tokens.texts
    index = brace - 1
    if index >= 0 and texts[index] == "=>":
        return _arrow_name(texts, index, pairs) if language in (Language.JAVASCRIPT, Language.TYPESCRIPT) else None
    steps = 0
    while index >= 0 and texts[index] != ")":  # past a return type or a throws clause
        if texts[index] in _STOP or tokens.strings[index] or steps > 24:
            return None
        index, steps = index - 1, steps + 1
    if index < 0 or index not in pairs:
        return None
    return _name_before_parameters(texts, pairs[index], language)


def _class_name(texts: list[str], brace: int) -> str | None:
    for index in range(brace - 1, max(-1, brace - 14), -1):
        if texts[index] in _CLASS_WORDS and index + 1 < brace and _is_word(texts[index + 1]):
            return texts[index + 1]
        if texts[index] in (";", "{", "}", "=", "("):
            return None
    return None


def _other_functions(tokens: Tokens, pairs: dict[int, int], language: Language) -> list[_Function]:
    texts, found = tokens.texts, []
    scopes: list[tuple[int, str]] = []  # (closing brace index, class name)
    for index, text in enumerate(texts):
        while scopes and scopes[-1][0] < index:
            scopes.pop()
        if text != "{" or index not in pairs:
            continue
        class_name = _class_name(texts, index)
        if class_name is not None:
            scopes.append((pairs[index], class_name))
            continue
        name_index = _function_name(tokens, index, pairs, language)
        if name_index is None:
            continue
        name = texts[name_index]
        before = texts[max(0, name_index - 6) : name_index]
        public = not name.startswith(("_", "#")) and "private" not in before
        qualified = ".".join([*(scope[1] for scope in scopes), name])
        found.append(_Function(qualified, tokens.lines[name_index], index, public))
    return found


# Tokens of a bare accessor body: `return this.name;`, `return x`.
_TRIVIAL_TOKENS = frozenset({"return", ".", ";", "this", "self", "null", "nil", "undefined", "true", "false"})


def _is_trivial(tokens: Tokens, start: int, end: int) -> bool:
    """Empty, or a return of a name, member or literal: no operator, call or second statement."""
    return all(
        tokens.strings[index] or _is_word(text) or text[0].isdigit() or text in _TRIVIAL_TOKENS
        for index, text in enumerate(tokens.texts[start:end], start)
    ) and tokens.texts[start:end].count("return") <= 1


def _is_branch(texts: list[str], index: int) -> bool:
    text = texts[index]
    if text != "?":
        return text in _BRANCH_TOKENS
    # `x?: T`, `f(a?)`, `a?.b` (TypeScript optional marks) are not conditionals.
    return index + 1 >= len(texts) or texts[index + 1] not in (":", ")", ",", ".")


def _counts(tokens: Tokens, owner: list[int], number: int, start: int, end: int) -> tuple[int, int]:
    """(branches, statements: lines holding code) of one function, without its nested ones."""
    own = [index for index in range(start, end) if owner[index] == number]
    branches = sum(1 for index in own if tokens.texts[index] in _BRANCH_TOKENS and _is_branch(tokens.texts, index))
    return branches, len({tokens.lines[index] for index in own})


def c_like_shapes(text: str, language: Language) -> Shapes:
    tokens = tokenize(text, language)
    pairs = _matches(tokens.texts)
    functions = _go_functions(tokens, pairs) if language is Language.GO else _other_functions(tokens, pairs, language)
    ordered = sorted(functions, key=lambda item: item.opening)
    owner = [-1] * len(tokens.texts)  # the innermost function each token belongs to
    for number, function in enumerate(ordered):  # by start: inner ones overwrite
        closing = pairs[function.opening]
        owner[function.opening + 1 : closing] = [number] * (closing - function.opening - 1)
    shapes: Shapes = {}
    for number, function in enumerate(ordered):
        closing = pairs[function.opening]
        text = " ".join(tokens.texts[function.opening + 1 : closing])
        add_shape(
            shapes,
            FunctionShape(
                name=function.name,
                line=function.line,
                end_line=tokens.lines[closing],
                text=text,
                counts=functools.partial(_counts, tokens, owner, number, function.opening + 1, closing),
                public=function.public,
                body=functools.partial(str, text),  # tokens hold no comments nor layout already
                trivial=_is_trivial(tokens, function.opening + 1, closing),
            ),
        )
    return shapes
