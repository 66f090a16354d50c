"""Write output files whole or not at all: a reader never sees half a report."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from reviewgate.errors import UsageError
from reviewgate.escaping import mask


def prepare_output_dir(path: Path) -> Path:
    """Create the output directory; a file in its place is a usage error, never overwritten."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"--output-dir: {path} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"--output-dir: cannot create {path}: {error.strerror}") from error
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """A report people read, as UTF-8, with every known credential format masked (whatever a
    test printed or a model quoted), written whole or not at all."""
    write_atomic(path, mask(text).encode("utf-8"))


def write_json(path: Path, data: Any) -> None:
    """Pretty, UTF-8 JSON (non-ASCII kept readable), masked, written whole or not at all."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def append_text(path: Path, text: str) -> None:
    """Append to a file the CI runner owns (step summary, outputs), masked; never truncate it."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(mask(text))
