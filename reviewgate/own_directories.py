"""Where reviewgate keeps its own files (the output and the cache directory): inside the
repository under review, whatever the working directory, and never part of what is reviewed."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reviewgate.config import CONFIG_FILE, Config, TableReader
from reviewgate.errors import BlockedError, UsageError
from reviewgate.freeze.git import run_git

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


def symlink_on_the_way(repo: Path, path: Path) -> Path | None:
    """The first symlink among `path`'s components inside the repository (the path itself when
    it lies outside), as an absolute path; None when there is none. Paths are compared as
    written: with no symlink inside the repository, that is where the kernel goes too."""
    absolute, root = Path(os.path.abspath(path)), Path(os.path.abspath(repo))
    if absolute.is_relative_to(root):
        return symlink_below(root, absolute)
    return absolute if absolute.is_symlink() else None


def symlink_below(directory: Path, path: Path) -> Path | None:
    """The first symlink among the components of `path` below `directory` (which contains it)."""
    parts = path.relative_to(directory).parts
    candidates = (directory.joinpath(*parts[: index + 1]) for index in range(len(parts)))
    return next((candidate for candidate in candidates if candidate.is_symlink()), None)


def symlink_phrase(path: Path, link: Path) -> str:
    """How `path` meets the symlink `link`, for a one-line message."""
    return "is a symlink" if link == Path(os.path.abspath(path)) else f"goes through the symlink {link}"


def tracked_paths(repo: Path, path: Path) -> list[str] | None:
    """The paths HEAD's tree holds at or under `path` (what the checkout put there: a CI
    checkout's index is HEAD's); [] for a path outside the repository, a directory that is no
    repository or one with nothing committed; None when git cannot answer. ls-tree walks only
    the trees on the way to `path`: the cost does not grow with the repository."""
    absolute, root = Path(os.path.abspath(path)), Path(os.path.abspath(repo))
    if not absolute.is_relative_to(root):
        return []
    relative = absolute.relative_to(root).as_posix()
    listed = run_git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", relative, check=False,
                     extra_env={"GIT_LITERAL_PATHSPECS": "1"})
    if listed.returncode != 0:
        head = run_git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
        return [] if head.returncode != 0 else None
    return [item.decode("utf-8", "surrogateescape") for item in listed.stdout.split(b"\0") if item]


def check_output_directory(repo: Path, path: Path) -> None:
    """reviewgate writes and deletes its outputs in the output directory: never through a
    symlink, which could point anywhere. A symlink the repository commits is the branch's doing
    (blocked, exit 3); one on the runner is the setup's (a usage error, exit 2)."""
    link = symlink_on_the_way(repo, path)
    if link is None:
        return
    where = symlink_phrase(path, link)
    if tracked_paths(repo, link):
        raise BlockedError(f"blocked: the output directory {path} {where} committed in the repository; "
                           "reviewgate never writes or deletes through a symlink: remove it from the branch")
    raise UsageError(f"--output-dir: {path} {where}; reviewgate never writes or deletes through a symlink: "
                     "give it a real directory")
