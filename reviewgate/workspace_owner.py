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
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Owner:
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


def give_tree_to_owner(top: Path) -> None:
    """Everything root owns under `top` (`top` included) to the owner of the directory `top`
    is in: for files other code wrote as root (the verify's step logs)."""
    owner = owner_to_inherit(top.parent)
    if owner is None or not top.is_dir() or top.is_symlink():
        return
    for root, directories, files in os.walk(top):
        for name in (*directories, *files):
            _give_if_root_owned(Path(root) / name, owner)
    _give_if_root_owned(top, owner)


def _give_if_root_owned(path: Path, owner: Owner) -> None:
    try:
        if os.lstat(path).st_uid == 0:
            give_to(path, owner)
    except OSError:
        pass  # gone meanwhile: nothing left to hand over
