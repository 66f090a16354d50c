"""Which changed files the reviewer is not given, and why (the reason goes into report.json).

Seed 000: lock files, minified files and generated types are left out unless the change is
about them; the user's gitignore-style `exclude` adds to that and `include` forces back in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pathspec

from reviewgate.diff import FileChange

LOCK_FILES = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
        "poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock", "Cargo.lock", "go.sum", "Gemfile.lock",
        "composer.lock", "mix.lock", "pubspec.lock", "Podfile.lock", "packages.lock.json",
        "flake.lock", "gradle.lockfile", "conan.lock", "Package.resolved",
    }
)


@dataclass(frozen=True)
class ExcludedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class ExclusionRules:
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()

    def _spec(self, patterns: tuple[str, ...]) -> pathspec.PathSpec[Any]:
        return pathspec.PathSpec.from_lines("gitwildmatch", patterns)

    def reason_for(self, change: FileChange) -> str | None:
        """Why this file is left out of the review, or None when it is reviewed."""
        if self.include and self._spec(self.include).match_file(change.path):
            return None
        if self.exclude and self._spec(self.exclude).match_file(change.path):
            return "excluded by configuration (review.exclude)"
        name = PurePosixPath(change.path).name
        if name in LOCK_FILES:
            return "lock file"
        if ".min." in name:
            return "minified file"
        return None


def split_files(
    files: list[FileChange], rules: ExclusionRules
) -> tuple[list[FileChange], list[ExcludedFile]]:
    """Reviewed and excluded files. When every file would be excluded the change is about
    them, so all are reviewed (seed 000: "unless the ticket is about them")."""
    reviewed: list[FileChange] = []
    excluded: list[ExcludedFile] = []
    for change in files:
        reason = rules.reason_for(change)
        if reason is None:
            reviewed.append(change)
        else:
            excluded.append(ExcludedFile(change.path, reason))
    if files and not reviewed:
        return list(files), []
    return reviewed, excluded
