"""The open-redirect reader of Python: the redirects of Flask, Django, Starlette/FastAPI, aiohttp
and Pyramid, and a `Location` header, on added lines; the request value each starts with,
followed within its function (languages/python_flow.py); the checks that clear it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.lenses.open_redirect.guards import guard_patterns, is_referrer
from reviewgate.reviewers.builtin.python_walk import nodes_of

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Origin

_PYTHON_SINKS = frozenset({
    "redirect", "RedirectResponse", "HttpResponseRedirect", "HttpResponsePermanentRedirect",
    # aiohttp's and Pyramid's redirects are exceptions raised (or returned) with the target.
    "HTTPFound", "HTTPSeeOther", "HTTPTemporaryRedirect", "HTTPPermanentRedirect", "HTTPMovedPermanently",
})
_PYTHON_TARGET_KEYWORDS = ("url", "location", "to", "redirect_to")
# Calls whose result is a URL this site made, or text quoted into one: Flask's, Django's and
# Starlette's, and Pyramid's request methods (`request.resource_url(page)`, `request.route_url(…)`).
_SANITIZERS = frozenset({
    "url_for", "reverse", "reverse_lazy", "quote", "quote_plus", "urlencode", "url_path_for",
    "resource_url", "resource_path", "route_url", "route_path", "static_url", "static_path",
    "current_route_url", "current_route_path",
})
_HOST_ATTRIBUTES = frozenset({"netloc", "hostname", "host", "scheme"})


def unchecked_redirects(
    tree: ast.Module, path: str, added: dict[int, str]
) -> Iterator[tuple[int, str, bool, str]]:
    """(line, the request value it goes to, whether the only check is `startswith('/')`, its source)
    of each redirect on an added line whose target starts with request input no guard checks."""
    from reviewgate.reviewers.builtin.languages.python_flow import Flow, Flows, describe, request_input

    sinks = [] if is_test_file(path) else _added_sinks(tree, added)  # a test's handler is never deployed
    if not sinks:
        return
    flows = Flows(tree, lambda scope: Flow(scope, request_input, _SANITIZERS, leading=True, route_parameters=True))
    for node, target in sinks:
        flow = flows.of(node)
        origin = flow.origin(target)
        if origin is None or is_referrer(origin.source):
            continue
        guard = _python_guard(flow, origin)
        if guard != "strong":
            yield node.lineno, describe(origin), guard == "weak", origin.source


def has_added_redirect(tree: ast.Module, added: dict[int, str]) -> bool:
    """Whether a redirect is on an added line: what the rule reads the rest of the module for."""
    return bool(_added_sinks(tree, added))


def _added_sinks(tree: ast.Module, added: dict[int, str]) -> list[tuple[ast.expr | ast.stmt, ast.expr]]:
    """The redirects on added lines: what the rule reads the rest of the module for."""
    return [(node, target) for node, target in _python_sinks(tree) if node.lineno in added]


def _python_sinks(tree: ast.Module) -> Iterator[tuple[ast.expr | ast.stmt, ast.expr]]:
    from reviewgate.reviewers.builtin.languages.python_flow import leaf_name

    for node in nodes_of(tree, ast.Call):
        if leaf_name(node) in _PYTHON_SINKS:
            target = node.args[0] if node.args else next(
                (item.value for item in node.keywords if item.arg in _PYTHON_TARGET_KEYWORDS), None
            )
            if target is not None:
                yield node, target
        for keyword in node.keywords:
            if keyword.arg == "headers" and isinstance(keyword.value, ast.Dict):
                yield from ((node, value) for key, value in zip(keyword.value.keys, keyword.value.values, strict=True)
                            if _is_location(key))
    for assignment in nodes_of(tree, ast.Assign):
        for target_node in assignment.targets:
            if isinstance(target_node, ast.Subscript) and _is_location(target_node.slice):
                yield assignment, assignment.value


def _is_location(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() == "location"


def _python_guard(flow: Flow, origin: Origin) -> str:
    """"strong" when the scope checks the target, "weak" when only `startswith('/')` does, else ""."""
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    guard_name = guard_patterns()["guard_name"]
    weak = double_slash = False
    for node in flow.nodes:
        if isinstance(node, ast.Call):
            name = call_name(node)
            if guard_name.match(name.rsplit(".", 1)[-1]):
                return "strong"
            if name.endswith("startswith") and isinstance(node.func, ast.Attribute):
                prefixes = [item for item in ast.walk(node) if isinstance(item, ast.Constant)]
                if any(item.value == "/" for item in prefixes):
                    weak = True
                elif any(isinstance(item.value, str) and item.value.startswith(("//", "\\")) for item in prefixes):
                    double_slash = True
                elif not prefixes or any(isinstance(item.value, str) and "://" in item.value[:-3] for item in prefixes):
                    return "strong"  # a prefix of this site's own origin: `startswith(request.host_url)`
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            if flow.origin(node.left) is not None:
                return "strong"
        elif isinstance(node, ast.Attribute) and node.attr in _HOST_ATTRIBUTES:
            if node.attr == "netloc" or flow.origin(node.value) is not None:
                return "strong"  # the parsed URL's host is looked at
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in {"//", "\\"}:
            double_slash = True
    if weak and double_slash:
        return "strong"
    return "weak" if weak else ""

