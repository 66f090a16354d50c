"""Text on which tree-sitter's runtime spends its time in a step that makes no progress report
(near the end of the file, resolving the readings of an ambiguous text kept open, holding the GIL),
shared by the tests and the benchmark that time a review of it."""

from __future__ import annotations

LINES = 8_000
# A file's path and the line it repeats: 8,000 of them take from several seconds to over a minute
# of tree-sitter's time in one step, in the grammars where a repeated line was found to do it.
SLOW_FILES: tuple[tuple[str, str], ...] = (
    ("src/Slow.java", "a<b<c<\n"),
    ("src/Slow2.java", "%w(\n"),
    ("src/slow.rs", "%w(\n"),
    ("cmd/slow.go", "%w(\n"),
    ("src/Slow.cs", "<a\n"),
)
