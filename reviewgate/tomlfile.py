"""Read a TOML file into a dict, with errors that name the file and say what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from reviewgate.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib


def read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from error
    return parse_toml(data, str(path))


def parse_toml(data: bytes, where: str) -> dict[str, Any]:
    """TOML bytes (a file, or a blob read from a commit) into a dict; `where` names them."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{where}: not valid UTF-8 text: {error.reason} at byte {error.start}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: not valid TOML: {error}") from error
