"""Read a TOML file into a dict, with errors that name the file and say what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from reviewgate.errors import ConfigError


def toml_module() -> ModuleType:
    """tomllib (tomli on Python 3.10), imported on the first parse: it compiles its patterns at
    import, which a run whose TOML files hold nothing it reads does not pay (see may_name_key)."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - exercised only on Python 3.10

    return tomli  # pragma: no cover


def read_toml_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from error


def read_toml(path: Path) -> dict[str, Any]:
    return parse_toml(read_toml_bytes(path), str(path))


def parse_toml(data: bytes, where: str) -> dict[str, Any]:
    """TOML bytes (a file, or a blob read from a commit) into a dict; `where` names them."""
    tomllib = toml_module()
    try:
        document: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{where}: not valid UTF-8 text: {error.reason} at byte {error.start}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: not valid TOML: {error}") from error
    return document


def may_name_key(data: bytes, names: tuple[bytes, ...]) -> bool:
    """Whether a TOML document's bytes can hold a key spelled as one of `names` (ASCII), however
    it is written: `[tool.x]`, `[tool . "x"]`, a dotted key `tool.x.y = 1`, an inline table
    `tool = {x = ...}` all spell the name's bytes; only a quoted key's \\u or \\U escape can spell
    it otherwise, so a document with either escape may hold it too. False means no table or key
    of those names exists in it, parsed or not (and it is left unparsed)."""
    return b"\\u" in data or b"\\U" in data or any(name in data for name in names)
