"""A discarded error whose value is used, in JavaScript and TypeScript: the Node-style callback
that never reads its error and uses its value, `fs.readFile(p, (err, data) => JSON.parse(data))`,
`db.query(sql, function (err, rows) { res.send(rows) })`. On failure the value is undefined (or
partial) and the code carries on with it: `JSON.parse(undefined)` throws inside the callback where
nothing catches it, an undefined is sent as the answer. The Go form is in discarded_go_error.py.

A function passed to a call, of 2 or 3 parameters (an error and one or two results: `(err, stdout,
stderr)`), the first a plain name `err`, `error`, `er` or `e`, never read in the body (nor
`arguments`), and a later one read. Not an array method's or event handler's callback
(`items.map((e, i) => i)`, `$(el).on('click', (e, data) => …)`: `e` is the element or the
event), not a request handler (`(err, req, res, next)`: express's error middleware, whose later
parameters are no results of a failed call), not in test files. An error named `_` or `_err` is not reported:
the underscore is the convention (`no-unused-vars`' `argsIgnorePattern`) that says it is ignored
on purpose, and a reader sees it; an unread `err` is the oversight. Imported only for a JS/TS file:
it loads their grammars.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.bug_lens import bug_finding, code_line, matched
from reviewgate.reviewers.builtin.languages.syntax_tree import grammar_of, parse

if TYPE_CHECKING:
    import tree_sitter

_ERROR_NAMES = frozenset({"err", "error", "er", "e"})
_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function"})
# Methods whose callback takes an element or an event first, not an error.
_ELEMENT_METHODS = frozenset(
    {"map", "forEach", "filter", "reduce", "reduceRight", "some", "every", "find", "findIndex", "findLast",
     "findLastIndex", "flatMap", "sort", "toSorted", "each", "from", "replace", "replaceAll",
     "addEventListener", "on", "once", "one", "addListener", "prependListener", "bind", "subscribe"}
)  # fmt: skip
# A later parameter by one of these names makes the function a request handler.
_REQUEST_NAMES = frozenset({"req", "res", "request", "response", "ctx", "next"})
_READS = frozenset({"identifier", "shorthand_property_identifier"})


def callback_findings(rule: str, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    """The findings of `rule` (the discarded error's, declared with its Go form) in a JS/TS file."""
    grammar = grammar_of(path)
    if grammar not in {"javascript", "typescript", "tsx"}:
        return
    tree = parse(grammar, text, path)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "call_expression" or _element_method(node):
            continue
        arguments = node.child_by_field_name("arguments")
        for argument in arguments.named_children if arguments is not None else []:
            if argument.type in _FUNCTIONS:
                finding = _callback(rule, node, argument, text, path, added)
                if finding is not None:
                    yield finding


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _element_method(call: tree_sitter.Node) -> bool:
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "member_expression":
        return False
    name = callee.child_by_field_name("property")
    return name is not None and _text(name) in _ELEMENT_METHODS


def _names(parameter: tree_sitter.Node) -> list[str]:
    """The names a parameter binds: `data`, `data: Buffer`, `{ rows }`, `rows = []`."""
    if parameter.type in {"required_parameter", "optional_parameter"}:
        parameter = parameter.child_by_field_name("pattern") or parameter
    if parameter.type == "assignment_pattern":
        parameter = parameter.child_by_field_name("left") or parameter
    if parameter.type == "identifier":
        return [_text(parameter)]
    found: list[str] = []
    stack = [parameter]
    while stack:
        node = stack.pop()
        if node.type in {"identifier", "shorthand_property_identifier_pattern"}:
            found.append(_text(node))
        elif node.type not in {"type_annotation", "assignment_pattern"} or node is parameter:
            stack.extend(node.named_children)
    return found


def _reads(body: tree_sitter.Node) -> Iterator[tuple[str, tree_sitter.Node]]:
    """Every name the body reads, in order (a property name `x.err` is not a read of `err`)."""
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type in _READS:
            yield _text(node), node
        stack.extend(reversed(node.named_children))


def _callback(
    rule: str, call: tree_sitter.Node, function: tree_sitter.Node, text: str, path: str, added: dict[int, str]
) -> Finding | None:
    parameters = function.child_by_field_name("parameters")
    body = function.child_by_field_name("body")
    if parameters is None or body is None:
        return None
    listed = [item for item in parameters.named_children if item.type != "comment"]
    if not 2 <= len(listed) <= 3:
        return None
    first = _names(listed[0])
    if len(first) != 1 or first[0] not in _ERROR_NAMES or _text(listed[0]).lstrip().startswith("{"):
        return None
    error = first[0]
    values = [name for item in listed[1:] for name in _names(item)]
    if not values or _REQUEST_NAMES & set(values):
        return None
    line = parameters.start_point[0] + 1
    if line not in added:
        return None
    used: tuple[str, tree_sitter.Node] | None = None
    for name, node in _reads(body):
        if name in {error, "arguments"}:
            return None  # the error is read (checked, passed on, thrown), or may be
        if used is None and name in values:
            used = (name, node)
    if used is None:
        return None
    name, node = used
    callee = " ".join(_text(call.child_by_field_name("function") or call).split())
    callee = callee if len(callee) <= 60 else callee[:59] + "…"
    code = code_line(text, line)
    return bug_finding(
        rule=rule,
        category="swallowed-failure",
        title=f"Error of `{callee}` never read, and `{name}` used",
        body=(
            f"{matched(code)}: the callback of `{callee}` never reads its error `{error}`, and uses `{name}` at "
            f"line {node.start_point[0] + 1}. When the call fails `{name}` is undefined (or partial) and the "
            "code carries on with it: a `JSON.parse(undefined)` throws where nothing catches it, an undefined "
            f"is sent as the answer. Check the error first (`if ({error}) return callback({error})`), or name "
            f"it `_{error}` if it is ignored on purpose."
        ),
        path=path,
        line=line,
        code=code,
    )
