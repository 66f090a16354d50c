"""The package's shape (tools/house_metrics.py): the measure itself on small packages written here,
its complexity against ruff's, and the package kept at its targets where it has reached them."""

from __future__ import annotations

import ast
import functools
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tools.house_metrics import (
    MAX_COMPLEXITY,
    MAX_MODULE_LINES,
    ROOT,
    HouseMetrics,
    ImportEdge,
    function_complexities,
    import_edges,
    main,
    measure,
    module_files,
)

PACKAGE = ROOT / "reviewgate"


# The package's figures, read once a test process: each reading parses every module (2-3 s of CPU)
# and the tests below only read them.
@functools.cache
def package_metrics() -> HouseMetrics:
    return measure(PACKAGE)


@functools.cache
def package_import_edges() -> tuple[ImportEdge, ...]:
    return import_edges(PACKAGE)

# The parts of the package held to the targets (dotted prefixes); widened as parts reach them.
HELD_TO_TARGETS = (
    "reviewgate.run",
    "reviewgate.run_options",
    "reviewgate.result",
    "reviewgate.review_stage",
    "reviewgate.sharding",
    "reviewgate.verdict_stage",
    "reviewgate.freeze.git",
    "reviewgate.freeze.git_environment",
    "reviewgate.freeze.git_objects",
    "reviewgate.freeze.checkout",
    "reviewgate.freeze.diff",
    "reviewgate.freeze.diff_files",
    "reviewgate.verify.runner",
    "reviewgate.verify",
    "reviewgate.doctor",
    "reviewgate.doctor_report",
    "reviewgate.doctor_reviewers",
    "reviewgate.cli",
    "reviewgate.cli_arguments",
    "reviewgate.cache_keys",
    "reviewgate.chunk_store",
    "reviewgate.review_cache",
    "reviewgate.reviewers.model.context_collector",
    "reviewgate.reviewers.model.context_items",
    "reviewgate.reviewers.model.chunk_work",
    "reviewgate.reviewers.model.reply",
    "reviewgate.file_writing",
    "reviewgate.report.files",
    "reviewgate.reviewers.builtin.behaviour",
    "reviewgate.reviewers.builtin.changed_lines",
    "reviewgate.reviewers.builtin.comments",
    "reviewgate.reviewers.builtin.file_kinds",
    "reviewgate.reviewers.builtin.function_comparison",
    "reviewgate.reviewers.builtin.given_up_parses",
    "reviewgate.reviewers.builtin.language_table",
    "reviewgate.reviewers.builtin.lens_findings",
    "reviewgate.reviewers.builtin.python_parsing",
    "reviewgate.reviewers.builtin.python_walk",
    "reviewgate.reviewers.builtin.side_shapes",
    "reviewgate.reviewers.builtin.lenses.discarded_callback_error",
    "reviewgate.reviewers.builtin.lenses.discarded_go_error",
    "reviewgate.reviewers.builtin.lenses.wrong_exception",
    "reviewgate.reviewers.builtin.languages.tree_family",
    "reviewgate.reviewers.builtin.languages.tree_shapes",
    "reviewgate.reviewers.builtin.languages.python_shapes",
    "reviewgate.reviewers.builtin.languages.python_insertions",
    "reviewgate.reviewers.builtin.languages.text_flow",
    "reviewgate.reviewers.builtin.languages.expression_spans",
    "reviewgate.reviewers.builtin.lenses.swallowed",
    "reviewgate.reviewers.builtin.lenses.security",
    "reviewgate.reviewers.builtin.lenses.open_redirect",
    "reviewgate.reviewers.model.engine",
    "reviewgate.reviewers.model.verification",
)


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "pkg"


def test_a_deferred_import_circle_counts_in_design_but_not_at_load(tmp_path: Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg import b\n",
        "b.py": "def later():\n    from pkg.a import thing\n",
    })
    metrics = measure(package)
    assert metrics.circles_at_load == ()
    assert metrics.circles_in_design == (("pkg.a", "pkg.b"),)


def test_a_top_level_circle_counts_at_load_and_relative_imports_resolve(tmp_path: Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "from .one import x\n",
        "sub/one.py": "from ..top import y\n",
        "top.py": "from pkg.sub import one\nfrom . import other\n",
        "other.py": "",
    })
    metrics = measure(package)
    assert metrics.circles_at_load == (("pkg.sub.one", "pkg.top"),)
    targets = {(edge.source, edge.target) for edge in import_edges(package)}
    assert {("pkg.sub", "pkg.sub.one"), ("pkg.top", "pkg.other")} <= targets


def test_a_type_checking_import_is_deferred(tmp_path: Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nimport pkg.b\n",
        "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import A\nelse:\n    A = None\n",
    })
    metrics = measure(package)
    assert metrics.circles_at_load == ()
    assert metrics.circles_in_design == (("pkg.a", "pkg.b"),)


def test_long_modules_and_complex_functions_are_listed(tmp_path: Path) -> None:
    branches = "".join(f"    if x == {number}:\n        return {number}\n" for number in range(MAX_COMPLEXITY))
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "long.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
        "exact.py": "x = 1\n" * MAX_MODULE_LINES,
        "branchy.py": f"def choose(x):\n{branches}    return None\n",
    })
    metrics = measure(package)
    assert metrics.long_modules() == {"pkg.long": MAX_MODULE_LINES + 1}
    assert [(item.function, item.complexity) for item in metrics.complex_functions()] == [
        ("choose", MAX_COMPLEXITY + 1)]


@pytest.mark.parametrize(("source", "expected"), [
    # ruff's own cases (crates/ruff_linter/src/rules/mccabe/rules/function_is_too_complex.rs)
    ("def f(n):\n    if n > 3:\n        return 1\n    elif n > 4:\n        return 2\n    else:\n        return 3\n", 3),
    ("def f():\n    def a():\n        def b():\n            pass\n        b()\n    a()\n", 3),
    ("def f():\n    try:\n        g()\n    except A:\n        g()\n    except B:\n        g()\n    else:\n        g()\n", 4),
    ("def f():\n    try:\n        pass\n    finally:\n        if res:\n            g()\n", 2),
    ("async def f(a, b, c):\n    if await b:\n        pass\n    async with c:\n        pass\n"
     "    async for x in a:\n        pass\n", 3),
    ("def f(xs):\n    for x in xs:\n        print(x)\n    else:\n        print(None)\n", 2),
])
def test_complexity_counts_as_ruff(source: str, expected: int) -> None:
    assert next(function_complexities("m", ast.parse(source))).complexity == expected


def test_complexity_agrees_with_ruff_over_the_package() -> None:
    """Every function ruff reports over a low threshold has the same complexity here."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).is_file():
        pytest.skip("ruff is not installed (pip install -e '.[lint]')")
    threshold = 12
    completed = subprocess.run(
        [ruff, "check", "--isolated", "--select", "C901", "--config", f"lint.mccabe.max-complexity={threshold}",
         "--output-format", "concise", "--no-cache", str(PACKAGE)],
        capture_output=True, text=True, check=False)
    reported = {(Path(path).resolve(), int(line), int(value))
                for path, line, value in re.findall(r"^(.+?):(\d+):\d+: C901 .* \((\d+) > \d+\)$",
                                                    completed.stdout, re.MULTILINE)}
    assert reported, completed.stdout + completed.stderr
    metrics = package_metrics()
    modules = module_files(PACKAGE)
    measured = {(modules[item.module].resolve(), item.line, item.complexity)
                for item in metrics.complexities if item.complexity > threshold}
    assert measured == reported


def _held(module: str) -> bool:
    return any(module == prefix or module.startswith(f"{prefix}.") for prefix in HELD_TO_TARGETS)


def test_the_package_loads_without_an_import_circle() -> None:
    assert package_metrics().circles_at_load == ()


def test_the_parts_held_to_the_targets_meet_them() -> None:
    metrics = package_metrics()
    assert {name: lines for name, lines in metrics.long_modules().items() if _held(name)} == {}
    assert [item for item in metrics.complex_functions() if _held(item.module)] == []
    assert [circle for circle in metrics.circles_in_design if any(_held(name) for name in circle)] == []


def test_the_builtin_registry_and_what_the_lenses_share_are_in_no_import_circle() -> None:
    """The package and its registry import the lenses; the lenses import what they share below
    them, which imports nothing back up (a compiled module is imported as itself, not through the
    package)."""
    builtin = "reviewgate.reviewers.builtin"
    above = {builtin, f"{builtin}.rules", f"{builtin}.engine", f"{builtin}.settings"}
    assert [circle for circle in package_metrics().circles_in_design if above & set(circle)] == []


def test_the_shards_merge_does_not_import_the_run() -> None:
    """The merge and the run share the decision and the publishing below them both (a shard wraps
    the run's stages, the merge only publishes)."""
    edges = package_import_edges()
    assert {edge.target for edge in edges if edge.source == "reviewgate.sharding.merge"} >= {
        "reviewgate.verdict_stage"}
    assert "reviewgate.run" not in {edge.target for edge in edges if edge.source == "reviewgate.sharding.merge"}
    assert not [edge for edge in edges if edge.source == "reviewgate.run" and "sharding" in edge.target]


# At the ground: every stage may use them, so they reach nothing above them, even by deferred imports.
GROUND = ("reviewgate.file_writing", "reviewgate.cache_keys", "reviewgate.freeze.git",
          "reviewgate.freeze.git_environment", "reviewgate.freeze.git_objects")
ABOVE_THE_GROUND = ("reviewgate.config", "reviewgate.ci", "reviewgate.report", "reviewgate.run", "reviewgate.reviewers",
                    "reviewgate.forge", "reviewgate.policy", "reviewgate.sharding", "reviewgate.verdict_stage",
                    "reviewgate.own_directories", "reviewgate.freeze.freeze")


def test_the_git_wrapper_and_the_file_writing_import_nothing_above_them() -> None:
    imports: dict[str, set[str]] = {}
    for edge in package_import_edges():
        imports.setdefault(edge.source, set()).add(edge.target)
    for module in GROUND:
        reached, pending = set(), [module]
        while pending:
            for target in imports.get(pending.pop(), ()):
                if target not in reached:
                    reached.add(target)
                    pending.append(target)
        above = sorted(name for name in reached
                       if any(name == high or name.startswith(f"{high}.") for high in ABOVE_THE_GROUND))
        assert above == [], f"{module} reaches {above}"


def test_the_command_prints_the_figures_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = _write_package(tmp_path, {"__init__.py": "", "long.py": "x = 1\n" * (MAX_MODULE_LINES + 1)})
    assert main(["--package", str(package)]) == 0
    assert main(["--package", str(package), "--check"]) == 1
    assert "pkg.long: 451" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["--package", str(tmp_path)])
    assert exited.value.code == 2
    assert f"--package {tmp_path}: not a Python package" in capsys.readouterr().err
