"""The files whose syntax tree went over its budget, collected for the builtin reviewer's notes."""

from __future__ import annotations

from collections.abc import Iterable

# The files whose syntax tree went over its budget in this process (syntax_tree.parse) since
# `take_given_up` was last asked: the builtin reviewer's notes name them (a forked worker's are
# sent back with its findings).
_given_up_paths: list[str] = []


def note_given_up(path: str) -> None:
    """A file whose parse was given up here."""
    _given_up_paths.append(path)


def record_given_up(paths: Iterable[str]) -> None:
    """Files given up in another process (a forked worker), to be taken with this one's."""
    _given_up_paths.extend(paths)


def take_given_up() -> list[str]:
    """The files given up since the last call, in order, each once."""
    taken = list(dict.fromkeys(_given_up_paths))
    _given_up_paths.clear()
    return taken


def given_up_note(path: str) -> str:
    """The builtin reviewer's note on a file given up."""
    return f"{path}: {_NOTE}"


def is_given_up_note(note: str) -> bool:
    """Whether a note says a file was given up: an outcome with one is not kept for reuse, since its
    parse ran out of time (outcome_cache.py)."""
    return note.endswith(f": {_NOTE}")


_NOTE = "not parsed (its syntax tree went over the parse budget), read by the line lenses only"
