"""Rust doc examples that `cargo test` runs. rustdoc compiles and runs each fenced code block in a
library's doc comments (`///`, `//!`, `#[doc = "..."]`) as a test, unless its fence names another
language (`txt`, `console`) or keeps it from running (`ignore`, `no_run`, `compile_fail`); a
`#[cfg_attr(feature = "...", doc = "```")]` line opens the block under one set of features, its
`not(...)` twin under the others. An assertion (`assert!`, `assert_eq!`, `assert_ne!`) the change
adds to such a block tests what it calls, written beside the code rather than in a test file. A binary's doc comments
(`src/main.rs`, `src/bin/`) and a library whose manifest says `doctest = false` run none.
"""

from __future__ import annotations

import re

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import FileChange
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.product_code import nearest_cargo_manifest

_DOC_LINE = LazyPattern(r"^\s*//[/!](?![/!])\s?(.*)$")
_DOC_ATTRIBUTE = LazyPattern(r"^\s*#!?\[\s*(cfg_attr\s*\(.*,)?\s*doc\s*=\s*\"((?:[^\"\\]|\\.)*)\"\s*\)?\s*\]\s*$")
_ATTRIBUTE = LazyPattern(r"^\s*#!?\[")
_FENCE = LazyPattern(r"^\s{0,3}(`{3,}|~{3,})\s*(.*)$")
_ASSERTION = LazyPattern(r"\b(?:debug_)?assert(?:_eq|_ne)?!\s*[(\[{]")
_NO_DOCTESTS = LazyPattern(r"^\s*doctest\s*=\s*false\b", re.MULTILINE)
_EDITION = LazyPattern(r"edition\d{4}")
# Fence words that keep a block Rust and run it (rustdoc's code block attributes); `editionYYYY` too.
_RUNNING_WORDS = frozenset({"rust", "should_panic", "test_harness", "standalone_crate"})
# Words that keep a Rust block from running: compiled at most, its assertions never evaluated.
_NOT_RUNNING_WORDS = frozenset({"ignore", "no_run", "compile_fail"})


def _runs(information: str) -> bool:
    """Whether rustdoc runs a block whose fence carries `information` (words split by commas or
    spaces): an unknown word is another language's name, and such a block is no Rust at all."""
    for word in information.replace(",", " ").split():
        if word in _RUNNING_WORDS or _EDITION.fullmatch(word):
            continue
        return False  # `ignore`, `ignore-windows`, `no_run`, `compile_fail`, `txt`
    return True


def _doc_text(line: str) -> tuple[str, bool] | None:
    """The documentation a line writes, and whether only some features write it (`cfg_attr`);
    None for a line that is no doc comment."""
    found = _DOC_LINE.match(line)
    if found is not None:
        return found.group(1), False
    found = _DOC_ATTRIBUTE.match(line)
    if found is not None:
        return found.group(2), found.group(1) is not None
    return None


def doctest_assertions(text: str) -> list[int]:
    """The line numbers of the assertions in the doc examples rustdoc runs, in a file's text."""
    found: list[int] = []
    opened: tuple[int, str, bool] | None = None  # first line, fence, runs
    assertions: list[int] = []
    conditional_opening = False
    for number, line in enumerate(text.split("\n"), start=1):
        doc = _doc_text(line)
        if doc is None:
            if opened is not None and not _ATTRIBUTE.match(line):
                opened = None  # the item begins: its doc comment, and any unclosed block, end
            conditional_opening = False
            continue
        content, conditional = doc
        fence = _FENCE.match(content)
        if opened is None:
            if fence is not None:
                opened, assertions, conditional_opening = (number, fence.group(1), _runs(fence.group(2))), [], conditional
            continue
        if fence is not None and conditional and conditional_opening and opened[0] == number - 1:
            # The twin of the opening line under other features: the block runs if either runs.
            opened = (opened[0], opened[1], opened[2] or _runs(fence.group(2)))
            continue
        conditional_opening = False
        if fence is not None and not fence.group(2) and fence.group(1).startswith(opened[1]):
            if opened[2]:
                found += assertions
            opened = None
            continue
        if _ASSERTION.search(content):
            assertions.append(number)
    return found


def _runs_doctests(request: ReviewRequest, path: str) -> bool:
    """Whether `cargo test` runs the doc examples of `path`: a library's file, by its crate's
    manifest at the merge base."""
    base = base_reader_for(request.target)
    found = None if base is None else nearest_cargo_manifest(base, path)
    if found is None:
        return False
    directory, manifest = found
    inside = path[len(directory) + 1:] if directory else path
    return not (inside == "src/main.rs" or inside.startswith("src/bin/") or _NO_DOCTESTS.search(manifest))


def adds_asserting_doctest(request: ReviewRequest, change: FileChange) -> bool:
    """A Rust file where the change adds an assertion to a doc example that `cargo test` runs."""
    if language_of(change.path) is not Language.RUST:
        return False
    added = change.added_lines()
    if not any("assert" in text and _doc_text(text) is not None for text in added.values()):
        return False  # the usual case: no file read
    if not _runs_doctests(request, change.path):
        return False
    text = request.head.read_text(change.path)
    if text is None:
        return False
    return any(number in added for number in doctest_assertions(text))
