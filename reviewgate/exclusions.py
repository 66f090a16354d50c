"""Which changed files the reviewer is not given, and why (the reason goes into report.json).

Seed 000: lock files, minified files and generated types are left out unless the change is
about them; the user's gitignore-style `exclude` adds to that and `include` forces back in.
Issue 3 adds generated-code markers, vendored trees, and files that cannot be reviewed at all
(binary, submodule pointers, over the size cap): those are listed as not reviewed, always.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import pathspec

from reviewgate.diff import OPENING_WINDOW_BYTES, ChangeStatus, FileChange

LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "pdm.lock",
        "Cargo.lock",
        "go.sum",
        "Gemfile.lock",
        "composer.lock",
        "mix.lock",
        "pubspec.lock",
        "Podfile.lock",
        "packages.lock.json",
        "flake.lock",
        "gradle.lockfile",
        "conan.lock",
        "Package.resolved",
    }
)

# Generated code by name: protobuf/gRPC output for Python and Go, and the common
# `*.generated.*` convention (e.g. `schema.generated.ts`, `Foo.generated.cs`).
GENERATED_NAME = re.compile(r"(_pb2(_grpc)?\.pyi?|\.pb(\.gw)?\.go|_grpc\.pb\.go|\.generated\.[^/]+)$")
# Generated code by header: Go's convention ("^// Code generated .* DO NOT EDIT\.$",
# https://go.dev/s/generatedcode), Facebook/Phabricator's `@generated`, and the plain
# "DO NOT EDIT" most generators write. Only the first lines count (diff.OPENING_LINES).
GENERATED_HEADER = re.compile(r"@generated|Code generated .* DO NOT EDIT|DO NOT EDIT")
# The same markers as bytes, to skip decoding the opening of the (many) files without one;
# searched with bytes.find, many times faster than a regular expression alternation.
GENERATED_MARKERS = (b"@generated", b"DO NOT EDIT")
VENDORED_DIRECTORIES = frozenset({"vendor", "third_party", "node_modules"})

# Minified: added lines averaging more than this many characters (issue 3: "files whose
# added lines average over a few hundred characters"); hand-written code stays far below.
MINIFIED_AVERAGE_LINE = 300
# Per-file size cap (issue 3): one huge file must not crowd the rest of the change out of a
# reviewer's context. Counted over the file's diff text; over it, listed as not reviewed.
MAX_FILE_DIFF_BYTES = 400_000


@dataclass(frozen=True)
class ExcludedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class ExclusionRules:
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    max_file_diff_bytes: int = MAX_FILE_DIFF_BYTES

    def unreviewable_reason(self, change: FileChange) -> str | None:
        """Why a file cannot be reviewed at all (never forced back in), or None."""
        if change.is_submodule:
            return "submodule pointer change: listed, not reviewed"
        if change.is_binary:
            return "binary file: listed, not diffed"
        size = change.stats.diff_bytes
        if size > self.max_file_diff_bytes:
            return f"too large: diff of {size} bytes is over the per-file cap of {self.max_file_diff_bytes}"
        return None

    def reason_for(self, change: FileChange, header: str | None = None) -> str | None:
        """Why this file is left out of the review by policy, or None when it is reviewed.
        `header` is the first lines of the file at head, when known."""
        if self.include and matches(self.include, change.path):
            return None
        if self.exclude and matches(self.exclude, change.path):
            return "excluded by configuration (review.exclude)"
        # Plain string splitting: git paths are always '/'-separated, and PurePosixPath costs
        # more than the rest of the decision on a change of thousands of files.
        *directories, name = change.path.split("/")
        if name in LOCK_FILES:
            return "lock file"
        if any(part in VENDORED_DIRECTORIES for part in directories):
            return "vendored code"
        if ".min." in name:
            return "minified file"
        if GENERATED_NAME.search(name):
            return "generated file (by name)"
        if change.status is not ChangeStatus.DELETED:
            if change.average_added_line_over(MINIFIED_AVERAGE_LINE):
                return f"minified file (added lines average over {MINIFIED_AVERAGE_LINE} characters)"
            if header is not None and GENERATED_HEADER.search(header):
                return "generated file (header says so)"
        return None


@lru_cache(maxsize=32)
def _compiled(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """Git's own gitignore semantics (negation, last match wins), pathspec 0.10+."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def matches(patterns: tuple[str, ...], path: str) -> bool:
    """Whether gitignore-style `patterns` match `path`; compiled once per pattern list,
    since a large change asks for thousands of paths."""
    return bool(_compiled(patterns).match_file(path))


def header_from_diff(change: FileChange) -> str | None:
    """The file's first lines at head when the diff shows them (a hunk starting at line 1),
    else None: the caller reads them from the tree."""
    if not change.shows_opening:
        return None
    raw = change.raw_hunks
    if raw and all(raw.find(marker, 0, OPENING_WINDOW_BYTES) < 0 for marker in GENERATED_MARKERS):
        return ""  # no marker anywhere near the top: nothing worth decoding
    return change.opening_text


def needs_header(change: FileChange) -> bool:
    """Whether the head header must be read from the tree to decide on this file."""
    return (
        change.status is not ChangeStatus.DELETED
        and not change.is_binary
        and header_from_diff(change) is None
    )


def split_files(
    files: list[FileChange], rules: ExclusionRules, headers: Mapping[str, str] | None = None
) -> tuple[list[FileChange], list[ExcludedFile]]:
    """Reviewed and excluded files. When every reviewable file would be excluded by policy the
    change is about them, so they are all reviewed (seed 000: "unless the ticket is about them").
    Files that cannot be reviewed (binary, submodule, over the cap) stay listed as not reviewed."""
    reviewed: list[FileChange] = []
    unreviewable: list[ExcludedFile] = []
    by_policy: list[tuple[FileChange, ExcludedFile]] = []
    known_headers = headers or {}
    for change in files:
        reason = rules.unreviewable_reason(change)
        if reason is not None:
            unreviewable.append(ExcludedFile(change.path, reason))
            continue
        header = header_from_diff(change)
        reason = rules.reason_for(change, known_headers.get(change.path) if header is None else header)
        if reason is None:
            reviewed.append(change)
        else:
            by_policy.append((change, ExcludedFile(change.path, reason)))
    if by_policy and not reviewed:
        return [change for change, _ in by_policy], unreviewable
    excluded = [item for _, item in by_policy] + unreviewable
    return reviewed, sorted(excluded, key=lambda item: item.path)
