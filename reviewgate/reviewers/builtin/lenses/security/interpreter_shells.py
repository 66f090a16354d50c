"""Where a Python module is a shell: the top-level functions and classes that use Python's own
interactive interpreter (`code.interact`, a subclass of `code.InteractiveInterpreter`, `from code
import interact`). Running its user's code (a startup file, `-c`, a console line) is their purpose,
so an `eval`/`exec` in them is no finding; one elsewhere in the same module still is."""

from __future__ import annotations

import ast

from reviewgate.reviewers.builtin.python_walk import nodes_of

# Python's own interactive interpreter.
INTERPRETER_MODULES = frozenset({"code", "codeop"})


def shell_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """The first and last lines of each top-level definition that refers to the interpreter: a name
    the module bound by importing it (`code`, or `interact` from `from code import interact`)."""
    bound: set[str] = set()
    for node in nodes_of(tree, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in INTERPRETER_MODULES:
                bound.add((alias.asname or alias.name).split(".")[0])
    for imported in nodes_of(tree, ast.ImportFrom):
        if imported.level == 0 and (imported.module or "").split(".")[0] in INTERPRETER_MODULES:
            bound.update(alias.asname or alias.name for alias in imported.names)
    if not bound:
        return []
    return [
        (definition.lineno, definition.end_lineno or definition.lineno)
        for definition in tree.body
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and any(isinstance(node, ast.Name) and node.id in bound for node in ast.walk(definition))
    ]
