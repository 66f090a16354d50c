"""docs/security.md names the test behind each promise: every test it names exists.

A promise whose test was renamed or removed would read as proven while nothing checks it. A
name is written `test_file.py::test_name`, or `::test_name` for another test of the file named
last before it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECURITY = ROOT / "docs" / "security.md"
_REFERENCE = re.compile(r"`(?:(test_[a-z0-9_]+\.py))?(?:::(test_[A-Za-z0-9_]+))?`")


def _named_tests(text: str) -> list[tuple[str, str | None]]:
    """(file, test or None for a whole file) for each reference, in the order written."""
    named: list[tuple[str, str | None]] = []
    current: str | None = None
    for match in _REFERENCE.finditer(text):
        file, test = match.groups()
        if file:
            current = file
        if current is None or not (file or test):
            continue
        named.append((current, test))
    return named


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_test_the_security_doc_names_exists() -> None:
    named = _named_tests(SECURITY.read_text(encoding="utf-8"))
    assert len(named) >= 40, "the security doc names the tests behind its promises"
    missing = []
    for file, test in named:
        path = ROOT / "tests" / file
        if not path.is_file():
            missing.append(file)
        elif test is not None and test not in _tests_in(path):
            missing.append(f"{file}::{test}")
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"


def test_a_renamed_test_is_caught() -> None:
    named = _named_tests("(`test_gate.py::test_no_such_promise`, `::test_nor_this`)")
    assert named == [("test_gate.py", "test_no_such_promise"), ("test_gate.py", "test_nor_this")]
    assert "test_no_such_promise" not in _tests_in(ROOT / "tests" / "test_gate.py")
