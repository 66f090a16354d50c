"""The verify's own copy of the tree: made (no `.git`, none of the gate's directories), handed
to the verify's uid, and removed afterwards whatever the app did to its modes."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path


def copy_tree(source: Path, destination: Path, leave_out: tuple[Path, ...]) -> list[str]:
    """The working tree as the verify gets it: every file (untracked ones too: an earlier CI step
    may have installed dependencies there) but `.git` and the gate's own directories. Links are
    copied as links; special files (sockets, fifos) are left out. What could not be copied."""
    skipped: list[str] = []
    top = os.path.realpath(source)
    left_out = {os.path.realpath(path) for path in leave_out}

    def ignore(directory: str, names: list[str]) -> set[str]:
        ignored = set()
        real_directory = os.path.realpath(directory)  # once per directory, not per entry
        for name in names:
            full = os.path.join(directory, name)
            try:
                mode = os.lstat(full).st_mode
            except OSError:
                ignored.add(name)
                continue
            own = (name == ".git" and real_directory == top) or \
                (stat.S_ISDIR(mode) and os.path.join(real_directory, name) in left_out)
            if own:
                ignored.add(name)
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                ignored.add(name)
                skipped.append(os.path.relpath(full, source))
        return ignored

    try:
        shutil.copytree(source, destination, symlinks=True, ignore=ignore, dirs_exist_ok=True,
                        copy_function=_copy_file)
    except shutil.Error as error:
        skipped += [str(item[0]) for item in error.args[0]][:20]
    except _DiskFull as full:
        raise full.error from None
    return skipped


class _DiskFull(Exception):
    """A full disk while copying: copytree would list it as one more file not copied; the verify
    is blocked instead (it is no file's fault)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def _copy_file(source: str, destination: str) -> object:
    try:
        return shutil.copy2(source, destination)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise _DiskFull(error) from error
        raise


def hand_over(root: Path, uid: int) -> None:
    """Everything under `root` belongs to the verify's uid (links themselves, never their targets)."""
    for directory, dirnames, filenames in os.walk(root):
        os.lchown(directory, uid, uid)
        for name in (*dirnames, *filenames):
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isdir(path):
                os.lchown(path, uid, uid)


def remove_tree(root: Path) -> None:
    """Remove the verify's directory even where the app took away its own write bits."""
    def make_writable(function: object, path: str, _error: object) -> None:
        if path == str(root):  # its parent is the shared temp dir: never chmod'ed
            return
        try:
            os.chmod(os.path.dirname(path), 0o700)
            if not os.path.islink(path):  # chmod would change the link's target, anywhere
                os.chmod(path, 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass

    shutil.rmtree(root, onerror=make_writable)
