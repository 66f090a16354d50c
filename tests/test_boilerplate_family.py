"""Parallel boilerplate as the DRY lens sizes it: overload stubs, docstrings and unchanged lines do
not count toward a copy's size, and 3 or more short members of one shape form a family."""

from __future__ import annotations

from reviewgate.reviewers.builtin.common import Language
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
