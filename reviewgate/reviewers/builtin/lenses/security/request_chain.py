"""The request input that reaches a shell, SQL or eval sink: what such a finding blocks on.

Security findings are for exposures the diff creates: untrusted input reaching a query, a shell or
code that is run. A sink built from values is a finding wherever it is; it blocks only where a
request's value (its query, form, body, headers or cookies, or a route parameter the framework
fills from the request) reaches it within the function, followed by the readers the open-redirect
and regex rules use: languages/python_flow.py for Python, languages/text_flow.py for JavaScript,
TypeScript and Go, languages/server_input.py for Java, C# and Kotlin. In Python also one call up:
a caller in the module hands request input to the parameter the sink's text is built from.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.language_table import Language

if TYPE_CHECKING:  # the readers load only when a sink is found
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource
    from reviewgate.reviewers.builtin.languages.python_flow import Flows
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow

# What a finding without a chain says: reported, annotated, not blocking.
NO_CHAIN = (
    " Reported as minor: no request input was traced to it in this function (a request's query, "
    "form, body, headers or cookies, or a route parameter). It blocks where one is."
)
# Calls whose result is safe text in the sink: a number, or quoting made for it.
_PYTHON_SANITIZERS = frozenset({"int", "float", "quote", "shlex.quote", "quote_name", "quote_ident", "escape_string"})
_TEXT_SANITIZERS = r"\b(?:parseInt|parseFloat|Number|escape|escapeId|escapeIdentifier|escapeLiteral|quote|strconv\.Atoi)\s*\("
_SERVER_LANGUAGES = frozenset({Language.JAVA, Language.CSHARP, Language.KOTLIN})
# A file longer than this is not read for a chain (an oversized bundle): its sinks stay minor.
_MAX_FOLLOWED = 1_000_000


def python_chain(module: Callable[[], ast.Module | None], call: ast.Call) -> str | None:
    """How request input reaches the call's arguments (`name`, from `request.args.get('q')` at
    line 4), or None."""
    from reviewgate.reviewers.builtin.languages.python_flow import describe

    tree = module()
    if tree is None:
        return None
    flows = _python_flows(tree)
    arguments = (*call.args, *(keyword.value for keyword in call.keywords))
    flow = flows.of(call)
    for argument in arguments:
        origin = flow.origin(argument)
        if origin is not None:
            return describe(origin)
    return _through_a_caller(tree, flows, call, arguments)


def _through_a_caller(tree: ast.Module, flows: Flows, call: ast.Call, arguments: tuple[ast.expr, ...]) -> str | None:
    """One call up, within the module: the sink's function is handed request input by a caller
    (`find_user(cursor, request.args["name"])`) at the parameter the sink's text is built from."""
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, describe, leaf_name, scope_of
    from reviewgate.reviewers.builtin.python_walk import nodes_of

    function = scope_of(tree, call)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [item.arg for item in (*function.args.posonlyargs, *function.args.args)]
    names = {*positional, *(item.arg for item in function.args.kwonlyargs)}
    by_parameter = Flow(function, lambda node: isinstance(node, ast.Name) and node.id in names, _PYTHON_SANITIZERS)
    used = {origin.source for origin in map(by_parameter.origin, arguments) if origin is not None}
    if not used:
        return None
    for caller in nodes_of(tree, ast.Call):
        if leaf_name(caller) != function.name:
            continue
        # A method called on an object passes `self` itself: its arguments start at the second.
        offset = 1 if positional[:1] in (["self"], ["cls"]) and isinstance(caller.func, ast.Attribute) else 0
        for parameter in used:
            handed = _argument_for(caller, parameter, positional, offset)
            origin = None if handed is None else flows.of(caller).origin(handed)
            if origin is not None:
                return f"{describe(origin)}, handed to `{function.name}` as `{parameter}` at line {caller.lineno}"
    return None


def _argument_for(call: ast.Call, parameter: str, positional: list[str], offset: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if parameter in positional:
        index = positional.index(parameter) - offset
        if 0 <= index < len(call.args) and not any(isinstance(item, ast.Starred) for item in call.args[: index + 1]):
            return call.args[index]
    return None


@functools.lru_cache(maxsize=4)
def _python_flows(tree: ast.Module) -> Flows:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Flows, request_input

    return Flows(tree, lambda scope: Flow(scope, request_input, _PYTHON_SANITIZERS, route_parameters=True))


class TextChains:
    """The chains of one C-like file, its reader made when a finding first asks."""

    def __init__(self, text: str | None, language: Language) -> None:
        self.text = text if text is not None and len(text) <= _MAX_FOLLOWED else ""
        self.language = language

    def chain(self, line: int, length: int) -> str | None:
        """How request input reaches the statement that starts on `line` and runs `length`
        characters, or None."""
        from reviewgate.reviewers.builtin.languages.text_flow import describe

        if not self.text:
            return None
        start = self._source.line_starts[line - 1]
        if self.language in _SERVER_LANGUAGES:
            from reviewgate.reviewers.builtin.languages.server_input import origin_of

            found = origin_of(self._source, self.language, start, start + length, None)
            # The scanner looks back a fixed number of lines: a source in the method before is not this one's.
            if found is None or found.line < self._source.line_of(_method_start(self._source.masked, start)):
                return None
            return found.describe()
        if self._flow is None:
            return None
        origin = self._flow.origin(start, min(len(self.text), start + length))
        return None if origin is None else describe(origin)

    @functools.cached_property
    def _source(self) -> JsSource:
        from reviewgate.reviewers.builtin.languages.javascript_source import read_js

        return read_js(self.text)

    @functools.cached_property
    def _flow(self) -> TextFlow | None:
        from reviewgate.reviewers.builtin.languages.text_flow import TextFlow, find_source, request_sources

        if self.language not in (Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO):
            return None
        go = self.language is Language.GO
        sources = request_sources(go)
        if find_source(sources, self.text) is None:
            return None  # no request read anywhere in the file
        return TextFlow(self._source, [sources], re.compile(_TEXT_SANITIZERS), go)


# A block's header that is a statement's, not a method's: `if (…) {`, `for (…) {`, `catch (…) {`.
# Kotlin's `fun name(…): Type {` ends in its return type, and a lambda's `call.respond {` in a name.
_STATEMENT_HEADER = re.compile(r"\b(?:if|for|foreach|while|switch|catch|using|lock|synchronized)\s*\(")
_METHOD_HEADER_END = re.compile(r"\)\s*(?:throws\s+[\w.,\s]+|:\s*[\w.<>?,\s]+)?$")


def _method_start(masked: str, offset: int) -> int:
    """Where the header of the Java, C# or Kotlin method (or Ktor route block) holding `offset`
    starts (0 when none is found):
    the innermost enclosing block whose header ends in a parameter list and is no statement's."""
    depth, index = 0, offset
    while index > 0:
        index -= 1
        char = masked[index]
        if char == "}":
            depth += 1
        elif char == "{":
            if depth:
                depth -= 1
                continue
            before = masked[max(0, index - 400) : index]
            header = re.split(r"[;{}]", before)[-1]
            if _METHOD_HEADER_END.search(header.rstrip()) and not _STATEMENT_HEADER.search(header):
                return index - len(header)
    return 0
