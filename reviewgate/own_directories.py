"""Where reviewgate keeps its own files (the output and the cache directory): inside the
repository under review, whatever the working directory, and never part of what is reviewed."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reviewgate.config import CONFIG_FILE, Config, TableReader

DEFAULT_OUTPUT_DIRECTORY = ".reviewgate"
DEFAULT_CACHE_DIRECTORY = ".reviewgate-cache"
# The one file of the user's that may sit in the output directory: the reproduction the process
# lens reads (`.reviewgate/reproduction.md`). It stays committable and reviewable.
USER_FILES = ("reproduction.md",)


def in_repository(repo: Path, path: Path) -> Path:
    """A relative `path` is the repository's (`--repo ../other` writes `../other/.reviewgate`);
    an absolute one stays as given. Written relative to the working directory when it lies
    under it, so what is printed and set as a step output reads as the user typed it (a
    container action's absolute paths mean nothing to the steps after it)."""
    if path.is_absolute():
        return path
    resolved = repo.absolute() / path
    here = Path.cwd()
    if resolved.is_relative_to(here):
        return Path(os.path.relpath(resolved, here))
    return resolved


def cache_directory(config: Config, repo: Path) -> Path | None:
    """The review cache `[cache] dir` (or `--cache-dir`) names, or None when `enabled = false`."""
    return cache_directory_of(config.sections.get("cache", {}), repo, config.source or CONFIG_FILE)


def cache_directory_of(section: Mapping[str, Any], repo: Path, source: str = CONFIG_FILE) -> Path | None:
    """The same, from the `[cache]` table alone (what a reviewer's request carries)."""
    reader = TableReader(source, "cache.", section)
    if not reader.boolean("enabled", True):
        return None
    return in_repository(repo, Path(reader.string("dir", DEFAULT_CACHE_DIRECTORY) or DEFAULT_CACHE_DIRECTORY))


def inside_repository(repo: Path, directories: list[Path]) -> tuple[str, ...]:
    """The directories that lie in the repository, as repository paths (`.reviewgate`)."""
    root = repo.resolve()
    paths: list[str] = []
    for directory in directories:
        resolved = directory.resolve()
        if resolved != root and resolved.is_relative_to(root):
            paths.append(resolved.relative_to(root).as_posix())
    return tuple(paths)
