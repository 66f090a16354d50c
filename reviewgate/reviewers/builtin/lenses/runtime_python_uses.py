"""Where a Python module uses an API of the runtime table (runtime_apis.py), for
runtime_minimum.py: each use with what it is and the release that brought it, outside a version
guard (`if sys.version_info >= ...`, a decorator that skips on older versions) or an import
fallback (a `try` whose handler catches `ImportError`, `AttributeError` ...)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.lenses.runtime_apis import (
    PYTHON_BUILTINS,
    PYTHON_KEYWORDS,
    PYTHON_METHODS,
    PYTHON_NAMES,
)
from reviewgate.reviewers.builtin.python_walk import nodes_of

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.lenses.target_manifest import Version


def builtin_names(tree: ast.Module, text: str) -> list[ast.Name]:
    """The names of PYTHON_BUILTINS in `tree` (parsed from `text`). An ASCII text that spells
    none of them has none: the walk over every name (most of the lens's own time on a large
    change) is skipped. A non-ASCII text is walked: the parser folds an identifier's compatibility
    forms (NFKC), so `ａnext` there is `anext`."""
    if text.isascii() and not any(name in text for name in PYTHON_BUILTINS):
        return []
    return [node for node in nodes_of(tree, ast.Name) if node.id in PYTHON_BUILTINS]


def python_use_or_try_star(node: ast.AST) -> Iterator[tuple[ast.AST, str, Version]]:
    """What `python_uses` says of `node` itself, guards aside."""
    if type(node).__name__ == "TryStar":
        yield node, "`except*`", (3, 11, 0)
    yield from _python_use(node)


def _guards_version(test: ast.expr) -> bool:
    return any(
        (isinstance(node, ast.Attribute) and node.attr in {"version_info", "hexversion"})
        or (isinstance(node, ast.Name) and (node.id in {"TYPE_CHECKING", "version_info"} or node.id.startswith("PY3")))
        for node in ast.walk(test)
    )


# `try` and, from Python 3.11, `try ... except*` (its own node type).
_TRY_NODES: tuple[type[ast.Try], ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))
# The statements that are a use themselves, those this Python has.
MATCH_AND_TRY_STAR: tuple[type[ast.AST], ...] = tuple(
    getattr(ast, name) for name in ("Match", "TryStar") if hasattr(ast, name)
)


def python_uses(node: ast.AST) -> Iterator[tuple[ast.AST, str, Version]]:
    """(node, what, release) of each use of a table entry, outside a version guard or an import fallback."""
    if isinstance(node, ast.If) and _guards_version(node.test):
        return  # both branches: the other one is the fallback
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
        _guards_version(decorator) for decorator in node.decorator_list
    ):
        return  # `@pytest.mark.skipif(sys.version_info < (3, 11), ...)`: not run where the API is missing
    if isinstance(node, _TRY_NODES):
        handled = {
            name.id if isinstance(name, ast.Name) else getattr(name, "attr", "")
            for handler in node.handlers
            if handler.type is not None
            for name in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])
        }
        if handled & {"ImportError", "ModuleNotFoundError", "AttributeError", "NameError", "TypeError"}:
            for item in (*node.handlers, *node.orelse, *node.finalbody):
                yield from python_uses(item)
            return
    yield from python_use_or_try_star(node)
    for child in ast.iter_child_nodes(node):
        yield from python_uses(child)


def _python_use(node: ast.AST) -> Iterator[tuple[ast.AST, str, Version]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in PYTHON_NAMES:
                yield node, f"the `{alias.name}` module", PYTHON_NAMES[alias.name]
    elif isinstance(node, ast.ImportFrom) and node.module:
        for alias in node.names:
            name = f"{node.module}.{alias.name}"
            if name in PYTHON_NAMES:
                yield node, f"`{name}`", PYTHON_NAMES[name]
            elif node.module in PYTHON_NAMES and node.level == 0:
                yield node, f"the `{node.module}` module", PYTHON_NAMES[node.module]
    elif isinstance(node, ast.Attribute):
        from reviewgate.reviewers.builtin.languages.python_flow import dotted

        name = dotted(node)
        if "." in name and name in PYTHON_NAMES:
            yield node, f"`{name}`", PYTHON_NAMES[name]
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in PYTHON_BUILTINS:
        yield node, f"`{node.id}`", PYTHON_NAMES[node.id]
    elif isinstance(node, ast.Call):
        from reviewgate.reviewers.builtin.languages.python_flow import leaf_name

        leaf = leaf_name(node)
        if isinstance(node.func, ast.Attribute) and leaf in PYTHON_METHODS:
            what, version = PYTHON_METHODS[leaf]
            yield node, f"`{what}`", version
        for keyword in node.keywords:
            if (leaf, keyword.arg or "") in PYTHON_KEYWORDS:
                yield node, f"`{leaf}({keyword.arg}=...)`", PYTHON_KEYWORDS[(leaf, keyword.arg or "")]
    elif type(node).__name__ == "Match":
        yield node, "the `match` statement", (3, 10, 0)
