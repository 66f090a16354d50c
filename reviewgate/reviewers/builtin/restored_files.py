"""Files a change puts back as they were before their last change: the change undoes, for that
file, the newest commit of the merge base's history that touched it (a revert), so the file's
functions are code the project had and shipped, not new behaviour: their evidence is weak (a
finding worth a look, not a block), and says which commit the file is put back from.

Told by the code and the history alone, never by what a commit message says: the file's bytes at
head are its bytes at the parent of that commit. The commit's own test changes must be undone
too: a revert that brings code back without the tests the undone commit took away with it leaves
that code untested, and is read as the new code it then is. A clone without the history (a
shallow fetch) finds no such commit, and nothing is read as restored.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import ChangeStatus
from reviewgate.freeze.git import TreeReader, run_git
from reviewgate.reviewers.builtin.file_kinds import is_test_file


def _last_commit(repo: Path, base: str, path: str) -> str | None:
    """The newest commit of `base`'s history that changed `path` (git's history simplification,
    as `git log -- path` reads it), or None where the history does not hold one."""
    completed = run_git(repo, "log", "-1", "--format=%H", base, "--", path, check=False)
    found = completed.stdout.decode("ascii", "replace").strip()
    return found or None


def _changed_paths(repo: Path, commit: str) -> list[str]:
    completed = run_git(repo, "diff-tree", "--no-commit-id", "-r", "--name-only", "-z", f"{commit}^", commit,
                        check=False)
    if completed.returncode != 0:
        return []
    return [name for name in completed.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def restored_paths(request: ReviewRequest, paths: Iterable[str]) -> dict[str, str]:
    """Which of `paths` (changed, not renamed) the change puts back as they were before the newest
    base-side commit that changed each, with that commit's test files back as they were too: the
    commit each undoes, by path."""
    repo, base = request.repo_root, request.target.merge_base
    modified = {change.path for change in request.target.files if change.status is ChangeStatus.MODIFIED}
    found: dict[str, str] = {}
    for path in sorted(set(paths) & modified):
        undone = _last_commit(repo, base, path)
        if undone is None:
            continue
        before = TreeReader(repo, f"{undone}^")
        if before.read_bytes(path) is None or before.read_bytes(path) != request.head.read_bytes(path):
            continue
        tests = [name for name in _changed_paths(repo, undone) if is_test_file(name)]
        if all(before.read_bytes(name) == request.head.read_bytes(name) for name in tests):
            found[path] = undone
    return found
