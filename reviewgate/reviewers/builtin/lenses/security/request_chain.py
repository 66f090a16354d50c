"""The request input that reaches a shell, SQL or eval sink: what such a finding blocks on.

Security findings are for exposures the diff creates: untrusted input reaching a query, a shell or
code that is run. A sink built from values is a finding wherever it is; it blocks only where a
request's value (its query, form, body, headers or cookies, or a route parameter the framework
fills from the request) reaches it within the function, followed by the readers the open-redirect
and regex rules use: languages/python_flow.py for Python, languages/text_flow.py for JavaScript,
TypeScript and Go, languages/server_input.py for Java, C# and Kotlin. Also up to two calls up: a caller in
the module (Python) or file (the others, request_callers.py) hands request input to the parameter
the sink's text is built from; also a caller in another file of the change that imports the
function (request_callers.imported_calls for the C-like languages).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.language_table import Language, language_of

if TYPE_CHECKING:  # the readers load only when a sink is found
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource
    from reviewgate.reviewers.builtin.languages.python_flow import Flows
    from reviewgate.reviewers.builtin.languages.server_input import Origin
    from reviewgate.reviewers.builtin.languages.text_flow import TextFlow
    from reviewgate.reviewers.builtin.lenses.security.request_callers import Callee

# What a finding without a chain says: reported, annotated, not blocking.
NO_CHAIN = (
    " Reported as minor: no request input was traced to it in this function or from a caller of it "
    "(a request's query, form, body, headers or cookies, or a route parameter). It blocks where one is."
)
# Calls whose result is safe text in the sink: a number, or quoting made for it.
_PYTHON_SANITIZERS = frozenset({"int", "float", "quote", "shlex.quote", "quote_name", "quote_ident", "escape_string"})
_TEXT_SANITIZERS = re.compile(
    r"\b(?:parseInt|parseFloat|Number|escape|escapeId|escapeIdentifier|escapeLiteral|quote|strconv\.Atoi)\s*\("
)
_SERVER_LANGUAGES = frozenset({Language.JAVA, Language.CSHARP, Language.KOTLIN})
# A value whose quotes are replaced (`action.replace('\'', '"')`, `replaceAll("'", "''")`): it cannot
# close the quoted literal it is written into, the escaping the request scanner follows no further.
_QUOTES_REPLACED = re.compile(r"""\.replace(?:All)?\s*\(\s*(?:'\\''|"'"|"\\'")""")
# How many calls up a chain is followed (a handler, the helper it calls, the helper's helper).
_MAX_CALLS = 2
# A file longer than this is not read for a chain (an oversized bundle): its sinks stay minor.
_MAX_FOLLOWED = 1_000_000


# The change's other Python files whose text names a function (the argument), by path, parsed when a
# sink without a chain asks.
OtherModules = Callable[[str], Iterable[tuple[str, ast.Module]]]


def python_chain(module: Callable[[], ast.Module | None], call: ast.Call, path: str = "",
                 others: OtherModules | None = None, followed: tuple[ast.expr, ...] | None = None) -> str | None:
    """How request input reaches the call's arguments, or the `followed` ones alone (`name`, from
    `request.args.get('q')` at line 4), within its function, from a caller in its module or from
    one in the change's `others` that imports the function from it; or None."""
    from reviewgate.reviewers.builtin.languages.python_flow import describe

    tree = module()
    if tree is None:
        return None
    flows = _python_flows(tree)
    arguments = followed if followed is not None else (*call.args, *(keyword.value for keyword in call.keywords))
    flow = flows.of(call)
    for argument in arguments:
        origin = flow.origin(argument)
        if origin is not None:
            return describe(origin)
    return _through_a_caller(tree, call, arguments, path, others)


def _through_a_caller(tree: ast.Module, call: ast.Call, arguments: tuple[ast.expr, ...], path: str,
                      others: OtherModules | None, depth: int = 1) -> str | None:
    """Up to `_MAX_CALLS` calls up: the sink's function is handed request input by a caller at the
    parameter the sink's text is built from: in the module (`find_user(cursor,
    request.args["name"])`), or in another file of the change that imports the function from this
    module (`from app.db import find_user`, `db.find_user(…)`); or the caller hands on a parameter
    of its own that its callers in its module fill so."""
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, leaf_name, scope_of
    from reviewgate.reviewers.builtin.lenses.security.python_calls import dotted
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
        if leaf_name(caller) == function.name:
            handed = _handed(tree, caller, function.name, used, positional, "", depth)
            if handed is not None:
                return handed
    if others is None or function not in tree.body:
        return None  # a method or a nested function is not imported by name
    stem = PurePosixPath(path).stem if PurePosixPath(path).stem != "__init__" else PurePosixPath(path).parent.name
    for other_path, other in others(function.name):
        direct, modules = _imported_as(other, stem, function.name)
        for caller in nodes_of(other, ast.Call) if direct or modules else ():
            called = caller.func
            if (isinstance(called, ast.Name) and called.id in direct) or (
                    isinstance(called, ast.Attribute) and called.attr == function.name and dotted(called.value) in modules):
                handed = _handed(other, caller, function.name, used, positional, other_path, depth)
                if handed is not None:
                    return handed
    return None


def _handed(tree: ast.Module, caller: ast.Call, name: str, used: set[str], positional: list[str], path: str,
            depth: int) -> str | None:
    """How the caller hands request input to one of the `used` parameters, from its function or
    (below `_MAX_CALLS`) from its own callers, or None."""
    from reviewgate.reviewers.builtin.languages.python_flow import describe

    # A method called on an object passes `self` itself: its arguments start at the second.
    offset = 1 if positional[:1] in (["self"], ["cls"]) and isinstance(caller.func, ast.Attribute) else 0
    for parameter in sorted(used):
        handed = _argument_for(caller, parameter, positional, offset)
        if handed is None:
            continue
        origin = _python_flows(tree).of(caller).origin(handed)
        found = describe(origin) if origin is not None else None
        if found is None and depth < _MAX_CALLS:
            found = _through_a_caller(tree, caller, (handed,), path, None, depth + 1)
        if found is not None:
            where = f"{path}:{caller.lineno}" if path else f"line {caller.lineno}"
            return f"{found}, handed to `{name}` as `{parameter}` at {where}"
    return None


def _imported_as(tree: ast.Module, stem: str, name: str) -> tuple[set[str], set[str]]:
    """The names a module calls the function `name` of the module `stem` by (`from app.db import
    find_user [as find]`), and the names it calls that module by (`from app import db`, `import
    app.db`)."""
    from reviewgate.reviewers.builtin.python_walk import nodes_of

    direct: set[str] = set()
    modules: set[str] = set()
    for imported in nodes_of(tree, ast.ImportFrom):
        source = (imported.module or "").rpartition(".")[2]
        for alias in imported.names:
            if source == stem and alias.name == name:
                direct.add(alias.asname or alias.name)
            elif alias.name == stem:
                modules.add(alias.asname or alias.name)
    for node in nodes_of(tree, ast.Import):
        for alias in node.names:
            if alias.name.rpartition(".")[2] == stem:
                modules.add(alias.asname or alias.name)
    return direct, modules


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


# The change's other files of the same language family (JavaScript with TypeScript, Go with Go), by
# path with their text, read when a sink without a chain asks.
OtherFiles = Callable[[], Iterable[tuple[str, str | None]]]


class TextChains:
    """The chains of one C-like file, its reader made when a finding first asks."""

    def __init__(self, text: str | None, language: Language, path: str = "", others: OtherFiles | None = None) -> None:
        self.text = text if text is not None and len(text) <= _MAX_FOLLOWED else ""
        self.language = language
        self.path = path
        self.others = others
        self._other_chains: dict[str, TextChains] = {}  # each other file read once for all of this file's sinks

    def chain(self, line: int, length: int, offset: int = 0) -> str | None:
        """How request input reaches the text that starts `offset` characters into `line` and runs
        `length` characters (a statement, or the name it is given), within its function or one
        call up, or None."""
        if not self.text:
            return None
        start = self._source.line_starts[line - 1] + offset
        end = min(len(self.text), start + length)
        return self._within(start, end) or self._through_a_caller(start, end)

    def _within(self, start: int, end: int) -> str | None:
        """How request input reaches `text[start:end]` within its function."""
        from reviewgate.reviewers.builtin.languages.text_flow import describe

        if self.language in _SERVER_LANGUAGES:
            found = self._server_origin(start, end, None)
            return None if found is None else found.describe()
        origin = None if self._flow is None else self._flow.origin(start, end)
        return None if origin is None else describe(origin)

    def _through_a_caller(self, start: int, end: int, depth: int = 1) -> str | None:
        """Up to `_MAX_CALLS` calls up: the sink's function is handed request input by a caller at a
        parameter the sink is built from (`byName(statement, request.getParameter("name"))`), in the
        file or in another file of the change that imports it (request_callers.imported_calls), or
        the caller hands on a parameter of its own that its callers fill so, within its file."""
        from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments
        from reviewgate.reviewers.builtin.lenses.security.request_callers import calls_of, enclosing_callee

        if self.language not in _SERVER_LANGUAGES and self._flow is None and self.others is None:
            return None  # no request read anywhere in the file, nor another file to look in
        callee = enclosing_callee(self._source, self.language, start)
        if callee is None:
            return None
        used = [(index, name) for index, name in enumerate(callee.parameters)
                if name and self._reaches(_name_pattern(name), start, end)]
        if not used:
            return None
        for chains, opener in self._callers(callee, calls_of(self._source, callee)):
            arguments = call_arguments(chains._source, opener)
            for index, parameter in used:
                if index >= len(arguments):
                    continue
                handed = chains._within(*arguments[index])
                if handed is None and depth < _MAX_CALLS:
                    handed = chains._through_a_caller(*arguments[index], depth + 1)
                if handed is not None:
                    line = chains._source.line_of(opener)
                    where = f"line {line}" if chains is self else f"{chains.path}:{line}"
                    return f"{handed}, handed to `{callee.name}` as `{parameter}` at {where}"
        return None

    def _callers(self, callee: Callee, here: Iterable[int]) -> Iterator[tuple[TextChains, int]]:
        """Each call of the callee with the chains of its file: this file's (`here`), then those of
        the change's other files that import it."""
        from reviewgate.reviewers.builtin.lenses.security.request_callers import imported_calls

        if self.language in _SERVER_LANGUAGES or self._flow is not None:
            yield from ((self, opener) for opener in here)
        for other_path, other_text in self.others() if self.others is not None else ():
            if other_path == self.path or other_text is None or callee.name not in other_text:
                continue
            other = self._other_chains.get(other_path)
            if other is None:
                other = self._other_chains[other_path] = TextChains(other_text, language_of(other_path), other_path)
            if other.text and (other.language in _SERVER_LANGUAGES or other._flow is not None):
                found = imported_calls(callee, self.path, self.language, other_path, other._source)
                yield from ((other, opener) for opener in found)

    def _reaches(self, value: re.Pattern[str], start: int, end: int) -> bool:
        """Whether `value` (a parameter) reaches `text[start:end]` within its function."""
        if self.language in _SERVER_LANGUAGES:
            return self._server_origin(start, end, value) is not None
        from reviewgate.reviewers.builtin.languages.text_flow import TextFlow

        flow = TextFlow(self._source, [value], _TEXT_SANITIZERS, self.language is Language.GO)
        return flow.origin(start, end) is not None

    def _server_origin(self, start: int, end: int, value: re.Pattern[str] | None) -> Origin | None:
        from reviewgate.reviewers.builtin.languages.server_input import origin_of
        from reviewgate.reviewers.builtin.lenses.security.request_callers import method_start

        found = origin_of(self._source, self.language, start, end, _QUOTES_REPLACED, value, through_names=True)
        # The scanner looks back a fixed number of lines: a source in the method before is not this one's.
        if found is None or found.line < self._source.line_of(method_start(self._source.masked, start)[0]):
            return None
        return found

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
        return TextFlow(self._source, [sources], _TEXT_SANITIZERS, go)


def _name_pattern(name: str) -> re.Pattern[str]:
    """A name used as itself, not as a member (`item.name`) or part of a longer name."""
    return re.compile(rf"(?<![\w$.]){re.escape(name)}(?![\w$])")
