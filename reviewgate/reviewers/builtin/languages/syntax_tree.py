"""Syntax trees from tree-sitter, for every language the lenses read: one parser per language,
its grammar imported the first time a change touches that language (a one-line push in one
language never loads the others' grammars)."""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

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


def parse(grammar: str, source: str | bytes) -> tree_sitter.Tree:
    """The syntax tree of one file's text. tree-sitter always returns a tree: a syntax error is an
    `ERROR` node inside it (`tree.root_node.has_error`), never an exception."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if grammar in BLOCK_COMMENT_GRAMMARS:
        data = _without_unclosable_openers(data)
    return parser(grammar).parse(data)


def _without_unclosable_openers(data: bytes) -> bytes:
    """`data`, or where more than UNCLOSABLE_OPENERS_KEPT `/*` begin after its last `*/`, `data`
    with the `*` of each of those a space (one byte for one: every offset stays). tree-sitter's
    lexers try each such opener to the end of the file (a 300 KB file of them: 15 minutes). In
    code that compiles none of them opens a comment: each is inside a string, a line comment or a
    regular expression, whose node spans the same bytes either way; only such a node's `.text`
    shows the space. Fewer cost at most that many scans of the file and are left as they are."""
    first = data.find(b"/*", data.rfind(b"*/") + 1)
    if first == -1 or data.count(b"/*", first) <= UNCLOSABLE_OPENERS_KEPT:
        return data
    return data[:first] + data[first:].replace(b"/*", b"/ ")
