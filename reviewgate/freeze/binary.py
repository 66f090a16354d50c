"""Binary is what the bytes say. The freeze's diff reads no attribute of the checkout (git.py,
tree-only calls), but the repository's own `info/attributes` still applies: a step before the
gate that ran the branch's code could write `* -diff` there. When that file holds anything, a
file git calls binary is checked against its blobs, and diffed again as text when no side is
binary by git's own rule."""

from __future__ import annotations

from pathlib import Path

from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.freeze.git import git_text, read_object_starts

# Git's own heuristic for "binary": a NUL byte in the first 8000 bytes (xdiff-interface.c,
# buffer_is_binary with FIRST_FEW_BYTES).
BINARY_SNIFF_BYTES = 8000


def binary_by_attributes(repo: Path, merge_base: str, head: str, files: list[FileChange]) -> list[FileChange]:
    """The files git called binary whose every side reads as text. A side that cannot be read
    (over the size cap, a newline in its name) leaves the file as git said: binary, listed."""
    if not any(change.is_binary for change in files) or not _has_info_attributes(repo):
        return []  # then nothing but the bytes made git call a file binary: no blob is read
    sides: dict[int, list[str]] = {}
    for change in files:
        if not change.is_binary or change.is_submodule:
            continue
        names = []
        if change.status is not ChangeStatus.DELETED:
            names.append(f"{head}:{change.path}")
        if change.status is not ChangeStatus.ADDED:
            names.append(f"{merge_base}:{change.old_path or change.path}")
        sides[id(change)] = names
    if not sides:
        return []
    starts = read_object_starts(repo, [name for names in sides.values() for name in names], BINARY_SNIFF_BYTES)
    return [
        change
        for change in files
        if id(change) in sides
        and all(name in starts and b"\0" not in starts[name] for name in sides[id(change)])
    ]


def _has_info_attributes(repo: Path) -> bool:
    path = Path(git_text(repo, "rev-parse", "--path-format=absolute", "--git-path", "info/attributes"))
    return path.is_file() and path.stat().st_size > 0


def text_paths(changes: list[FileChange]) -> tuple[str, ...]:
    """Every path the changes touch (a rename's or a copy's source too, so git pairs them again)."""
    paths = {change.path for change in changes} | {change.old_path for change in changes if change.old_path}
    return tuple(sorted(paths))


def with_text_diffs(files: list[FileChange], misread: list[FileChange], text: list[FileChange]) -> list[FileChange]:
    """`files` with each misread file replaced by its text diff (kept as it was when the text
    diff lacks it)."""
    wrong = {id(change) for change in misread}
    by_path = {change.path: change for change in text}
    return [by_path.get(change.path, change) if id(change) in wrong else change for change in files]
