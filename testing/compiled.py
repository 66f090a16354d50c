"""The builtin reviewer's compiled parts, as pyproject.toml declares them: every check that a
wheel or an image carries them reads this list, so a new extension module is checked everywhere."""

from __future__ import annotations

from pathlib import Path

from reviewgate.tomlfile import read_toml

COMPILED_PARTS: tuple[str, ...] = tuple(
    module["name"] for module in read_toml(Path(__file__).resolve().parents[1] / "pyproject.toml")["tool"]["setuptools"]["ext-modules"]
)
