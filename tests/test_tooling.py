"""What the target side's tooling files say: linguist-generated paths, and test input outside the
usual test places (a type checker's or a test runner's own directories, never the package)."""

from __future__ import annotations

import pytest

from reviewgate.freeze.tooling import Tooling, linguist_generated, tooling_at


def _read(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda path: files[path].encode() if path in files else None


def test_linguist_generated_takes_set_and_true_and_leaves_unset_and_false_out() -> None:
    text = "# docs\ndocs/api/** linguist-generated=true\n*.pb.js\tlinguist-generated\n" \
           "*.md -linguist-generated\nlib/x.js linguist-generated=false\n!keep.js linguist-generated\n"
    assert linguist_generated(text) == ("docs/api/**", "*.pb.js")


@pytest.mark.parametrize(("files", "inputs"), [
    ({"pyproject.toml": '[project]\nname = "my-pkg"\n[tool.mypy]\nfiles = ["my_pkg", "typing_examples", "src"]\n'},
     ("/typing_examples",)),
    # The table written otherwise than `[tool.mypy]`: still read (a byte check decides what is parsed).
    ({"pyproject.toml": 'tool.mypy.files = ["my_pkg", "typing_examples"]\n[project]\nname = "my-pkg"\n'},
     ("/typing_examples",)),
    ({"pyproject.toml": '[project]\nname = "my-pkg"\n[tool]\npytest = {ini_options = {testpaths = ["checks"]}}\n'},
     ("/checks",)),
    ({"pyproject.toml": '[project]\nname = "my-pkg"\n[ tool . "mypy" ]\nfiles = ["typing_examples"]\n'},
     ("/typing_examples",)),
    ({"setup.cfg": "[mypy]\nfiles = mypkg, checks/mypy\n[tool:pytest]\ntestpaths = tests docs_src\n",
      "pyproject.toml": '[project]\nname = "mypkg"\n'},
     ("/tests", "/docs_src", "/checks/mypy")),
    ({"pyrightconfig.json": '{"include": ["lib", "type_checks/pyright"]}'}, ("/type_checks/pyright",)),
    # A project without a pyproject name, typing its modules one by one: those modules ship.
    ({"setup.cfg": "[mypy]\nfiles = celery/schedules.py, celery/app/base.py, t/typecheck\n"}, ("/t/typecheck",)),
    ({"package.json": '{"scripts": {"test": "vitest run && tsc -p type-tests/tsconfig.json --noEmit"}}'},
     ("/type-tests",)),
    ({"package.json": '{"scripts": {"test": "tsd --files \'checks/*.ts\'"}, "tsd": {"directory": "test-types"}}'},
     ("/test-types", "/checks/*.ts")),
    ({"package.json": '{"scripts": {"test": "tsc -p . && jest src"}}'}, ()),  # the package itself
    ({"package.json": "not json", "pyproject.toml": "not = = toml"}, ()),
    ({}, ()),
])
def test_test_input_is_what_the_tooling_checks_or_runs_besides_the_package(
    files: dict[str, str], inputs: tuple[str, ...]
) -> None:
    assert tooling_at(_read(files)).test_inputs == inputs


def test_no_tooling_files_say_nothing() -> None:
    assert tooling_at(_read({})) == Tooling()


def test_test_input_patterns_match_as_gitignore_would() -> None:
    """Plain directory and file patterns take a fast path; it agrees with the pattern engine."""
    from types import SimpleNamespace

    from reviewgate.freeze.exclusions import matches
    from reviewgate.reviewers.builtin.file_kinds import is_test_input

    paths = ["typing_examples/a.py", "typing_examples", "typing_examples_old/a.py", "src/typing_examples/a.py",
             "checks/types.py", "checks/types.py.bak", "checks/other.py", "x/checks/types.py"]
    for patterns in [("/typing_examples", "/checks/types.py"), ("/typing_examples", "/checks/*.py")]:
        request = SimpleNamespace(target=SimpleNamespace(test_inputs=patterns))
        for path in paths:
            assert is_test_input(request, path) == matches(patterns, path), (patterns, path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("package", "shipped"),
    [
        ('{"bin": "./bin/cli.js"}', ("bin/cli.js",)),
        ('{"bin": {"a": "bin/a.js", "b": "./bin/b.js"}}', ("bin/a.js", "bin/b.js")),
        ('{"name": "x"}', ()),
        ('{"bin": 3}', ()),
        ("not json", ()),
    ],
)
def test_shipped_programs_are_what_package_json_bin_installs(package: str, shipped: tuple[str, ...]) -> None:
    files = {"package.json": package.encode()}
    assert tooling_at(files.get).shipped_programs == shipped
