"""What the gate makes in someone else's workspace stays theirs.

The container action runs the gate as root in a workspace the runner's user (uid 1001) owns:
a git object, a pack or the shallow file written as root, or a root-owned `.reviewgate/`,
breaks the later steps that run as that user (`insufficient permission for adding an object
to repository database`, `git clean -ffdx`). So when the gate runs as root, whatever it
creates goes to the owner of the directory it is created in, and the git commands that write
into the repository run as the repository's owner. Run as anyone else, nothing changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Owner(NamedTuple):
    """A user and group id: who should own what the gate creates in someone else's checkout."""

    uid: int
    gid: int


def owner_to_inherit(directory: Path) -> Owner | None:
    """The owner (and group) of `directory` when the gate runs as root and that owner is not
    root: who should own what the gate creates there. None when nothing needs changing."""
    if os.geteuid() != 0:
        return None
    try:
        status = os.stat(directory)
    except OSError:
        return None
    if status.st_uid == 0:
        return None
    return Owner(status.st_uid, status.st_gid)


def give_to(descriptor_or_path: int | Path, owner: Owner | None) -> None:
    """chown to `owner` (nothing when None). The mode is left as it was: callers that set one
    (a key file's 0600) set it after this, since chown may clear set-id bits."""
    if owner is None:
        return
    if isinstance(descriptor_or_path, int):
        os.fchown(descriptor_or_path, owner.uid, owner.gid)
    else:
        os.chown(descriptor_or_path, owner.uid, owner.gid, follow_symlinks=False)


def make_directories(path: Path) -> None:
    """`mkdir -p path`, each directory made here given to the owner of the one it is made in."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir()
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # made meanwhile by another process: theirs, not ours to change
        give_to(directory, owner_to_inherit(directory.parent))


def give_tree_to_owner(top: Path, owner: Owner | None = None) -> None:
    """Everything root owns under `top` (`top` included) to `owner`, by default the owner of the
    directory `top` is in: for files other code wrote as root (the verify's step logs, a fetch
    that had to run as root). Walked by directory descriptor and never through a symlink, so a
    directory swapped for a link meanwhile cannot point the chown elsewhere."""
    owner = owner or owner_to_inherit(top.parent)
    if owner is None or not top.is_dir() or top.is_symlink():
        return
    for _, directories, files, directory_fd in os.fwalk(top, follow_symlinks=False):
        for name in (*directories, *files):
            _give_if_root_owned(name, owner, directory_fd)
    _give_if_root_owned(str(top), owner, None)


def _give_if_root_owned(name: str, owner: Owner, directory_fd: int | None) -> None:
    try:
        if os.stat(name, dir_fd=directory_fd, follow_symlinks=False).st_uid == 0:
            os.chown(name, owner.uid, owner.gid, dir_fd=directory_fd, follow_symlinks=False)
    except OSError:
        pass  # gone meanwhile: nothing left to hand over
