"""Tests a Rust file holds itself, beside the code rather than in a test file: `#[test]` functions
and `#[cfg(test)]` modules (rust.py tells them), and doc examples that `cargo test` runs.

rustdoc compiles and runs each fenced code block in a library's doc comments (`///`, `//!`,
`#[doc = "..."]`) as a test, unless its fence names another language (`txt`, `console`) or keeps
it from running (`ignore`, `no_run`); a `#[cfg_attr(feature = "...", doc = "```")]` line opens
the block under one set of features, its `not(...)` twin under the others. An assertion
(`assert!`, `assert_eq!`, `assert_ne!`) in such a block tests what it calls; a `compile_fail`
block is a test in whole, passing only when its code does not compile (a check made at compile
time, a type that must not be accepted). A binary's doc comments (`src/main.rs`, `src/bin/`) and
a library whose manifest says `doctest = false` run none.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator

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
# Fence words that keep a block Rust and leave it running: rustdoc's attributes, an edition, and
# the error codes a `compile_fail` block expects (`E0277`).
_RUST_WORD = LazyPattern(r"rust|should_panic|test_harness|standalone_crate|edition\d{4}|E\d{4}")
_COMPILE_FAIL = "compile_fail"
# A test item's opening attribute anywhere in a file: only then is the file parsed for them.
_TEST_ATTRIBUTE = LazyPattern(r"#\[\s*(?:cfg\s*\(\s*test\s*\)|(?:\w+::)*test\b)")


class _Check(enum.Enum):
    """What rustdoc makes of a block, by its fence: run it, or expect it not to compile."""

    RUNS = "runs"
    FAILS_TO_COMPILE = "fails to compile"


def _check(information: str) -> _Check | None:
    """What rustdoc makes of a block whose fence carries `information` (words split by commas or
    spaces); None for a block it never runs (`ignore`, `no_run`) or that is another language's
    (an unknown word: `txt`)."""
    words = information.replace(",", " ").split()
    if any(not _RUST_WORD.fullmatch(word) and word != _COMPILE_FAIL for word in words):
        return None
    return _Check.FAILS_TO_COMPILE if _COMPILE_FAIL in words else _Check.RUNS


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


def _either(first: _Check | None, second: _Check | None) -> _Check | None:
    """The check of a block whose opening line has a twin under other features: running wins."""
    return _Check.RUNS if _Check.RUNS in (first, second) else first or second


def doctest_checks(text: str) -> list[int]:
    """The line numbers that check something in the doc examples rustdoc tests, in a file's text:
    the assertions of a block it runs, every line of a `compile_fail` block."""
    found: list[int] = []
    opened: tuple[int, str, _Check | None] | None = None  # first line, fence, check
    lines: list[int] = []
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
                opened, conditional_opening = (number, fence.group(1), _check(fence.group(2))), conditional
                lines, assertions = [number], []
            continue
        if fence is not None and conditional and conditional_opening and opened[0] == number - 1:
            opened = (opened[0], opened[1], _either(opened[2], _check(fence.group(2))))
            lines.append(number)
            continue
        conditional_opening = False
        if fence is not None and not fence.group(2) and fence.group(1).startswith(opened[1]):
            found += assertions if opened[2] is _Check.RUNS else lines if opened[2] is not None else []
            opened = None
            continue
        lines.append(number)
        if _ASSERTION.search(content):
            assertions.append(number)
    return found


def _test_item_lines(text: str) -> Iterator[range]:
    """The lines of each `#[test]` function and `#[cfg(test)]` module of a file."""
    from reviewgate.reviewers.builtin.languages.rust import is_test_item
    from reviewgate.reviewers.builtin.languages.syntax_tree import parse

    stack = [parse("rust", text).root_node]
    while stack:
        node = stack.pop()
        if is_test_item(node):
            yield range(node.start_point.row + 1, node.end_point.row + 2)
        elif node.type in ("source_file", "mod_item", "declaration_list", "impl_item"):
            stack.extend(node.named_children)


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


def _code(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("//")


def changes_inline_tests(request: ReviewRequest, change: FileChange) -> bool:
    """A Rust file where the change writes code into a test function or module, or a check into a
    doc example `cargo test` runs."""
    if language_of(change.path) is not Language.RUST:
        return False
    added = change.added_lines()
    documents = any(_doc_text(text) is not None for text in added.values())
    text = request.head.read_text(change.path)
    if text is None:
        return False
    if documents and _runs_doctests(request, change.path) and any(
        number in added for number in doctest_checks(text)
    ):
        return True
    first = _TEST_ATTRIBUTE.search(text)
    code = [number for number, line in added.items() if _code(line)]
    if first is None or not code or max(code) < text.count("\n", 0, first.start()) + 1:
        return False  # the usual case: no test item at or above the lines the change writes
    return any(number in lines for lines in _test_item_lines(text) for number in code)
