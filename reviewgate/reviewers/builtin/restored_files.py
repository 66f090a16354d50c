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
from reviewgate.freeze.git import TreeReader, prefetch_sides, run_git
from reviewgate.reviewers.builtin.file_kinds import is_test_file

# How far back the base's history is read for the newest commit that changed each file: a path
# whose last change is older than this is not read as put back (its evidence stays strong).
HISTORY_COMMITS = 500


def _last_commits(repo: Path, base: str, paths: list[str]) -> dict[str, str]:
    """The newest commit of `base`'s history (within HISTORY_COMMITS) that changed each of
    `paths`, from one `git log` over them all: one process however many files, where one per file
    was a second and a half of a +100k change's wall. Merges list no files, so a file is credited
    to the commit that changed it; a path git would quote (a quote or a control character in its
    name) is not matched, and stays new code."""
    completed = run_git(repo, "--literal-pathspecs", "log", f"-n{HISTORY_COMMITS}", "--format=%x01%H",
                        "--name-only", "--no-renames", base, "--", *paths, check=False)
    wanted, found, commit = set(paths), {}, ""
    for line in completed.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("\x01"):
            commit = line[1:].strip()
        elif line in wanted and line not in found and commit:
            found[line] = commit
    return found


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
    candidates = sorted(set(paths) & modified)
    undone_by_path = _last_commits(repo, base, candidates) if candidates else {}
    readers = {commit: TreeReader(repo, f"{commit}^") for commit in set(undone_by_path.values())}
    prefetch_sides([(readers[commit], [path for path, undone in undone_by_path.items() if undone == commit])
                    for commit in readers])
    found: dict[str, str] = {}
    tests_back: dict[str, bool] = {}  # by undone commit: its test files are as they were before it
    for path, undone in sorted(undone_by_path.items()):
        before = readers[undone]
        earlier = before.read_bytes(path)
        if earlier is None or earlier != request.head.read_bytes(path):
            continue
        if undone not in tests_back:
            tests = [name for name in _changed_paths(repo, undone) if is_test_file(name)]
            tests_back[undone] = all(before.read_bytes(name) == request.head.read_bytes(name) for name in tests)
        if tests_back[undone]:
            found[path] = undone
    return found
