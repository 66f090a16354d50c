"""What the repository's own tooling says about its files, read at the target side (the merge base)
like the policy, so the branch cannot declare its own code generated or a test:

- generated files: paths `.gitattributes` marks `linguist-generated` (GitHub's own convention for
  committed generated code, folded in its diffs);
- test input: files a test runner or a type checker is pointed at that are not the package itself:
  pytest's `testpaths`, the directories mypy (`files`) and pyright (`include`) check besides the
  package's own source, tsd's `directory`, and a TypeScript project (`tsc -p DIR`) or tsd's
  `--files` the `test` script of package.json runs. Type-checker example files are checked, never
  run, often one copy per checker on purpose: they are tests, not product code;
- shipped programs: the files package.json's `bin` installs, so a top-level `bin/` file it does
  not name is the repository's own tooling (a release or CI script), not something users run.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from reviewgate.errors import ConfigError
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.tomlfile import may_name_key, parse_toml

PYPROJECT = "pyproject.toml"
PACKAGE_JSON = "package.json"
GITATTRIBUTES = ".gitattributes"
PYRIGHT_CONFIG = "pyrightconfig.json"
# INI-style files that may hold `[mypy]` or `[pytest]` / `[tool:pytest]` sections.
INI_FILES = ("mypy.ini", ".mypy.ini", "setup.cfg", "pytest.ini", "tox.ini")
# Read at the merge base with the policy's own files, in the same git process.
TOOLING_FILES = (GITATTRIBUTES, PACKAGE_JSON, PYRIGHT_CONFIG, *INI_FILES)
# Entries that are the code itself, whatever a checker is told: the package roots.
_SOURCE_ROOTS = frozenset({"", ".", "src", "lib", "source", "app", "pkg", "cmd", "internal"})
_TSC_PROJECT = LazyPattern(r"\btsc\b[^&|;]*?(?:-p|--project)[ =]+(?P<path>[^\s&|;]+)")
_TSD_FILES = LazyPattern(r"\btsd\b[^&|;]*?(?:-f|--files)[ =]+(?P<path>[^\s&|;]+)")


class Tooling(NamedTuple):
    """Gitignore-style patterns: generated files, and test input outside the usual test places."""

    generated: tuple[str, ...] = ()
    test_inputs: tuple[str, ...] = ()
    shipped_programs: tuple[str, ...] = ()


def linguist_generated(text: str) -> tuple[str, ...]:
    """The patterns `.gitattributes` sets `linguist-generated` on (unset or `=false` ones left out)."""
    return linguist_patterns(text, "linguist-generated")


def linguist_patterns(text: str, attribute: str) -> tuple[str, ...]:
    """The patterns `.gitattributes` sets `attribute` on (`linguist-vendored`, `linguist-documentation`
    ...; unset or `=false` ones left out)."""
    setting = _linguist_setting(attribute)
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pattern, *attributes = stripped.split()
        if setting.search(" ".join(attributes)) and not pattern.startswith("!"):
            found.append(pattern)
    return tuple(found)


@functools.lru_cache(maxsize=8)
def _linguist_setting(attribute: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|\s){re.escape(attribute)}(?:=(?:true|set))?(?=\s|$)")


def _entries(value: object) -> list[str]:
    """A config value naming paths: a list of strings, or one string split at commas and spaces."""
    if isinstance(value, str):
        return [item for item in re.split(r"[,\s]+", value) if item]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _table(document: dict[str, Any], key: str) -> dict[str, Any]:
    """A table of a parsed document, or an empty one when it is missing or not a table."""
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def _package_names(pyproject: dict[str, Any]) -> set[str]:
    """The import names the project ships: its distribution name, and packages it lists."""
    names = set()
    name = _table(pyproject, "project").get("name")
    if isinstance(name, str):
        names.add(re.sub(r"[-.]+", "_", name).lower())
    setuptools = _table(_table(pyproject, "tool"), "setuptools")
    names.update(item.split(".", 1)[0] for item in _entries(setuptools.get("packages")))
    return names


def _is_source(entry: str, packages: set[str]) -> bool:
    first = entry.strip("/").split("/", 1)[0]
    stem = first.removesuffix(".py")
    return first in _SOURCE_ROOTS or stem.lower() in packages or "*" in first


def _as_pattern(entry: str) -> str:
    """A path a tool names, as an anchored gitignore pattern (a directory takes its contents)."""
    entry = entry.strip()
    entry = entry[2:] if entry.startswith("./") else entry
    return "/" + entry.strip("/")


def _python_entries(pyproject: dict[str, Any], ini: dict[str, dict[str, str]],
                    pyright: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(run by pytest, checked by a type checker) paths of the Python tooling."""
    tool = _table(pyproject, "tool")
    tested = _entries(_table(_table(tool, "pytest"), "ini_options").get("testpaths"))
    checked = _entries(_table(tool, "mypy").get("files")) + _entries(_table(tool, "pyright").get("include"))
    checked += _entries(pyright.get("include"))
    for section in ("pytest", "tool:pytest"):
        tested += _entries(ini.get(section, {}).get("testpaths"))
    checked += _entries(ini.get("mypy", {}).get("files"))
    return tested, checked


def _script_entries(package: dict[str, Any]) -> list[str]:
    """Type-checked test input the package's `test` script and tsd config name."""
    found = []
    directory = _table(package, "tsd").get("directory")
    if isinstance(directory, str):
        found.append(directory)
    test = _table(package, "scripts").get("test")
    if isinstance(test, str):
        for match in _TSC_PROJECT.finditer(test):
            path = match.group("path").strip("'\"")
            project = path.rpartition("/")[0] if path.endswith(".json") else path
            if project:
                found.append(project)
        found += [match.group("path").strip("'\"") for match in _TSD_FILES.finditer(test)]
    return found


def _bin_entries(package: dict[str, Any]) -> tuple[str, ...]:
    """The paths package.json's `bin` installs (a path, or a table of command -> path)."""
    programs = package.get("bin")
    paths = [programs] if isinstance(programs, str) else list(programs.values()) if isinstance(programs, dict) else []
    return tuple(path.removeprefix("./") for path in paths if isinstance(path, str))


def _json(data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return {}  # a malformed file says nothing (the tool itself would reject it)
    return value if isinstance(value, dict) else {}


# The names of the pyproject.toml tables this module reads (under `tool`): a file that cannot
# hold one is not parsed (Django's has none).
_PYPROJECT_TABLES = (b"mypy", b"pyright", b"pytest")


def _toml(data: bytes | None, *, whatever: bool = False) -> dict[str, Any]:
    """The parsed file; `whatever` parses it even without the tables this module reads."""
    if data is None or not (whatever or may_name_key(data, _PYPROJECT_TABLES)):
        return {}
    try:
        return parse_toml(data, PYPROJECT)
    except ConfigError:
        return {}  # the policy read reports a malformed pyproject.toml; here it says nothing


# The INI sections this module reads. configparser takes a section's name as written between
# the brackets, so a file without one of these headers has none of them: it is not parsed.
_INI_SECTIONS = ("mypy", "pytest", "tool:pytest")
_INI_HEADERS = tuple(f"[{name}]".encode() for name in _INI_SECTIONS)


def _ini(files: Iterable[bytes | None]) -> dict[str, dict[str, str]]:
    """The `[mypy]` and pytest sections of whichever INI files exist."""
    present = [data for data in files if data is not None and any(header in data for header in _INI_HEADERS)]
    if not present:
        return {}
    # Only for a repository whose INI files have one of the sections (Django's setup.cfg and
    # tox.ini have none): its import and parse cost a one-line push as much as two git calls.
    import configparser

    sections: dict[str, dict[str, str]] = {}
    for data in present:
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(data.decode("utf-8", "replace"))
        except configparser.Error:
            continue
        for name in _INI_SECTIONS:
            if parser.has_section(name):
                sections.setdefault(name, {}).update(parser.items(name))
    return sections


def tooling_at(read: Callable[[str], bytes | None]) -> Tooling:
    """What the tooling files one side holds say (`read` answers None for a missing file)."""
    attributes = read(GITATTRIBUTES)
    generated = linguist_generated(attributes.decode("utf-8", "replace")) if attributes else ()
    ini, pyright = _ini(read(name) for name in INI_FILES), _json(read(PYRIGHT_CONFIG))
    tested, checked = _python_entries({}, ini, pyright)
    # pyproject.toml is parsed only when it or another file names paths: then its package names matter.
    data = read(PYPROJECT)
    pyproject = _toml(data, whatever=bool(tested or checked))
    more_tested, more_checked = _python_entries(pyproject, {}, {})
    tested, checked = [*more_tested, *tested], [*more_checked, *checked]
    packages = _package_names(pyproject)
    # A type checker's single module (`celery/schedules.py` in mypy's `files`) is product code being
    # typed file by file; its example files live in directories of their own.
    checked = [entry for entry in checked if not entry.strip().endswith(".py")]
    entries = [entry for entry in (*tested, *checked) if not _is_source(entry, packages)]
    package = _json(read(PACKAGE_JSON))
    entries += [entry for entry in _script_entries(package) if not _is_source(entry, set())]
    return Tooling(generated, tuple(dict.fromkeys(_as_pattern(entry) for entry in entries)), _bin_entries(package))
