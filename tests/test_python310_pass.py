"""CI's second pass, on Python 3.10, runs what can tell 3.10 from 3.11 (testing/python310.py), and
on 3.10 this module checks what exists there: every module imports, every pattern compiles."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from datetime import datetime, timezone
from pathlib import Path

import reviewgate
from reviewgate.lazy_patterns import LazyPattern
from testing.model_repo import chunk_store
from testing.python310 import (
    ALWAYS,
    ENTRIES,
    READS_ONLY_ITS_OWN_ISOFORMAT,
    ROOT,
    imported_names,
    reached_modules,
    selection,
    version_differences,
)


def _package_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(reviewgate.__path__, "reviewgate.")
                  if not info.name.endswith(".__main__"))  # __main__ runs the command


def test_every_module_imports_and_every_lazily_compiled_pattern_compiles() -> None:
    patterns = 0
    for name in _package_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            items = value if isinstance(value, (tuple, list)) else [value]
            for item in items:
                for candidate in item if isinstance(item, tuple) else [item]:
                    if isinstance(candidate, LazyPattern):
                        candidate.compiled()  # re.error where this Python lacks the syntax
                        patterns += 1
    assert patterns > 100, f"found {patterns} lazily compiled patterns; the lenses hold well over a hundred"


def test_every_module_importing_ast_tomllib_or_a_compiled_part_is_found() -> None:
    """An import-statement reading of each module, apart from the source patterns selection uses."""
    found = version_differences()
    for path in sorted((ROOT / "reviewgate").rglob("*.py")):
        names = imported_names(path)
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        expected = set()
        if "ast" in names:
            expected.add("ast")
        if names & {"tomllib", "tomli"}:
            expected.add("toml")
        if any(name.rsplit(".", 1)[-1] in {"_walk", "_normalize", "_runs"} for name in names):
            expected.add("compiled")
        assert expected <= set(found.get(module, [])), f"{module} uses {sorted(expected)}; found {found.get(module)}"
    kinds = {kind for kinds in found.values() for kind in kinds}
    assert kinds == {"ast", "toml", "compiled", "isoformat", "enum text"}, kinds


def test_each_module_with_a_difference_is_exercised_by_a_test_the_pass_runs() -> None:
    reached: set[str] = set()
    for test in selection():
        reached |= reached_modules(ROOT / test)
    unexercised = [
        module for module in version_differences()
        if module not in reached
        and not any(entry in reached and module.startswith(runs) for entry, (_, runs) in ENTRIES.items())
    ]
    assert not unexercised, f"no test the 3.10 pass runs imports {unexercised}: add one, or an entry that runs them"


def test_a_test_module_touching_a_difference_itself_or_through_a_helper_is_selected(tmp_path: Path) -> None:
    (tmp_path / "reviewgate").mkdir()
    (tmp_path / "reviewgate" / "parsing.py").write_text("import ast\n")
    (tmp_path / "reviewgate" / "dates.py").write_text("when = datetime.fromisoformat(text)\n")
    (tmp_path / "reviewgate" / "plain.py").write_text("import json\n")
    (tmp_path / "testing").mkdir()
    (tmp_path / "testing" / "helper.py").write_text("from reviewgate.dates import when\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_parsing.py").write_text("from reviewgate import parsing\n")
    (tmp_path / "tests" / "test_through_helper.py").write_text("from testing.helper import when\n")
    (tmp_path / "tests" / "test_plain.py").write_text("import reviewgate.plain\n")
    (tmp_path / "tests" / "test_toml_message.py").write_text("assert 'not valid TOML' in errors\n")
    assert selection(tmp_path) == {
        "tests/test_parsing.py": ["ast"],
        "tests/test_through_helper.py": ["isoformat"],
        "tests/test_toml_message.py": ["toml"],
    }


def test_ci_runs_the_selection_on_python_310() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "-m testing.python310" in script
    assert set(ALWAYS) <= set(selection())


# What a test runs to build or install the package: the same tools and files on any Python 3.
_PACKAGING_MODULES = frozenset({"build", "pip", "venv"})


def _runs_a_packaging_tool(function: ast.FunctionDef) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.List):
            words = [item.value if isinstance(item, ast.Constant) else None for item in node.elts]
            if any(first == "-m" and second in _PACKAGING_MODULES for first, second in zip(words, words[1:], strict=False)):
                return True
    return False


def _marked_interpreter_independent(function: ast.FunctionDef) -> bool:
    return any(isinstance(decorator, ast.Attribute) and decorator.attr == "interpreter_independent"
               for decorator in function.decorator_list)


def test_the_tests_that_build_or_install_the_package_are_left_out_on_python_310() -> None:
    """They build the 3.10 wheel CI's 3.10 install has built already, from the same files: on 3.10
    they would run again for nothing, the longest tests of the suite."""
    found = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and _runs_a_packaging_tool(node):
                found.append(f"{path.name}::{node.name}")
                assert _marked_interpreter_independent(node), f"{path.name}::{node.name} builds or installs the package"
    assert len(found) >= 2, found  # the release build and the image's wheel


def _read_and_written_moments(tree: ast.Module) -> tuple[list[str | None], dict[str, list[bool]]]:
    """The key each `fromisoformat(...)` reads (`stored["key"]`; None for any other text), and for
    each key a dict literal writes, whether each write is an `isoformat()`."""
    read: list[str | None] = []
    written: dict[str, list[bool]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fromisoformat":
            keys = [item.slice.value for argument in node.args for item in ast.walk(argument)
                    if isinstance(item, ast.Subscript) and isinstance(item.slice, ast.Constant)]
            read.append(keys[0] if len(keys) == 1 and isinstance(keys[0], str) else None)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    written.setdefault(key.value, []).append(
                        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                        and value.func.attr == "isoformat")
    return read, written


def test_a_module_left_out_for_reading_its_own_isoformat_reads_nothing_else(tmp_path: Path) -> None:
    """3.11's `fromisoformat` reads forms 3.10's refuses, but none that `isoformat()` writes: such a
    module reads the same on both only while every text it parses is one it wrote that way."""
    for name in READS_ONLY_ITS_OWN_ISOFORMAT:
        path = ROOT / (name.replace(".", "/") + ".py")
        read, written = _read_and_written_moments(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        assert read, f"{name} parses no moment: leave it out of READS_ONLY_ITS_OWN_ISOFORMAT"
        for key in read:
            assert key is not None and written.get(key), f"{name}: a fromisoformat of text it did not write"
            assert all(written[key]), f"{name}: {key!r} is written otherwise than with isoformat()"
    # The round trip, on whichever Python runs this (3.10 in CI's second pass).
    store = chunk_store(tmp_path, "openai")
    moment = datetime(2026, 12, 6, 9, 30, 15, 123456, tzinfo=timezone.utc)
    assert store.record_prefix_sent("prefix", moment) is None
    assert store.prefix_sent_at("prefix") == moment
