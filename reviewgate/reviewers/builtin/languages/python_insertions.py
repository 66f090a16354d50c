"""Whether a Python change that only inserts top-level statements leaves every function the merge
base has as it was: then the base side's function shapes are the head's less the inserted ones."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from reviewgate.reviewers.builtin.changed_lines import AddedSpans
from reviewgate.reviewers.builtin.languages.python_shapes import FUNCTION_NODES, first_line
from reviewgate.text import UNPARSABLE

_DEFINITIONS = (*FUNCTION_NODES, ast.ClassDef)


def _defines(node: ast.AST) -> bool:
    return any(isinstance(inner, _DEFINITIONS) for inner in ast.walk(node))


class _Inserted:
    """The added lines of one file, by number, to tell the statements they cover."""

    def __init__(self, added: Mapping[int, str], lines: list[str]) -> None:
        self.added = added
        self.count = AddedSpans(added).count
        self.lines = lines
        self.covered: list[range] = []  # the spans of the statements the change adds whole or edits

    def block_keeps_base(self, body: list[ast.stmt], *, must_keep: bool) -> bool:
        """Whether each statement of the block is as at the base side (no added line), added whole,
        edited but defining nothing (`_edited_apart`), or a class whose header is as at base and
        whose body is such a block again."""
        kept = False
        for statement in body:
            first, last = first_line(statement), statement.end_lineno or statement.lineno
            added = self.count(first, last)
            if added == 0:
                kept = True
            elif added == last - first + 1:
                self.covered.append(range(first, last + 1))
            elif (
                isinstance(statement, ast.ClassDef)
                and self.count(first, first_line(statement.body[0]) - 1) == 0  # decorators, bases, header
                and self.block_keeps_base(statement.body, must_keep=True)
            ):
                kept = True
            elif self._edited_apart(statement, first, last):
                self.covered.append(range(first, last + 1))
                kept = True
            else:
                return False  # an existing function, or a statement holding one, that the change edits
        return kept or not must_keep  # a class left empty at base would not parse there

    def _edited_apart(self, statement: ast.stmt, first: int, last: int) -> bool:
        """Whether a statement that defines no function or class at head (a name added to a
        multi-line import, an item to a list) is, without its added lines, whole statements that
        define none either, starting on its first line at its column: then no function is in it or
        changed by it at either side (its nodes are no function's), and the lines after it read as
        they do at head."""
        if first in self.added or _defines(statement):
            return False
        kept = [self.lines[number - 1] for number in range(first, last + 1) if number not in self.added]
        if kept[-1].rstrip("\r").endswith("\\"):
            return False  # continued into whatever follows
        text = "\n".join(kept) + "\n"
        nested = statement.col_offset > 0
        try:
            alone = ast.parse("if 1:\n" + text if nested else text)
        except UNPARSABLE:
            return False  # not whole statements without the added lines
        statements = alone.body[0].body if nested and isinstance(alone.body[0], ast.If) else alone.body
        return (
            (not nested or len(alone.body) == 1)
            and all(item.col_offset == statement.col_offset for item in statements)
            and not _defines(alone)
        )


def inserts_only(tree: ast.Module, source: str, added: Mapping[int, str]) -> bool:
    """Whether the base side's functions are exactly the head's not made of added lines, at their
    lines without the added ones above them (shapes.base_side), for a change that adds lines and
    removes none: each added line is part of a statement the change adds whole (a new function, a
    new method in an existing class), of a statement that defines no function at either side (an
    import), or blank or a comment between statements. Removing whole statements from their block
    leaves every other statement the same tokens in the same scope.
    Anything else (an edited function, an added line inside a bracket, a string or a class's
    header, a line continued into or out of the added ones, a `__future__` import, lines numbered
    apart) answers False: the base side is parsed."""
    # A coding declaration is no matter: the text is decoded already, and `ast` ignores one in a
    # `str`; a byte-order mark anywhere but at the start (stripped when read) fails the head's parse.
    if not added or "__future__" in "".join(added.values()):
        return False
    lines = source.split("\n")
    if len(source.splitlines()) != len(lines) - (not lines[-1]):
        return False  # a form feed or a lone carriage return: `splitlines` (the texts) and git number apart
    inserted = _Inserted(added, lines)
    if not inserted.block_keeps_base(tree.body, must_keep=False):
        return False
    between = added.keys() - {number for span in inserted.covered for number in span}
    if any(added[number].strip() and not added[number].lstrip().startswith("#") for number in between):
        return False  # not a blank or a comment line between statements
    # The line before each run of added lines, and each run's last one: continued by a backslash,
    # it would join its neighbour into one logical line.
    starts = added.keys() - set(map((1).__add__, added))
    ends = added.keys() - set(map((-1).__add__, added))
    return not any(lines[number - 2].rstrip("\r").endswith("\\") for number in starts) and not any(
        lines[number - 1].rstrip("\r").endswith("\\") for number in ends
    )
