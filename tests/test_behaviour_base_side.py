"""The base side's functions told from the head side (python_insertions.inserts_only, shapes.base_side):
exactly what parsing the base side gives where a change only inserts whole statements, and a
parse of the base side wherever it might not be."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmarks.base_side_check import differences
from reviewgate.freeze.diff import FileChange
from reviewgate.freeze.freeze import diff_between
from reviewgate.reviewers.builtin import behaviour, side_shapes
from reviewgate.reviewers.builtin.changed_lines import only_inserts
from reviewgate.reviewers.builtin.languages.python_insertions import inserts_only
from reviewgate.reviewers.builtin.languages.python_shapes import python_shapes
from reviewgate.reviewers.builtin.languages.shapes import base_side
from testing.lenses import review_change
from testing.repo import make_repo

_BASE = (
    '"""A module."""\n'
    "import functools\n"
    "from typing import (\n"
    "    TYPE_CHECKING,\n"
    ")\n"
    "\n"
    "if TYPE_CHECKING:\n"
    "    def hidden(x): ...\n"
    "\n"
    "\n"
    "def first(a, b=2):\n"
    "    if a and b:\n"
    "        return a\n"
    "    return b\n"
    "\n"
    "\n"
    "class Store:\n"
    '    """Holds things."""\n'
    "\n"
    "    KINDS = [\n"
    '        "a",\n'
    "    ]\n"
    "\n"
    "    @property\n"
    "    def size(self):\n"
    "        return self._size\n"
    "\n"
    "    @size.setter\n"
    "    def size(self, value):\n"
    "        self._size = value\n"
    "\n"
    "    def load(self, path, mode='r'):\n"
    "        def inner(line):\n"
    "            return line.strip() if line else ''\n"
    "        return [inner(line) for line in open(path, mode) if line]\n"
    "\n"
    "\n"
    "@functools.cache\n"
    "def last(x):\n"
    "    for item in x:\n"
    "        yield item\n"
)


def _inserted(before: str, after: str, lines: str) -> str:
    """`_BASE` with `lines` inserted after the line `before` (its first occurrence after `after`)."""
    start = _BASE.index(after)
    at = _BASE.index(before, start) + len(before)
    return _BASE[:at] + lines + _BASE[at:]


def _change(tmp_path: Path, head: str) -> FileChange:
    repo = make_repo(tmp_path, {"app/store.py": _BASE}, {"app/store.py": head})
    [change] = diff_between(repo.path, repo.base_sha, repo.head_sha)
    return change


def _derivable(change: FileChange, head: str) -> bool:
    return only_inserts(change) and inserts_only(ast.parse(head), head, change.added_lines())


_INSERTIONS = {
    "appended at the end": _BASE + "\n\ndef appended(x):\n    if x:\n        return 1\n    return 2\n",
    "a function in the middle": _inserted(
        "    return b\n", "def first", "\n\n# A new helper.\ndef middle(a):\n    return a or first(a)\n"
    ),
    "a method in the middle, a duplicate name before the old one": _inserted(
        "        return self._size\n", "def size", "\n    @size.setter\n    def size(self, value):\n        pass\n"
    ),
    "a method at the end of a class and a decorated function": _inserted(
        "if line]\n", "def load",
        "\n    def save(self, path):\n        with open(path, 'w') as out:\n            out.write('x')\n"
        "\n\n@functools.cache\ndef between(y):\n    return y\n",
    ),
    "a name added to a multi-line import": _BASE.replace("    TYPE_CHECKING,\n", "    TYPE_CHECKING,\n    Any,\n"),
    "an item added to a class attribute's list": _BASE.replace('        "a",\n', '        "a",\n        "b",\n'),
    # `ast` ignores a coding declaration in a `str`: where it stands is no matter.
    "lines at the top": "# -*- coding: latin-1 -*-\nimport os\n" + _BASE,
    "an attribute and a nested class in a class": _inserted(
        '    """Holds things."""\n', "class Store",
        "    limit = 3\n\n    class Meta:\n        def meta(self):\n            return 1\n",
    ),
}


@pytest.mark.parametrize("name", list(_INSERTIONS))
def test_inserted_statements_tell_the_base_side_exactly(name: str, tmp_path: Path) -> None:
    head = _INSERTIONS[name]
    change = _change(tmp_path, head)
    assert _derivable(change, head)
    derived = base_side(python_shapes(ast.parse(head), head), change.added_line_numbers())
    assert differences(derived, python_shapes(ast.parse(_BASE), _BASE)) == []


# Insertions that keep every base line yet change what the base side's functions are, or that
# cannot be told apart from such without parsing: the base side is parsed.
_PARSED = {
    # `load` and `last` move from `Store` into the new class: `Store.load` at base, `Other.load` at head.
    "a class header inserted above existing methods": _inserted(
        "        return self._size\n", "def size", "class Other:\n    x = 1\n"
    ),
    "a line inside an existing function": _inserted("    if a and b:\n", "def first", "        print(a)\n"),
    "a string opened and closed around a function": _BASE.replace("def first", 'TEXT = """\ndef first').replace(
        "    return b\n", '    return b\n"""\n'
    ),
    "a decorator added to a class": _BASE.replace("class Store:\n", "@final\nclass Store:\n"),
    # Statements that hold a function are not parsed apart (its lines and counts are its file's).
    "a line in an if block holding a function": _BASE.replace("if TYPE_CHECKING:\n", "if TYPE_CHECKING:\n    import os\n"),
    "a comment between a class header and its body": _BASE.replace("class Store:\n", "class Store:\n    # x\n"),
    "a future import": _BASE.replace("import functools\n", "import functools\nfrom __future__ import annotations\n"),
    "a form feed": _BASE.replace("import functools\n", "import functools\n\x0c\n"),
}


@pytest.mark.parametrize("name", list(_PARSED))
def test_what_is_not_inserted_whole_statements_parses_the_base_side(name: str, tmp_path: Path) -> None:
    head = _PARSED[name]
    change = _change(tmp_path, head)
    assert only_inserts(change), "the cases only add lines"
    assert not _derivable(change, head)


_UNPARSABLE_BASES = {
    # Without the added blank line, the line continued by a backslash runs into the next statement.
    "a blank line ending a continued line": (
        "import os\n\nLIMIT = 1 \\\ndef f(x):\n    return x\n",
        "import os\n\nLIMIT = 1 \\\n\ndef f(x):\n    return x\n",
        [4],
    ),
    # Without its added line, a list is left open.
    "the line closing a bracket": ("import os\n\n\nVALUES = [\n    1,\n", "import os\n\n\nVALUES = [\n    1,\n]\n", [6]),
    # A class whose whole body the change adds had none at base.
    "the whole body of a class": (
        "import os\n\n\nclass A:\n", "import os\n\n\nclass A:\n    def f(self):\n        return 1\n", [5, 6]
    ),
}


@pytest.mark.parametrize("name", list(_UNPARSABLE_BASES))
def test_a_base_side_that_does_not_parse_is_not_told_from_the_head(name: str, tmp_path: Path) -> None:
    """The base side parsed finds no functions (no evidence there), so none may be told."""
    base, head, added = _UNPARSABLE_BASES[name]
    with pytest.raises(SyntaxError):
        ast.parse(base)
    repo = make_repo(tmp_path, {"app/limit.py": base}, {"app/limit.py": head})
    [change] = diff_between(repo.path, repo.base_sha, repo.head_sha)
    assert sorted(change.added_lines()) == added
    assert only_inserts(change) and not _derivable(change, head)


def test_a_class_inserted_above_existing_methods_would_rename_them() -> None:
    """Why an added class header above kept methods parses the base side: told from the head,
    the methods below it would have the new class's name."""
    head = _PARSED["a class header inserted above existing methods"]
    added = {number for number, line in enumerate(head.split("\n"), 1) if line in ("class Other:", "    x = 1")}
    derived = base_side(python_shapes(ast.parse(head), head), added)
    assert differences(derived, python_shapes(ast.parse(_BASE), _BASE)) != []


def test_the_base_side_is_not_parsed_where_the_head_side_tells_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The findings are the same with the base side told and parsed, and told, it is not parsed."""
    base = {"app/store.py": _BASE, "app/other.py": "def edited(x):\n    return x\n"}
    branch = {
        "app/store.py": _INSERTIONS["a function in the middle"],
        "app/other.py": "def edited(x):\n    if x:\n        return 0\n    return x\n",
    }
    parsed: list[str] = []
    real_base_shapes = behaviour._base_shapes

    def recording(text: str, path: str) -> object:
        parsed.append(path)
        return real_base_shapes(text, path)

    monkeypatch.setattr(behaviour, "_base_shapes", recording)
    told = review_change(tmp_path / "told", base, branch)
    assert parsed == ["app/other.py"]  # the edited function's file only
    monkeypatch.setattr(side_shapes, "inserts_only", lambda *_arguments: False)
    assert review_change(tmp_path / "parsed", base, branch) == told
    assert parsed == ["app/other.py", "app/other.py", "app/store.py"]
    assert any(finding.rule == "tests/missing-tests" and finding.path == "app/store.py" for finding in told)


def test_an_appended_change_is_reviewed_without_parsing_its_hunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a change only inserts is told from the diff's counts: an object per diff line of
    every appended file (what parsing the hunks makes) was 47-56 MB of the Django +304k peak."""
    from reviewgate.freeze import diff

    parsed: list[bytes] = []
    real_parse_hunks = diff.parse_hunks

    def recording(raw: bytes) -> tuple[diff.Hunk, ...]:
        parsed.append(raw)
        return real_parse_hunks(raw)

    monkeypatch.setattr(diff, "parse_hunks", recording)
    told = review_change(tmp_path, {"app/store.py": _BASE}, {"app/store.py": _INSERTIONS["appended at the end"]})
    assert any(finding.rule == "tests/missing-tests" for finding in told)  # the tests lens did compare
    assert parsed == []
