"""Syntax trees from tree-sitter, for every language the lenses read: one parser per language,
its grammar imported the first time a change touches that language (a one-line push in one
language never loads the others' grammars)."""

from __future__ import annotations

import functools
import hashlib
import importlib
import time
import warnings
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.given_up_parses import note_given_up
from reviewgate.reviewers.builtin.languages.parse_child import parses_in_time
from reviewgate.text import printable

if TYPE_CHECKING:
    import tree_sitter

# Grammar name -> (the wheel's module, its function returning the language). TypeScript's wheel
# holds two grammars: TSX is TypeScript with JSX.
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
}

# File extension -> grammar name.
GRAMMAR_OF_EXTENSION: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".kt": "kotlin", ".kts": "kotlin",
    ".cs": "csharp",
    ".rs": "rust",
    ".rb": "ruby",
    ".php": "php",
}


def grammar_of(path: str) -> str | None:
    """The grammar for a file by its extension, or None where no parser reads it."""
    dot = path.rfind(".")
    return GRAMMAR_OF_EXTENSION.get(path[dot:].lower()) if dot > path.rfind("/") else None


@functools.cache
def parser(grammar: str) -> tree_sitter.Parser:
    """The parser of one grammar (a key of GRAMMARS), made once per process."""
    import tree_sitter

    module_name, function = GRAMMARS[grammar]
    module = importlib.import_module(module_name)
    return tree_sitter.Parser(tree_sitter.Language(getattr(module, function)()))


# The grammars with `/* */` comments, and how many `/*` that no `*/` follows are parsed as they are.
BLOCK_COMMENT_GRAMMARS = frozenset(GRAMMARS) - {"python", "ruby"}
UNCLOSABLE_OPENERS_KEPT = 64


# The work one parse may take. tree-sitter reports its progress about every hundred of its steps:
# real code (about 2,200 files of Go, Java, Kotlin, JavaScript and TypeScript) takes at most 0.02
# reports and 0.5 µs of CPU a byte, malformed input some grammars explode on (a Go file of `<!--`
# lines, a Ruby or C# file of `<a` lines) thousands of times more: 10 KB of them, minutes.
PARSE_REPORTS_FLOOR = 10_000
PARSE_REPORTS_PER_BYTE = 0.5
PARSE_SECONDS_FLOOR = 1.0
PARSE_SECONDS_PER_BYTE = 10e-6


def _budget_seconds(data: bytes) -> float:
    """The CPU seconds a parse of `data` may take."""
    return PARSE_SECONDS_FLOOR + PARSE_SECONDS_PER_BYTE * len(data)


class _Reader:
    """The file's bytes as tree-sitter asks for them through a callback (the only way a parse
    reports its progress). A tree parsed so reads `node.text` through it too, a call at a time
    until the node's end: after the parse, a read starts small and doubles while the same read
    goes on, so a name costs one short slice and a long node a few. Never empty before the end
    (the text loop would not end)."""

    PARSE_BYTES = 1 << 16
    FIRST_TEXT_BYTES = 256

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.parsing = True
        self._size = self.FIRST_TEXT_BYTES
        self._next = -1

    def __call__(self, offset: int, _point: object) -> bytes:
        if self.parsing:
            return self.data[offset : offset + self.PARSE_BYTES]
        self._size = self._size * 2 if offset == self._next else self.FIRST_TEXT_BYTES
        piece = self.data[offset : offset + self._size]
        self._next = offset + len(piece)
        return piece


# Some of tree-sitter's steps make no progress report, so the budget above cannot stop them: near
# the end of a file, a parse that kept many readings of an ambiguous text open resolves them all
# at once (Java, 56 KB of `a<b<c<` lines: over a minute; Rust, 32 KB of `%w(` lines: the same),
# in every grammar. A file of CHILD_MIN_BYTES or more is therefore parsed first in a forked child
# held to the budget's CPU seconds (parse_child.py), and here only when the child's parse ended in
# time. A smaller file costs under a third of its budget whatever it holds (the worst measured:
# 2 KB of Rust `%w(` or C# `<!--` lines, 0.3-0.45 s; 1 KB, under 0.15 s).
CHILD_MIN_BYTES = 2_048


# (grammar, digest of the text) -> whether its child's parse ended in time: one child a text for
# the whole review, whichever lenses parse it and when (the tests lens parses the base sides again
# after the per-file stage). A digest, not the text, so a large change's texts are not all held.
_verdicts: dict[tuple[str, bytes], bool] = {}


def _parses_in_time(grammar: str, data: bytes) -> bool:
    key = (grammar, hashlib.blake2b(data, digest_size=16).digest())
    verdict = _verdicts.get(key)
    if verdict is None:
        verdict = _verdicts[key] = parses_in_time(parser(grammar), data, _budget_seconds(data))
    return verdict


class ParseBudgetWarning(UserWarning):
    """A file's parse was given up: its syntax tree was not built, its syntax lenses saw nothing."""


def parse(grammar: str, source: str | bytes, path: str | None = None) -> tree_sitter.Tree:
    """The syntax tree of one file's text. tree-sitter always returns a tree: a syntax error is an
    `ERROR` node inside it (`tree.root_node.has_error`), never an exception. A parse that takes
    more than its budget (above: about 25 times what real code takes, in steps, and 20 times in
    CPU), here or in the child that parses a file of CHILD_MIN_BYTES or more first, is given up,
    and the file reads as one that does not parse: the tree of an empty text, with a warning on
    stderr naming `path` (once a process)."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if grammar in BLOCK_COMMENT_GRAMMARS:
        data = _without_unclosable_openers(data)
    the_parser = parser(grammar)
    if len(data) >= CHILD_MIN_BYTES and not _parses_in_time(grammar, data):
        return _given_up(the_parser, grammar, data, path)
    reports_left = PARSE_REPORTS_FLOOR + int(PARSE_REPORTS_PER_BYTE * len(data))
    # This thread's time: a reviewer busy in another thread does not spend this parse's budget.
    deadline = time.thread_time() + _budget_seconds(data)

    def give_up(_offset: int, _has_error: bool) -> bool:
        nonlocal reports_left
        reports_left -= 1
        return reports_left < 0 or time.thread_time() > deadline

    reader = _Reader(data)
    try:
        tree = the_parser.parse(reader, progress_callback=give_up)
    except ValueError:  # halted by `give_up`: the parser keeps its state until reset
        the_parser.reset()
        return _given_up(the_parser, grammar, data, path)
    reader.parsing = False
    return tree


def _given_up(the_parser: tree_sitter.Parser, grammar: str, data: bytes, path: str | None) -> tree_sitter.Tree:
    """The tree of an empty text, for a file whose parse went over its budget, and a warning."""
    note_given_up(path or "a file")
    warnings.warn(f"{printable(path or 'a file')}: not parsed, its {grammar} parse went over the budget "
                  f"({len(data)} bytes); the syntax lenses skipped it, the line lenses read it",
                  ParseBudgetWarning, stacklevel=3)
    return the_parser.parse(b"")


def _without_unclosable_openers(data: bytes) -> bytes:
    """`data`, or where more than UNCLOSABLE_OPENERS_KEPT `/*` begin after its last `*/`, `data`
    with the `*` of each of those a space (one byte for one: every offset stays). tree-sitter's
    lexers try each such opener to the end of the file (a 290 KB file of them: 110 s). In
    code that compiles none of them opens a comment: each is inside a string, a line comment or a
    regular expression, whose node spans the same bytes either way; only such a node's `.text`
    shows the space. Fewer cost at most that many scans of the file and are left as they are."""
    first = data.find(b"/*", data.rfind(b"*/") + 1)
    if first == -1 or data.count(b"/*", first) <= UNCLOSABLE_OPENERS_KEPT:
        return data
    return data[:first] + data[first:].replace(b"/*", b"/ ")
