"""The package's shape against its targets: import circles, module sizes, function complexity.

    python tools/house_metrics.py [--package reviewgate] [--check]

- Import circles: groups of the package's own modules that import each other, directly or through
  others (strongly connected components of the import graph). Counted twice: with the imports run
  when a module loads (top level, outside `if TYPE_CHECKING:`), where a circle can break an import;
  and with every import (also those inside functions and under TYPE_CHECKING), where a circle is
  still two modules that cannot be understood or moved apart, even when a deferred import keeps it
  from failing.
- Modules over MAX_MODULE_LINES lines.
- Functions over MAX_COMPLEXITY cyclomatic complexity, counted as ruff's C901 (mccabe) counts:
  one, plus one per `if`/`elif`, loop, `except`, `try ... else`, `match` and nested function.

`--check` exits 1 when a target is missed. The test suite keeps the package at its targets
(tests/test_house_metrics.py).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

MAX_IMPORT_CIRCLES = 1
MAX_MODULE_LINES = 450
MAX_COMPLEXITY = 25

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class ImportEdge:
    source: str
    target: str
    at_load: bool  # run when the source module loads (not deferred into a function or TYPE_CHECKING)


@dataclass(frozen=True)
class Complexity:
    module: str
    function: str  # qualified: Class.method, outer.inner
    line: int
    complexity: int


@dataclass(frozen=True)
class HouseMetrics:
    circles_at_load: tuple[tuple[str, ...], ...]
    circles_in_design: tuple[tuple[str, ...], ...]
    module_lines: dict[str, int]
    complexities: tuple[Complexity, ...]

    def long_modules(self, limit: int = MAX_MODULE_LINES) -> dict[str, int]:
        return {name: lines for name, lines in sorted(self.module_lines.items()) if lines > limit}

    def complex_functions(self, limit: int = MAX_COMPLEXITY) -> tuple[Complexity, ...]:
        return tuple(item for item in self.complexities if item.complexity > limit)


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name → file, for every .py file of the package (a package is its __init__)."""
    modules: dict[str, Path] = {}
    base = package_dir.parent
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement with whether it runs when the module loads."""

    def walk(nodes: Iterable[ast.AST], at_load: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node, at_load
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from walk(ast.iter_child_nodes(node), False)
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from walk(node.body, False)
                yield from walk(node.orelse, at_load)
            else:
                yield from walk(ast.iter_child_nodes(node), at_load)

    yield from walk(tree.body, True)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def import_edges(package_dir: Path) -> tuple[ImportEdge, ...]:
    """The package's imports of its own modules. `from a import b` is an edge to the module a.b when
    there is one, else to a (b is a name a defines)."""
    modules = module_files(package_dir)
    edges: set[ImportEdge] = set()
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node, at_load in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(module, is_package, node)
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in modules else base)
            for target in targets:
                if target in modules and target != module:
                    edges.add(ImportEdge(module, target, at_load))
    return tuple(sorted(edges, key=lambda edge: (edge.source, edge.target, edge.at_load)))


def circles(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> tuple[tuple[str, ...], ...]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    graph: dict[str, list[str]] = {node: [] for node in nodes}
    for source, target in edges:
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))
    return tuple(sorted(found))


def _statements_complexity(statements: Sequence[ast.stmt]) -> int:
    """ruff's mccabe count of a block (crates/ruff_linter/src/rules/mccabe): an `elif` is an `if`
    in the `else`, as Python's syntax tree has it."""
    total = 0
    for statement in statements:
        if isinstance(statement, ast.If):
            total += 1 + _statements_complexity(statement.body) + _statements_complexity(statement.orelse)
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            total += 1 + _statements_complexity(statement.body) + _statements_complexity(statement.orelse)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            total += _statements_complexity(statement.body)
        elif isinstance(statement, ast.Match):
            total += 1 + sum(_statements_complexity(case.body) for case in statement.cases)
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":  # try/except*: 3.11+
            attempt = cast(ast.Try, statement)
            total += (_statements_complexity(attempt.body) + int(bool(attempt.orelse))
                      + _statements_complexity(attempt.orelse) + _statements_complexity(attempt.finalbody)
                      + sum(1 + _statements_complexity(handler.body)
                            for handler in attempt.handlers if isinstance(handler, ast.ExceptHandler)))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            total += 1 + _statements_complexity(statement.body)
        elif isinstance(statement, ast.ClassDef):
            total += _statements_complexity(statement.body)
    return total


def function_complexities(module: str, tree: ast.Module) -> Iterator[Complexity]:
    """Every function and method, nested ones too, as ruff reports them."""

    def walk(node: ast.AST, prefix: str) -> Iterator[Complexity]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield Complexity(module, name, child.lineno, 1 + _statements_complexity(child.body))
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def measure(package_dir: Path) -> HouseMetrics:
    modules = module_files(package_dir)
    edges = import_edges(package_dir)
    lines: dict[str, int] = {}
    complexities: list[Complexity] = []
    for module, path in modules.items():
        text = path.read_text(encoding="utf-8")
        lines[module] = len(text.splitlines())
        complexities.extend(function_complexities(module, ast.parse(text, filename=str(path))))
    return HouseMetrics(
        circles_at_load=circles(modules, ((edge.source, edge.target) for edge in edges if edge.at_load)),
        circles_in_design=circles(modules, ((edge.source, edge.target) for edge in edges)),
        module_lines=lines,
        complexities=tuple(sorted(complexities, key=lambda item: -item.complexity)),
    )


def report_lines(metrics: HouseMetrics) -> list[str]:
    lines = [f"import circles at load (top-level imports): {len(metrics.circles_at_load)}"]
    lines += [f"  {' '.join(circle)}" for circle in metrics.circles_at_load]
    lines.append(f"import circles in design (every import, deferred and TYPE_CHECKING too): "
                 f"{len(metrics.circles_in_design)} (target <= {MAX_IMPORT_CIRCLES})")
    lines += [f"  {' '.join(circle)}" for circle in metrics.circles_in_design]
    long_modules = metrics.long_modules()
    lines.append(f"modules over {MAX_MODULE_LINES} lines: {len(long_modules)} (target 0)")
    lines += [f"  {name}: {count}" for name, count in long_modules.items()]
    complex_functions = metrics.complex_functions()
    lines.append(f"functions over complexity {MAX_COMPLEXITY}: {len(complex_functions)} (target 0); "
                 "the most complex: " + ", ".join(f"{item.module}:{item.function} {item.complexity}"
                                                  for item in metrics.complexities[:3]))
    lines += [f"  {item.module}:{item.line} {item.function}: {item.complexity}" for item in complex_functions]
    return lines


def meets_targets(metrics: HouseMetrics) -> bool:
    return (len(metrics.circles_in_design) <= MAX_IMPORT_CIRCLES and not metrics.long_modules()
            and not metrics.complex_functions())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, default=ROOT / "reviewgate", help="the package's directory")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    options = parser.parse_args(argv)
    if not (options.package / "__init__.py").is_file():
        parser.error(f"--package {options.package}: not a Python package (no __init__.py)")
    metrics = measure(options.package)
    sys.stdout.write("".join(f"{line}\n" for line in report_lines(metrics)))
    return 1 if options.check and not meets_targets(metrics) else 0


if __name__ == "__main__":
    sys.exit(main())
