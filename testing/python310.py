"""Which test modules CI's second pass runs on Python 3.10, the oldest `requires-python` allows.

What can differ between 3.10 and the 3.11+ the first pass runs on, for this code:
- What exists (a standard library name, a syntax): mypy checks the package as 3.10 sees it, and on
  3.10 the install builds and imports the compiled parts and tests/test_python310_pass.py
  imports every module and compiles every lazily compiled pattern (3.11 added atomic groups and
  possessive quantifiers to `re`; a pattern using them imports fine and fails on first use).
- What behaves differently, by module, found in the package's source (DIFFERENCES):
  `ast`: the builtin lenses parse the reviewed Python with the running interpreter's parser,
  whose node shapes and accepted syntax differ (`except*` parses on 3.11 only); `tomllib`
  is `tomli` on 3.10; the compiled parts are built against each version's C API; `fromisoformat`
  accepts a trailing `Z` from 3.11 on only; and the report's renderers turn `(str, Enum)` members
  into text, which `format()` and f-strings write as the value on 3.10, as `Class.MEMBER` on 3.11.

The second pass runs every test module that imports such a module, itself or through a testing
helper it imports (the tests of that behaviour), and the always-run ones. Test modules that reach
those modules only through a `python -m reviewgate` subprocess run the same code the direct tests
prove; their own claims (git, processes, files, HTTP, the kernel's users) read the same on any
Python 3. `python -m testing.python310` prints the selection, one path a line."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What differs, and how a package module's source shows it uses it.
DIFFERENCES: dict[str, re.Pattern[str]] = {
    "ast": re.compile(r"^\s*(?:import ast\b|from ast import)", re.MULTILINE),
    "toml": re.compile(r"^\s*import (?:tomllib|tomli)\b", re.MULTILINE),
    "compiled": re.compile(r"^\s*(?:from \S*\b(?:_walk|_normalize|_runs) import|(?:from \S+ )?import .*\b(?:_walk|_normalize|_runs)\b)",
                           re.MULTILINE),
    "isoformat": re.compile(r"\.fromisoformat\("),
}
# `fromisoformat` reads more of ISO 8601 from 3.11 on, but what `isoformat()` writes reads alike on
# both: a module whose only such text is its own sealed cache entries, written with `isoformat()`,
# does not differ (tests/test_python310_pass.py checks that it reads nothing else and round-trips
# on 3.10). Reaching it through the model reviewer's helpers is then no reason to run a test there.
READS_ONLY_ITS_OWN_ISOFORMAT = ("reviewgate.chunk_store",)
# The report's renderers turn findings' `(str, Enum)` members into text.
RENDERERS = "reviewgate/report/"
# Modules that run others with a difference, the tests' way in to them: the builtin reviewer runs
# every lens (the Python ones on `ast`), the model reviewer's context collector reads the reviewed
# Python's symbols, the report package runs every renderer.
ENTRIES: dict[str, tuple[str, str]] = {
    "reviewgate.reviewers.builtin": ("ast", "reviewgate.reviewers.builtin."),
    "reviewgate.reviewers.model.context_collector": ("ast", "reviewgate.reviewers.model.symbols"),
    "reviewgate.report": ("enum text", "reviewgate.report."),
}

# Run on 3.10 whatever they import: what exists there.
ALWAYS = ("tests/test_python310_pass.py",)


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def version_differences(root: Path = ROOT) -> dict[str, list[str]]:
    """Each package module that uses something 3.10 and 3.11 do differently: what."""
    found: dict[str, list[str]] = {}
    for path in sorted((root / "reviewgate").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = module_name(path, root)
        kinds = [kind for kind, pattern in DIFFERENCES.items() if pattern.search(text)
                 and not (kind == "isoformat" and name in READS_ONLY_ITS_OWN_ISOFORMAT)]
        if path.relative_to(root).as_posix().startswith(RENDERERS):
            kinds.append("enum text")
        if kinds:
            found[name] = kinds
    for entry, (kind, _) in ENTRIES.items():
        if kind not in found.setdefault(entry, []):
            found[entry].append(kind)
    return found


def imported_names(path: Path) -> frozenset[str]:
    """Every module (and `module.name`) a file's import statements name."""
    return _imported_names(path, path.stat().st_mtime_ns)


@functools.cache  # each helper is read once per test module that reaches it: parse it once
def _imported_names(path: Path, modified: int) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


def reached_modules(test: Path, root: Path = ROOT) -> set[str]:
    """What a test module imports, itself or through the testing helpers it imports."""
    helpers = {module_name(path, root): path for path in (root / "testing").glob("*.py")}
    names = set(imported_names(test))
    pending = [name for name in names if name in helpers]
    seen: set[str] = set()
    while pending:
        helper = pending.pop()
        if helper in seen:
            continue
        seen.add(helper)
        more = imported_names(helpers[helper])
        names |= more
        pending += [name for name in more if name in helpers]
    return names


# The testing helpers read TOML (pyproject.toml, the docs' examples) as a tool: a test exercises
# the TOML difference by importing the reader itself or by checking the message of a TOML error.
_TOML_ERROR = "not valid TOML"


def selection(root: Path = ROOT) -> dict[str, list[str]]:
    """Each test module the 3.10 pass runs: the differences it exercises (its reason)."""
    differences = version_differences(root)
    chosen: dict[str, list[str]] = {}
    for test in sorted((root / "tests").glob("test_*.py")):
        relative = test.relative_to(root).as_posix()
        own = imported_names(test)
        kinds = {kind for name in reached_modules(test, root) for kind in differences.get(name, [])
                 if kind != "toml" or name in own}
        if _TOML_ERROR in test.read_text(encoding="utf-8"):
            kinds.add("toml")
        if kinds or relative in ALWAYS:
            chosen[relative] = sorted(kinds) or ["what exists"]
    return chosen


if __name__ == "__main__":
    print("\n".join(selection()))
