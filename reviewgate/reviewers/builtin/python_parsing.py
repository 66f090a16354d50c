"""Python syntax trees parsed once per file for every lens: the whole module, or only the top-level
statements a change adds."""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.freeze.diff import FileChange
from reviewgate.reviewers.builtin.changed_lines import only_inserts
from reviewgate.reviewers.builtin.python_walk import walk_of
from reviewgate.text import UNPARSABLE

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.python_statements import TouchedModule


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a while: `ast.parse` allocates a node per token, and
    the collector walks them again and again as they pile up (2-5x the parse time on a large
    file). Syntax trees form no cycles worth collecting."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@functools.lru_cache(maxsize=64)
def _parse(source: str, path: str) -> ast.Module | None:
    with collector_paused():
        try:
            tree = ast.parse(source, filename=path)
        except UNPARSABLE:
            return None
        # Out of the collector's sight for good: a tree outlives the parse (the lenses, the tests
        # lens's function shapes), and every full collection after would walk all its nodes again
        # (a fifth of a 100,000-line review on 3.11). A frozen object is still freed when its last
        # reference goes; a tree holds no cycles for the collector to find.
        gc.freeze()
        return tree


def parse_python(source: str, path: str) -> ast.Module | None:
    """A file's syntax tree, parsed once for every lens that reads the same text; None when it
    does not parse."""
    return _parse(source, path)


# The touched statements' trees (python_statements.touched_module) by path, with the text they were
# parsed from, until the file is done (forget_parsed_trees).
_touched: dict[str, tuple[str, TouchedModule | None]] = {}


def touched_python(change: FileChange, source: str) -> TouchedModule | None:
    """The tree of only the top-level statements `change` adds, when it adds whole top-level
    statements to an existing file and edits none (python_statements); None otherwise."""
    if not only_inserts(change):
        return None
    held = _touched.get(change.path)
    if held is not None and held[0] == source:
        return held[1]
    from reviewgate.reviewers.builtin.languages.python_statements import touched_module  # a Python change's

    with collector_paused():
        module = touched_module(source, change.path, change.added_lines())
        gc.freeze()  # as `_parse`'s trees: out of the collector's sight for good
    _touched[change.path] = (source, module)
    return module


def parse_python_touched(change: FileChange, source: str) -> ast.Module | None:
    """The syntax tree of `source` (the file at head) that a lens reads when it reports only what
    spans an added line (and asks `parse_python` for the whole module before it looks anywhere
    else): the touched statements alone where the change adds whole top-level statements to an
    existing file (the rest parsed was half of Django +104k appended's parse), else the whole
    module. None when it does not parse."""
    touched = touched_python(change, source)
    return touched.tree if touched is not None else _parse(source, change.path)


def forget_parsed_trees() -> None:
    """Drop the cached syntax trees: called when a file is done, so a change's trees are not all
    held at once, and their grouped walks (the tests lens's function shapes keep the walks they
    count from)."""
    _parse.cache_clear()
    _touched.clear()
    walk_of.cache_clear()
