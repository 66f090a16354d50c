"""The runtime a project declares it supports, read from its manifest on the target side (the
merge base), never the branch's: a branch that raises `engines.node` or `requires-python` in the
same change as the code that needs it changes the policy that judges it, and the release it
merges into still supports what the target branch declared.

The nearest manifest above the changed file: `package.json`'s `engines.node`, `pyproject.toml`'s
`requires-python` (or Poetry's `python` dependency; without either, `python_requires` in
`setup.cfg` or as a literal in `setup.py`), `go.mod`'s `go` line (the oldest Go the
module says it builds with). The answer is the
oldest version the declaration allows, or None when there is no manifest or no lower bound.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from reviewgate.lazy_patterns import LazyPattern

if TYPE_CHECKING:
    from reviewgate.context import ReviewRequest

Version = tuple[int, int, int]

_NUMBER = LazyPattern(r"v?(?P<major>\d+)(?:\.(?P<minor>\d+|[xX*]))?(?:\.(?P<patch>\d+|[xX*]))?")
_COMPARATOR = LazyPattern(r"(?P<operator>>=|<=|~=|==|!=|\^|~|>|<|=)?\s*(?P<version>v?\d+(?:\.(?:\d+|[xX*])){0,2})")
# `python_requires=">=3.9"` in setup.py (a keyword or a dict entry), `python_requires = >=3.9` in setup.cfg.
_SETUP_PY_REQUIRES = LazyPattern(r"""^[^#\n]*?\bpython_requires['"]?\s*[=:]\s*(?P<quote>['"])(?P<range>[^'"\n]+)(?P=quote)""", re.MULTILINE)
_SETUP_CFG_REQUIRES = LazyPattern(r"^python_requires\s*=\s*(?P<range>[^\n#;]+?)\s*$", re.MULTILINE)
_GO_LINE = LazyPattern(r"^go\s+(?P<version>\d+\.\d+(?:\.\d+)?)\s*$", re.MULTILINE)


def parse_version(text: str) -> Version:
    match = _NUMBER.match(text.strip())
    if match is None:
        return (0, 0, 0)
    parts = [match.group(name) for name in ("major", "minor", "patch")]
    return tuple(int(part) if part and part.isdigit() else 0 for part in parts)  # type: ignore[return-value]


def shown(version: Version) -> str:
    return ".".join(str(part) for part in (version if version[2] else version[:2]))


def lowest_allowed(specification: str) -> Version | None:
    """The oldest version a range allows: `>=16.0.0`, `^16.14 || >=18`, `~=3.10`, `>=3.9,<4`,
    `3.8.*`. None for a range with no lower bound (`*`, `<20`)."""
    lowest: Version | None = None
    for alternative in specification.split("||"):
        bound: Version | None = None
        for comparator in _COMPARATOR.finditer(alternative):
            operator = comparator.group("operator") or "="
            if operator in {"<", "<=", "!="}:
                continue
            version = parse_version(comparator.group("version"))
            bound = version if bound is None else max(bound, version)
        if bound is None:
            return None  # one alternative without a lower bound: any version may run it
        lowest = bound if lowest is None else min(lowest, bound)
    return lowest


def _nearest(request: ReviewRequest, path: str, name: str) -> tuple[str, str] | None:
    """(manifest path, its text at the target side) of the nearest `name` above `path`."""
    from reviewgate.freeze.freeze import base_reader_for

    base = base_reader_for(request.target)
    if base is None:
        return None
    for directory in PurePosixPath(path).parents:
        candidate = str(directory / name) if str(directory) != "." else name
        text = base.read_text(candidate)
        if text is not None:
            return candidate, text
    return None


def node_minimum(request: ReviewRequest, path: str) -> tuple[str, str, Version] | None:
    """(manifest, the declared range, its oldest version) of `engines.node` above `path`."""
    found = _nearest(request, path, "package.json")
    if found is None:
        return None
    try:
        manifest = json.loads(found[1])
    except ValueError:
        return None
    engines = manifest.get("engines") if isinstance(manifest, dict) else None
    return _oldest(found[0], engines.get("node") if isinstance(engines, dict) else None)


def python_minimum(request: ReviewRequest, path: str) -> tuple[str, str, Version] | None:
    """(manifest, the declared range, its oldest version) of `requires-python` above `path`."""
    from reviewgate.errors import ConfigError
    from reviewgate.tomlfile import parse_toml

    found = _nearest(request, path, "pyproject.toml")
    if found is None:
        return _setup_minimum(request, path)
    try:
        data = parse_toml(found[1].encode(), found[0])
    except ConfigError:
        return None
    project = data.get("project", {})
    declared = project.get("requires-python") if isinstance(project, dict) else None
    if declared is None:  # Poetry's `[tool.poetry.dependencies] python = "^3.9"`
        tool = data.get("tool")
        poetry = tool.get("poetry") if isinstance(tool, dict) else None
        dependencies = poetry.get("dependencies") if isinstance(poetry, dict) else None
        declared = dependencies.get("python") if isinstance(dependencies, dict) else None
    if declared is None:
        return _setup_minimum(request, path)
    oldest = _oldest(found[0], declared)
    target = _file_target(data, found[0], path)
    return (found[0], f"{declared}, and {target[0]} for this file", target[1]) if (
        oldest is not None and target is not None and target[1] > oldest[2]) else oldest


def _file_target(data: dict[str, object], manifest: str, path: str) -> tuple[str, Version] | None:
    """Ruff's `[tool.ruff.per-file-target-version]` entry that covers `path` (anyio's
    `"docs/snippets/**/*.py" = "py311"`, attrs' `"tests/test_pattern_matching.py" = "py310"`): the
    project's own word that the file runs on that Python or newer."""
    from fnmatch import fnmatchcase

    tool = data.get("tool")
    ruff = tool.get("ruff") if isinstance(tool, dict) else None
    targets = ruff.get("per-file-target-version") if isinstance(ruff, dict) else None
    if not isinstance(targets, dict):
        return None
    relative = str(PurePosixPath(path).relative_to(PurePosixPath(manifest).parent))
    for pattern, version in targets.items():
        found = re.fullmatch(r"py3(\d+)", str(version))
        if found and (fnmatchcase(relative, pattern) or fnmatchcase(relative, pattern.replace("**/", ""))):
            return f"`{pattern} = \"{version}\"`", (3, int(found.group(1)), 0)
    return None


def _setup_minimum(request: ReviewRequest, path: str) -> tuple[str, str, Version] | None:
    """`python_requires` of the nearest setup.cfg, else of the nearest setup.py (a literal only)."""
    for name, pattern in (("setup.cfg", _SETUP_CFG_REQUIRES), ("setup.py", _SETUP_PY_REQUIRES)):
        found = _nearest(request, path, name)
        match = None if found is None else pattern.search(found[1])
        if found is not None and match is not None:
            return _oldest(found[0], match.group("range").strip())
    return None


def _oldest(manifest: str, declared: object) -> tuple[str, str, Version] | None:
    """(manifest, the declared range, its oldest version), or None for no range or no lower bound."""
    if not isinstance(declared, str):
        return None
    lowest = lowest_allowed(declared.replace(",", " "))
    return None if lowest is None else (manifest, declared, lowest)


def go_minimum(request: ReviewRequest, path: str) -> tuple[str, str, Version] | None:
    """(go.mod, its `go` line, that version) of the nearest go.mod above `path`, at the target side."""
    found = _nearest(request, path, "go.mod")
    if found is None:
        return None
    match = _GO_LINE.search(found[1])
    if match is None:
        return None
    return found[0], f"go {match.group('version')}", parse_version(match.group("version"))


def go_version(request: ReviewRequest, path: str) -> Version | None:
    """The `go` line of the nearest go.mod above `path`, at the target side."""
    found = go_minimum(request, path)
    return None if found is None else found[2]
