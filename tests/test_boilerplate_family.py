"""Parallel boilerplate as the DRY lens sizes it: overload stubs, docstrings and unchanged lines do
not count toward a copy's size, and 3 or more short members of one shape form a family."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication import rules
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized
from reviewgate.reviewers.builtin.lenses.duplication.rules import Families, overload_stub_lines, sized_lines

SOURCE = '''class Point:
    @property
    def x(self) -> int:
        """The x coordinate."""
        return self._x

    @property
    def y(self) -> int:
        return self._y

    @property
    def z(self) -> float:
        return self._z
'''


def test_overload_stubs_and_docstrings_and_unchanged_lines_do_not_count() -> None:
    lines = ["@overload", "def get(key: str) -> int: ...", "@typing.overload", "def get(", "    key: bytes,",
             ") -> int: ...", "def get(key):", '    """Doc."""', "    return table[key]"]
    stubs = overload_stub_lines(lines)
    assert stubs == {1, 2, 3, 4, 5, 6}
    normalized = Normalized.of("\n".join(lines), Language.PYTHON).lines
    assert sized_lines(normalized, 1, 9, set(range(1, 10)), stubs) == 2  # the def and its return
    assert sized_lines(normalized, 1, 9, {9}, stubs) == 1  # the def line is an unchanged neighbour


def test_three_short_members_of_one_shape_are_a_family_and_two_are_not() -> None:
    lines = SOURCE.split("\n")
    normalized = Normalized.of(SOURCE, Language.PYTHON).lines
    everything = set(range(1, len(lines) + 1))
    assert Families(lines, normalized, everything, Language.PYTHON).family_of(7, 13) == ["y", "z"]
    two = "\n".join(lines[:9])
    assert Families(two.split("\n"), Normalized.of(two, Language.PYTHON).lines, everything,
                    Language.PYTHON).family_of(2, 9) is None
    # Lines the change does not add cannot make its copy a family member.
    assert Families(lines, normalized, set(range(1, 7)), Language.PYTHON).family_of(7, 13) is None


def scanned_members(lines: list[str], language: Language) -> list[tuple[int, int]]:
    """`rules._members` as first written: each definition's lines scanned from it to the first
    non-blank line indented no deeper."""
    pattern = rules._DEFINITIONS.get(language)
    if pattern is None:
        return []
    found = []
    for index, text in enumerate(lines):
        if not (pattern.search(text) or (language is not Language.PYTHON and rules._ACCESSOR.match(text))):
            continue
        depth, first = rules._indent(text), index
        while first > 0 and rules._DECORATOR.match(lines[first - 1]) and rules._indent(lines[first - 1]) == depth:
            first -= 1
        last = index
        for later in range(index + 1, len(lines)):
            following = lines[later]
            if not following.strip():
                continue
            if rules._indent(following) <= depth:
                if following.lstrip().startswith(("}", ")")):
                    last = later
                break
            last = later
        found.append((first + 1, last + 1))
    return found


def test_members_in_one_pass_are_the_scanned_ones() -> None:
    library = Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(library.glob("*.py"))[:120]
    definitions = 0
    for module in modules:
        lines = module.read_text(encoding="utf-8", errors="replace").split("\n")
        expected = scanned_members(lines, Language.PYTHON)
        assert rules._members(lines, Language.PYTHON) == expected, module.name
        definitions += len(expected)
    assert definitions > 5_000
    # Nesting, closing brackets at and under a definition's depth, decorators, tabs, blank lines of
    # spaces, accessors, and words a definition holds in other places, in every definition syntax.
    pieces = ["def f():", "class C:", "    def g(self):", "        x = 1", "    }", "}", ")", "  )", "", "   ", "@d",
              "    @d", "function h() {", "  get x() {", "  set x(v) {", "  return 1", "\t\tdeep", "func F() {",
              "type T struct {", "type U int", "x = define_type(klass)", "export const k = (a) => {", "  fun m() {", "end"]
    generator = random.Random(7)
    for _ in range(5_000):
        lines = [generator.choice(pieces) for _ in range(generator.randint(0, 30))]
        for language in rules._DEFINITIONS:
            assert rules._members(lines, language) == scanned_members(lines, language), (lines, language)
