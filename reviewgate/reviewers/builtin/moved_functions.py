"""Functions the change moved rather than wrote: extracted from existing code, moved under another
name or into another class, a class renamed, a method moved and edited; each paired with where it
came from so it is compared, not read as new."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes

# A new function most of whose lines the merge base already has, in the files the change touches,
# was extracted from existing code (a helper pulled out of a longer function), not written: at
# least this share of its distinct body lines, and at least this many of them. (The diff alone
# cannot tell: git often keeps the extracted lines as context and adds the call around them.)
EXTRACTED_SHARE = 0.6


EXTRACTED_MIN_LINES = 3


EXTRACTED_WHOLE_LINES = 2


# Lines too generic to say where code came from (`return x`, `}`, `else:`, `pass`).
_GENERIC_LINE = re.compile(r"^(?:[\W_]*|(?:return|pass|else|try|finally|break|continue)\b\W*\w{0,12}\W*)$")


# What may lead an expression's first line and not come with it into a helper that returns it: the
# `return`, or the assignment it was the value of (`$routingResults = `, `const found = `).
_VALUE_LEAD = re.compile(r"^(?:return\s+|(?:(?:let|const|var|val)\s+)?[\w$.>\-]+\s*=(?![=>])\s*)")


def _body_lines(text: str) -> set[str]:
    """A function's distinct body lines (signature line left out), stripped, generic ones dropped."""
    generic = _GENERIC_LINE.match
    return {_VALUE_LEAD.sub("", line) for line in map(str.strip, text.split("\n")[1:]) if line and not generic(line)}


def base_lines_of(base_texts: Iterable[str]) -> frozenset[str]:
    """Every line of the changed files' base side, as `is_extracted` compares them."""
    return frozenset(_VALUE_LEAD.sub("", line.strip()) for text in base_texts for line in text.split("\n"))


def is_extracted(text: str, base_lines: frozenset[str]) -> bool:
    """Whether the function of `text` was extracted from code the base side has (MovedCode)."""
    lines = _body_lines(text)
    found = len(lines & base_lines)
    # A short one counts when all its lines were there: a constructor moved into a delegate.
    whole = found == len(lines) >= EXTRACTED_WHOLE_LINES
    return whole or (found >= EXTRACTED_MIN_LINES and found >= EXTRACTED_SHARE * len(lines))


class MovedCode:
    """The functions the change removes (their name is gone from their file at head, or their
    file is deleted): a function "new" at head with the same text or normalised body was moved
    or renamed, not written. So is one whose lines the change removes elsewhere (extracted). One
    of the same name as a removed function was moved and edited: compared with it (`origin`).
    `extracted`: `is_extracted`'s answers by function text, when worked out already (in the
    process that made the head side's shapes); `base_lines`: `base_lines_of(base_texts)`, when split
    already."""

    def __init__(
        self,
        removed: list[FunctionShape],
        base_texts: tuple[str, ...] = (),
        extracted: Mapping[str, bool] | None = None,
        base_lines: frozenset[str] | None = None,
    ) -> None:
        self.removed = removed
        self.base_texts = base_texts
        self.known_extracted = extracted or {}
        self._base_lines = base_lines  # base_lines_of(base_texts): split when first asked unless given
        self.texts = {shape.text.split("\n", 1)[-1] for shape in removed}
        self._bodies: set[str] | None = None
        self._counts: set[tuple[int, int]] | None = None
        self._by_name: dict[str, list[FunctionShape]] | None = None
        self._classes: dict[str, dict[str, FunctionShape]] | None = None

    def extracted(self, shape: FunctionShape) -> bool:
        if not self.base_texts:
            return False
        known = self.known_extracted.get(shape.text)
        if known is not None:
            return known
        if self._base_lines is None:
            self._base_lines = base_lines_of(self.base_texts)
        return is_extracted(shape.text, self._base_lines)

    def holds(self, shape: FunctionShape) -> bool:
        if self.extracted(shape):
            return True
        if not self.removed:
            return False
        if shape.text.split("\n", 1)[-1] in self.texts:  # the same lines under another signature line
            return True
        if self._counts is None:
            self._counts = {(item.branches, item.statements) for item in self.removed}
        if (shape.branches, shape.statements) not in self._counts:
            return False  # cheap to tell apart: no body to normalise
        if self._bodies is None:
            self._bodies = {item.body for item in self.removed}
        return shape.body in self._bodies

    def origin(self, shape: FunctionShape) -> FunctionShape | None:
        """The one function the change removes under the same name, its enclosing names aside
        (`ContentVisitor.visit_map` for `content.ContentVisitor.visit_map`): `shape` is that
        function moved (to another file, into a module) and edited on the way, to be compared
        with it rather than read as new. None when no removed function, or more than one, has
        the name."""
        if self._by_name is None:
            self._by_name = {}
            for item in self.removed:
                self._by_name.setdefault(_unnumbered(item.name).rsplit(".", 1)[-1], []).append(item)
        parts = _unnumbered(shape.name).split(".")
        found = [
            item for item in self._by_name.get(parts[-1], [])
            if _ends_with(parts, (other := _unnumbered(item.name).split("."))) or _ends_with(other, parts)
        ]
        return found[0] if len(found) == 1 else None

    def inlined(self, old: FunctionShape, shape: FunctionShape) -> int:
        """The branches of the functions the change removes that `old` called and `shape`, the same
        function at head, no longer calls but holds (is_extracted's share of their body lines is in
        it): helpers written into their caller (`self._register(None, code, f)` replaced by the
        removed `_register`'s checks), their decisions the caller's now, not new ones."""
        if not self.removed:
            return 0
        old_body, new_body = old.text.split("\n", 1)[-1], shape.text.split("\n", 1)[-1]
        lines: frozenset[str] | None = None
        taken = 0
        for item in self.removed:
            name = _unnumbered(item.name).rsplit(".", 1)[-1]
            if not item.branches or item.name == old.name:
                continue
            # A call: its arguments follow, in brackets or (Ruby) after a space; a log line that
            # names the helper (`debug!("Usage::get_args: ...")`) is none.
            called = re.compile(rf"(?<![\w$]){re.escape(name)}(?:\s*\(|[ \t]+[\w@:\"'\[])")
            if not called.search(old_body) or called.search(new_body):
                continue
            lines = base_lines_of([shape.text]) if lines is None else lines
            if is_extracted(item.text, lines):
                taken += item.branches
        return taken

    def renamed(self, shape: FunctionShape, members: dict[str, set[str]]) -> FunctionShape | None:
        """The removed function of `shape`'s name in the one class the change removes whose every
        method (at least RENAMED_CLASS_METHODS of them) `shape`'s class holds under the same names
        (`members`: the head side's method names by class): that class renamed and moved
        (`CastedAttributeSerializer` made `CastAttributeSerializer` in a file of its own), each method
        to be compared with its namesake. A second definition of a name (`serialize#2`, the other
        version's) pairs with the second. None when no removed class, or more than one, fits."""
        scope, _, member = shape.name.rpartition(".")
        if not scope or not self.removed:
            return None
        if self._classes is None:
            self._classes = {}
            for item in self.removed:
                removed_scope, _, removed_member = item.name.rpartition(".")
                if removed_scope:
                    self._classes.setdefault(removed_scope, {})[removed_member] = item
        held = members.get(scope, set())
        found = [
            methods[member] for removed_scope, methods in self._classes.items()
            if removed_scope != scope and member in methods and len(methods) >= RENAMED_CLASS_METHODS
            and methods.keys() <= held
        ]
        return found[0] if len(found) == 1 else None


    def resembled(self, shape: FunctionShape) -> FunctionShape | None:
        """The removed function of `shape`'s name, in another class, whose normalised body `shape`'s
        most resembles, at least SIMILAR_BODY of their tokens alike: the same method moved and
        edited on the way (up from a subclass into its base class and memoized). None for a short
        function, whose tokens alike say little, and for one of another name (a rename is new)."""
        if shape.statements < SIMILAR_MIN_STATEMENTS:
            return None
        name = _unnumbered(shape.name).rsplit(".", 1)[-1]
        tokens: list[str] | None = None  # normalising a body is costly: only with a removed namesake
        best, found = SIMILAR_BODY, None
        for item in self.removed:
            if _unnumbered(item.name).rsplit(".", 1)[-1] != name or not (
                SIMILAR_MIN_STATEMENTS <= item.statements <= 2 * shape.statements <= 4 * item.statements
            ):
                continue
            tokens = shape.body.split() if tokens is None else tokens
            matcher = difflib.SequenceMatcher(None, item.body.split(), tokens, autojunk=False)
            if matcher.real_quick_ratio() >= best and matcher.quick_ratio() >= best and (ratio := matcher.ratio()) >= best:
                best, found = ratio, item
        return found


# A removed class of at least this many methods, every one of them under its name in one class at
# head, is that class renamed (two, `initialize` and `call`, are names many classes share).
RENAMED_CLASS_METHODS = 3


# A new method whose normalised body has at least this share of its tokens (difflib's ratio) in
# common with the one of its name the change removes from another class, both of at least
# SIMILAR_MIN_STATEMENTS statements, is that method moved and edited.
SIMILAR_BODY = 0.7


SIMILAR_MIN_STATEMENTS = 3


def _unnumbered(name: str) -> str:
    return name.partition("#")[0]


def _ends_with(parts: list[str], tail: list[str]) -> bool:
    return len(parts) >= len(tail) and parts[len(parts) - len(tail):] == tail


def head_members(head: Shapes) -> dict[str, set[str]]:
    """The head side's method names (`serialize#2` numbered) by the class that holds them."""
    members: dict[str, set[str]] = {}
    for name in head:
        scope, _, member = name.rpartition(".")
        members.setdefault(scope, set()).add(member)
    return members
