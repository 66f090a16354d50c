# The compiled normalization (_normalize.c); fingerprints.py says what each returns.
from collections.abc import Callable, Sequence

from typing_extensions import Buffer

WINDOW: int
MAX_LINE_LENGTH: int
IDENTIFIER_MARK: int
BASE: int
PAIRING_REACH: int

def set_keywords(words: Sequence[str], /) -> None: ...
def normalize(source: str, family: int, /) -> tuple[str, list[str] | None] | None: ...
def anchor_hashes(data: bytes, family: int, /) -> bytes | None: ...
def window_hashes(data: Buffer, offsets: Buffer, /) -> bytes: ...
def consecutive_offsets(start: int, stop: int, /) -> bytes: ...
def line_starts(text: str, /) -> bytes | None: ...
def renaming_share(
    mine_blanked: str, mine_starts: Buffer, mine_kept: bytes, mine_line: int, mine_skip: int, mine_left: int,
    their_blanked: str, their_starts: Buffer, their_kept: bytes, their_line: int, their_skip: int, their_left: int,
    below: float, at_most: int, /,
) -> float | None: ...
def paired_renaming_share(
    mine_lines: tuple[str, ...], mine_line_starts: Buffer, mine_blanked: str, mine_blanked_starts: Buffer,
    mine_kept: bytes, mine_start: int, mine_end: int,
    their_lines: tuple[str, ...], their_line_starts: Buffer, their_blanked: str, their_blanked_starts: Buffer,
    their_kept: bytes, their_start: int, their_end: int,
    below: float, names_total: int, /,
) -> object: ...
def renamed_consistently(
    mine_text: str, mine_lines: tuple[str, ...], mine_line_starts: Buffer, mine_blanked: str,
    mine_blanked_starts: Buffer, mine_kept: bytes,
    their_text: str, their_lines: tuple[str, ...], their_line_starts: Buffer, their_blanked: str,
    their_blanked_starts: Buffer, their_kept: bytes,
    start: int, end: int, other_start: int, other_end: int, below: float, /,
) -> object: ...
def definition_members(
    lines: Sequence[str], search: Callable[[str], object], accessor: Callable[[str], object] | None,
    first_word: str, second_word: str, /,
) -> list[tuple[int, int]]: ...
