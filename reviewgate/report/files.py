"""The output directory, one run at a time, its own `.gitignore`, and no earlier run's outputs left in it
(one run's report never stands beside another's summary); files are written whole by file_writing.py."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from pathlib import Path
from typing import IO

from reviewgate.errors import BlockedError, UsageError
from reviewgate.file_writing import write_atomic
from reviewgate.own_directories import USER_FILES, check_output_directory
from reviewgate.workspace_owner import give_to, make_directories, owner_to_inherit

LOCK_FILE = ".lock"
# Written into a directory reviewgate creates for itself: git then ignores all of it (the
# file included), so a run leaves `git status` as it found it.
IGNORE_EVERYTHING = "# made by reviewgate: its outputs stay out of the repository\n*\n" + "".join(
    f"!{name}\n" for name in USER_FILES)
# What a run writes under the output dir; removed before a run starts, so a stale approval of
# an older head never stands beside (or instead of) this run's outputs. Each sink's FILE_NAME
# is in this list (tests/test_output_files.py checks it).
PREVIOUS_OUTPUTS = ("report.json", "junit.xml", "summary.md", "codequality.json", "review.sarif")
VERIFY_LOG_DIRECTORY = "verify"
# Locks this process holds, by directory: a second run in the same process (tests, a library
# caller) reuses it, since flock(2) would refuse a second open file of the same process.
_held_locks: dict[Path, IO[bytes]] = {}


def prepare_output_dir(path: Path, repo: Path) -> Path:
    """Create the output directory, take its lock (a second run at once is blocked) and remove
    the previous run's outputs; a file in its place is a usage error, never overwritten, and a
    symlink on its way in the repository `repo` is refused (own_directories.py)."""
    check_output_directory(repo, path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--output-dir: {path} exists and is not a directory")
    try:
        create_own_directory(path)
    except OSError as error:
        raise UsageError(f"--output-dir: cannot create {path}: {error.strerror}") from error
    _lock(path)
    _remove_previous_outputs(path)
    return path


def create_own_directory(path: Path) -> None:
    """Create a directory of reviewgate's own (output, cache) with a `.gitignore` that ignores
    it all; a directory that already exists is left as it is (it may hold the user's files)."""
    if path.is_dir():
        return
    make_directories(path)
    write_atomic(path / ".gitignore", IGNORE_EVERYTHING.encode("utf-8"))


def claim_existing_output_dir(path: Path, repo: Path) -> None:
    """The first thing a run does: when the output dir exists, take its lock and remove the
    previous run's outputs, so even a run that stops on a bad config leaves no stale approval.
    A missing dir is created later by `prepare_output_dir` (a usage error creates nothing)."""
    check_output_directory(repo, path)
    if path.is_dir():
        _lock(path)
        _remove_previous_outputs(path)


def _lock(path: Path) -> None:
    """flock(2) on `<dir>/.lock`, held until this process exits (the kernel releases it even
    after SIGKILL, so a crashed run never leaves a stale lock)."""
    key = path.resolve()
    if key in _held_locks:
        return
    try:
        # O_NOFOLLOW: a `.lock` symlink (committed, say) is refused, never written through.
        handle = os.fdopen(os.open(path / LOCK_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                                   | os.O_CLOEXEC, 0o666), "ab")
    except OSError as error:
        why = "it is a symlink, never written through" if error.errno == errno.ELOOP else error.strerror
        raise UsageError(f"--output-dir: cannot create {path / LOCK_FILE}: {why}") from error
    give_to(handle.fileno(), owner_to_inherit(path))
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise BlockedError(
            f"blocked: another run is using {path} (it holds {path / LOCK_FILE}); "
            "wait for it to finish or give this run its own --output-dir"
        ) from None
    _held_locks[key] = handle


def _remove_previous_outputs(path: Path) -> None:
    """Our own files only: the output dir may be shared with the user's files. The verify's
    step logs go with them (runner.py clears them too, for callers of the verify alone)."""
    names = set(PREVIOUS_OUTPUTS)
    # Temporary files an interrupted write_atomic left (`.report.json.abc123`).
    leftovers = tuple(f".{name}." for name in names)
    for entry in path.iterdir():
        if entry.name in names or entry.name.startswith(leftovers):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)
    logs = path / VERIFY_LOG_DIRECTORY
    if logs.is_symlink():
        logs.unlink()  # the link only: the step logs are then written in a directory of ours
    elif logs.is_dir():
        from reviewgate.verify.manifest import STEP_ORDER  # the manifest reader: only when a verify left logs

        for step in STEP_ORDER:
            (logs / f"{step}.log").unlink(missing_ok=True)
        if not any(logs.iterdir()):
            logs.rmdir()
