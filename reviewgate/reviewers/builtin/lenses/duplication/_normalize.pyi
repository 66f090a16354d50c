# The compiled normalization (_normalize.c); fingerprints.py says what each returns.
from collections.abc import Sequence

WINDOW: int
MAX_LINE_LENGTH: int
IDENTIFIER_MARK: int
BASE: int

def set_keywords(words: Sequence[str], /) -> None: ...
def normalize(source: str, family: int, /) -> tuple[str, list[str] | None] | None: ...
def anchor_hashes(data: bytes, family: int, /) -> bytes | None: ...
