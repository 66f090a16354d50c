"""Waiting on files a running gate writes."""

from __future__ import annotations

from pathlib import Path


def file_says(path: Path, text: str) -> bool:
    """Whether `path` holds `text` now. A file that is not there yet, or that the gate is removing
    at this moment (a previous run's output it clears before writing its own), says nothing."""
    try:
        return text in path.read_text(errors="replace")
    except FileNotFoundError:
        return False
