"""Files written whole or not at all, masked where people read them: a reader never sees half a
report. At the ground of the package: it imports only the masking and the ownership helpers, so
any stage may write with it without loading the report package."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from reviewgate.escaping import mask
from reviewgate.text import printable
from reviewgate.workspace_owner import give_to, make_directories, owner_to_inherit


def _umask() -> int:
    """The process's umask, read without changing it (Linux: /proc/self/status, "Umask:"),
    else by setting and restoring it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write to a temporary file beside `path`, then rename it into place. The file gets
    `mode`, else the mode an ordinary `open` would (0666 less the umask: 0644 usually), not
    mkstemp's 0600: in the container action the gate runs as root and later steps run as the
    runner's user, who also owns the file (and every directory made for it) when the gate
    runs as root in that user's directory (workspace_owner.py)."""
    make_directories(path.parent)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        give_to(descriptor, owner_to_inherit(path.parent))  # before the mode: chown may clear set-id bits
        os.fchmod(descriptor, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """A report people read, as UTF-8, with every known credential format masked (whatever a
    test printed or a model quoted), written whole or not at all. A file name's bytes that are
    not UTF-8 (kept as surrogates so git can be asked about them) become U+FFFD here whatever
    text carried them (a finding's body names its file), so no writer can fail on one."""
    write_atomic(path, mask(printable(text)).encode("utf-8"))


def write_json(path: Path, data: Any, *, exact: bool = False) -> None:
    """Pretty, UTF-8 JSON (non-ASCII kept readable), masked, written whole or not at all.
    `exact`: for a record reviewgate reads back (a shard report), every non-ASCII character is
    a `\\u` escape, so the bytes of a name that is not UTF-8 come back as they were."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=exact) + "\n")


def append_text(path: Path, text: str) -> None:
    """Append to a file the CI runner owns (step summary, outputs), masked; never truncate it."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(mask(printable(text)))
