# The DRY search's inner loop compiled (_runs.c); runs.regions_found says what it returns.
from typing_extensions import Buffer

MAX_REORDERED_LINES: int

def regions_found(
    mine: int,
    window_hashes: Buffer,
    window_offsets: Buffer,
    table_hashes: Buffer,
    table_first: Buffer,
    table_files: Buffer,
    table_offsets: Buffer,
    codes: Buffer,
    text_starts: Buffer,
    text_ends: Buffer,
    line_starts: Buffer,
    text_length: int,
    shortest: int,
    most_places: int,
    /,
) -> list[tuple[int, int, int, int]]: ...
def longest_disjoint(runs: list[tuple[int, int, int, int]], minimum: int, /) -> list[tuple[int, int, int, int]]: ...
def shared_hashes(left: Buffer, right: Buffer, /) -> bytes: ...
def place_table(hashes: Buffer, offsets: Buffer, counts: Buffer, shared: Buffer, /) -> tuple[bytes, bytes, bytes, bytes]: ...
def windows_kept(hashes: Buffer, offsets: Buffer, counts: Buffer, shared: Buffer, /) -> tuple[bytes, bytes, bytes]: ...
def reordered_growth(
    mine_lines: tuple[str, ...],
    mine_starts: Buffer,
    their_lines: tuple[str, ...],
    their_starts: Buffer,
    start: int,
    end: int,
    other_start: int,
    /,
) -> tuple[int, int] | None: ...
