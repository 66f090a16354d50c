"""Top-level statements told apart without parsing (python_statements), and the lenses reading only
the statements a change adds whole: the same findings as reading the whole module."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import pytest

from reviewgate.findings import Finding
from reviewgate.reviewers.builtin import python_parsing
from reviewgate.reviewers.builtin.languages.python_shapes import first_line
from reviewgate.reviewers.builtin.languages.python_statements import top_level_statements, touched_module
from testing.lenses import review_change

# Real code: the running interpreter's own standard library, every module in a fixed order.
_STANDARD_LIBRARY = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


def _parsed(path: Path) -> tuple[str, ast.Module] | None:
    try:
        text = path.read_text(encoding="utf-8")
        return text, ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _expected_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """Each statement's first line and last, statements sharing a line (`a = 1; b = 2`) as one."""
    spans: list[tuple[int, int]] = []
    for statement in tree.body:
        start, end = first_line(statement), statement.end_lineno or statement.lineno
        if spans and spans[-1][1] >= start:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def test_the_standard_library_is_split_where_the_parser_puts_its_statements() -> None:
    checked = 0
    for path in _STANDARD_LIBRARY:
        parsed = _parsed(path)
        if parsed is None:
            continue
        text, tree = parsed
        statements = top_level_statements(text)
        if "barry_as_FLUFL" in text:  # __future__.py itself: the name alone refuses
            continue
        assert statements is not None, path
        spans = statements.spans
        if not tree.body or spans[0][0] < first_line(tree.body[0]):
            spans = spans[1:]  # the comments and blank lines before the first statement
        assert spans == _expected_spans(tree), path
        checked += 1
    assert checked > 150


def test_the_touched_statements_parse_to_the_whole_modules_nodes() -> None:
    """Every third statement of each module taken as added: its tree is the whole module's
    statements, node for node with their positions; a line added inside one gives no tree."""
    for path in _STANDARD_LIBRARY[::4]:
        parsed = _parsed(path)
        if parsed is None or len(parsed[1].body) < 3:
            continue
        text, tree = parsed
        if len(_expected_spans(tree)) != len(tree.body) or "barry_as_FLUFL" in text:
            continue  # statements sharing a line (checked below), or the name that refuses
        chosen = tree.body[1::3]
        added = {line for statement in chosen for line in range(first_line(statement), (statement.end_lineno or 0) + 1)}
        touched = touched_module(text, str(path), added)
        assert touched is not None, path
        assert ast.dump(touched.tree, include_attributes=True) == ast.dump(ast.Module(chosen, []), include_attributes=True), path
        several = next((statement for statement in chosen if statement.lineno != statement.end_lineno), None)
        if several is not None:
            assert touched_module(text, str(path), {several.lineno + 1}) is None, path


def test_statements_sharing_a_line_are_one_span() -> None:
    touched = touched_module("x = 1\na = 1; b = 2\ny = 3\n", "a.py", {2})
    assert touched is not None
    assert [ast.unparse(statement) for statement in touched.tree.body] == ["a = 1", "b = 2"]


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("@a\n@b(\n1)\ndef f():\n    pass\nx = 1\n", [(1, 5), (6, 6)]),
        ("if a:\n    b\nelif c:\n    d\nelse:\n    e\ny = 2\n", [(1, 6), (7, 7)]),
        ("try:\n    a\nexcept E:\n    b\nfinally:\n    c\n", [(1, 6)]),
        ("x = 1 + \\\n2\ny = 3\n", [(1, 2), (3, 3)]),
        ("call(\n1,\n)\nz = 1\n", [(1, 3), (4, 4)]),
        ('TEXT = """\ndef inside():\n    pass\n""".strip()\nw = 1\n', [(1, 4), (5, 5)]),
        ('S = """a \\""" b\nnot_a_statement\n"""\nv = 1\n', [(1, 3), (4, 4)]),
        ("def f():\n    return 1\n# a comment\n\n    # indented\ng = 2\n", [(1, 2), (6, 6)]),
        ("x = 1\r\ny = 2\r\n", [(1, 1), (2, 2)]),
        ("else_value = 1\nelse_other = 2\n", [(1, 1), (2, 2)]),
    ],
)
def test_statements_are_told_apart(text: str, spans: list[tuple[int, int]]) -> None:
    statements = top_level_statements(text)
    assert statements is not None and statements.spans == spans
    assert _expected_spans(ast.parse(text)) == spans


@pytest.mark.parametrize("text", ["x = 1\ry = 2\n", "x = 1\n\0\n", "from __future__ import barry_as_FLUFL\nx = 1 <> 2\n"])
def test_text_split_otherwise_than_python_reads_it_is_not_split(text: str) -> None:
    assert top_level_statements(text) is None


def test_an_added_statement_that_does_not_parse_alone_gives_no_tree() -> None:
    assert touched_module("x = 1\ny = (\n", "a.py", {2}) is None


def test_the_names_the_other_statements_define_are_known() -> None:
    text = "class Store:\n    def load(self):\n        pass\n\n\ndef added():\n    pass\n"
    touched = touched_module(text, "a.py", {6, 7})
    assert touched is not None and touched.other_names == {"Store", "load"}
    assert [statement.name for statement in touched.tree.body] == ["added"]  # type: ignore[attr-defined]


_MODULE = '''import os
import re
import string
import subprocess

from flask import redirect, request

ALPHABET = string.ascii_letters + string.digits
LISTING = f"ls {os.environ['HOME']}"


def existing(value):
    return value


class Store:
    def load(self):
        return 1
'''
# Appended functions whose findings need the rest of the module (a name assigned a formatted
# string, a constant's length) or only themselves, and one redefining a name defined above.
_APPENDED = _MODULE + '''

def token(length=20):
    return "".join(ALPHABET[byte % len(ALPHABET)] for byte in os.urandom(length))


def listing():
    return subprocess.run(LISTING, shell=True)


def quiet(path):
    try:
        return open(path).read()
    except Exception:
        pass


def search(items):
    pattern = re.compile(request.args.get("q", ""))
    return [item for item in items if pattern.search(item)]


def login():
    target = request.args.get("next", "/")
    return redirect(target)


def existing(value, other):
    if value:
        return other
    return value
'''


def _review(root: Path, branch: str) -> list[Finding]:
    return review_change(root, {"app/tools.py": _MODULE}, {"app/tools.py": branch})


@pytest.mark.parametrize(
    "branch",
    [
        _APPENDED,
        _APPENDED.replace("\n\ndef existing(value, other):", "\n\ndef unique(value, other):"),
        # A method added to an existing class: the class is edited, the whole module read.
        _APPENDED.replace("        return 1\n", "        return 1\n\n    def save(self):\n        return 2\n"),
    ],
    ids=["a redefinition appended", "new names appended", "a method added to a class"],
)
def test_the_touched_statements_give_the_findings_of_the_whole_module(
    branch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    touched: list[bool] = []
    real = python_parsing.touched_python

    def recording(change: object, source: str) -> object:
        module = real(change, source)  # type: ignore[arg-type]
        touched.append(module is not None)
        return module

    monkeypatch.setattr(python_parsing, "touched_python", recording)
    read_apart = _review(tmp_path / "apart", branch)
    monkeypatch.setattr(python_parsing, "touched_python", lambda _change, _source: None)
    assert _review(tmp_path / "whole", branch) == read_apart
    assert any(touched) is ("def save" not in branch)
    rules = {finding.rule for finding in read_apart}
    assert {
        "security/modulo-bias", "security/shell-injection", "correctness/swallowed-exception",
        "security/regex-injection", "security/open-redirect", "tests/missing-tests",
    } <= rules, rules


def test_a_statement_the_change_does_not_touch_may_fail_to_parse(tmp_path: Path) -> None:
    """Read apart, the added functions are reviewed even where an untouched statement does not
    parse (a whole module that does not parse gives the lenses nothing)."""
    broken = "print 'python 2'\n\n\ndef kept():\n    return 1\n"
    added = broken + "\n\ndef quiet(path):\n    try:\n        return open(path).read()\n    except Exception:\n        pass\n"
    findings = review_change(tmp_path, {"app/old.py": broken}, {"app/old.py": added})
    assert [finding.line for finding in findings if finding.rule == "correctness/swallowed-exception"] == [11]
