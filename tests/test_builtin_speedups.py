"""The builtin reviewer's shortcuts answer exactly what the plain computations answer."""

from __future__ import annotations

import ast
import random
import re
import sys
import zlib
from collections.abc import Collection
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from reviewgate.reviewers.builtin import common as common_module
from reviewgate.reviewers.builtin.common import Comment, Language, _outside_strings, comment_on, nodes_of
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import (
    _C_LANGUAGE_PARTS,
    _HASH_LANGUAGE_PARTS,
    _IDENTIFIER,
    _NUMBER,
    IDENTIFIER_MARK,
    MAX_LINE_LENGTH,
    WINDOW,
    Normalized,
    _blank,
    common_extent,
    consistent_renaming,
    normalized_lines,
    shorter_than,
)
from reviewgate.target.git import TreeReader
from testing.repo import make_repo

SOURCE = '''\
import os
from pathlib import Path

def total(items, rate):
    """Sum of items."""  # a comment with names in it
    result = 0
    for item in items:
        if item.price > 10:
            result += item.price * rate
    text = "a string with words"
    return result


class Ledger:
    def add(self, entry):
        self.entries.append(entry)
        return len(self.entries)
''' + "x = " + "y + " * 250 + "z\n"  # an over-long line: not kept, so its names are not either


def plain_extent(left: str, left_start: int, right: str, right_start: int) -> tuple[int, int]:
    back = 0
    while left_start - back > 0 and right_start - back > 0:
        if left[left_start - back - 1] != right[right_start - back - 1]:
            break
        back += 1
    forward = 0
    while left_start + forward < len(left) and right_start + forward < len(right):
        if left[left_start + forward] != right[right_start + forward]:
            break
        forward += 1
    return back, forward


def test_common_extent_agrees_with_a_character_by_character_walk() -> None:
    rng = random.Random(7)
    for _ in range(300):
        shared = "".join(rng.choice("ab\x01") for _ in range(rng.randint(0, 700)))
        left = "".join(rng.choice("xy") for _ in range(rng.randint(0, 40))) + shared + "p" * rng.randint(0, 3)
        prefix = "".join(rng.choice("xz") for _ in range(rng.randint(0, 40)))
        right = prefix + shared + "q" * rng.randint(0, 3)
        left_start = rng.randint(0, len(left))
        right_start = min(len(right), max(0, left_start - (len(left) - len(shared) - 3) + len(prefix)))
        expected = plain_extent(left, left_start, right, right_start)
        assert common_extent(left, left_start, right, right_start) == expected
        # The bytes of ASCII texts (what the DRY lens compares): the same answer.
        assert common_extent(left.encode(), left_start, right.encode(), right_start) == expected
        for length in (1, 60, 200):
            if shorter_than(left, left_start, right, right_start, length):
                assert sum(expected) < length


def names_by_counting_marks(normalized: Normalized) -> list[str]:
    """Every identifier of the blanked text, kept for the lines whose normalized text is kept: the
    whole-file computation names_between replaces."""
    names = _IDENTIFIER.findall(normalized.blanked)
    kept: list[str] = []
    position = 0
    for blanked_line, line in zip(normalized.blanked.split("\n"), normalized.lines, strict=True):
        count = len(_IDENTIFIER.findall(blanked_line))
        if line:
            kept += names[position : position + count]
        position += count
    return kept


_PLAIN_SPACE = re.compile(r"[ \t\r\f\v]+")
_PLAIN_IMPORT = re.compile(r"^(?:import|from|package|using|#include|require\(|export(?:\*|\{[^}]*\})from)")


def plain_normalized_lines(text: str, language: Language) -> list[str]:
    """The normalization as first written: the Unicode patterns whatever the text, spaces removed
    by a pattern, and each line tested on its own for an import or an over-long line."""
    normalized = _NUMBER.sub("0", _IDENTIFIER.sub(IDENTIFIER_MARK, _blank(text, language)))
    lines = _PLAIN_SPACE.sub("", normalized).split("\n")
    return [line if len(line) <= MAX_LINE_LENGTH and not _PLAIN_IMPORT.match(line) else "" for line in lines]


def test_normalization_in_one_pass_agrees_with_the_line_by_line_one() -> None:
    """ASCII text through the ASCII patterns, spaces deleted by str.translate and the dropped lines
    emptied in one pass over the text give the same lines as the plain normalization, on ASCII and
    non-ASCII code of both comment families, import lines of every form, every kind of space and
    lines either side of the length limit."""
    samples = [
        SOURCE,
        "déf = 1\nnaïve_total = déf + 2  # é\nx = ß(1.5e3, 0x1F)\n",
        "import a from 'b'\nexport{a,\nb}from 'c'\nexport * from 'd'\nconst x = require('e')\n"
        "using System;\npackage main\n#include <stdio.h>\nfoo(); // import\n  import x\n",
        "a = " + "b" * (MAX_LINE_LENGTH - 4) + "\nc = " + "d" * (MAX_LINE_LENGTH - 3) + "\n\n\r\n\t\n",
        "x\t=\f1 \v+\r2\r\n\u00a0y = x\u2003+ 1\n",
        *(path.read_text(encoding="utf-8") for path in sorted(Path("reviewgate").rglob("*.py"))[:80]),
    ]
    for text in samples:
        for language in (Language.PYTHON, Language.JAVASCRIPT, Language.GO):
            assert normalized_lines(text, language) == plain_normalized_lines(text, language)


def plain_windows_in(normalized: Normalized, line_numbers: Collection[int]) -> tuple[list[int], list[int]]:
    """The windows of the given lines as first computed: line by line, each line's own offsets."""
    hashes: list[int] = []
    offsets: list[int] = []
    data, last = normalized.text.encode("ascii", "replace"), len(normalized.text) - WINDOW + 1
    for number in sorted(line_numbers):
        if not 1 <= number <= len(normalized.lines) or not normalized.lines[number - 1]:
            continue
        start = normalized.line_starts[number - 1]
        for offset in range(start, min(start + len(normalized.lines[number - 1]), last)):
            hashes.append(zlib.crc32(data[offset : offset + WINDOW]))
            offsets.append(offset)
    return hashes, offsets


def test_windows_of_adjacent_lines_hashed_in_one_pass_are_those_of_each_line() -> None:
    """A stretch of adjacent added lines is hashed as one stretch of offsets: the same windows, in
    the same order, as each line's own, for ranges (an appended file) and sets of lines with gaps,
    blank, comment and import lines among them, lines past the end and a last window short of one."""
    rng = random.Random(11)
    samples = [SOURCE, *(path.read_text(encoding="utf-8") for path in sorted(Path("reviewgate").rglob("*.py"))[:30])]
    for text in samples:
        normalized = Normalized.of(text, Language.PYTHON)
        count = len(normalized.lines)
        choices: list[Collection[int]] = [
            range(1, count + 1), range(count // 2, count + 3), range(0, 3), range(count + 1, count + 5), range(5, 5),
            set(rng.sample(range(-2, count + 4), min(count, 40))), {count}, {count - 1, count, count + 1},
        ]
        for lines in choices:
            hashes, offsets = normalized.windows_in(lines)
            assert (list(hashes), list(offsets)) == plain_windows_in(normalized, lines)


def test_a_renaming_given_up_on_early_is_below_the_bar_exactly_when_the_whole_one_is() -> None:
    """Stopping at the first pair after which the share cannot reach the bar answers a share under
    it exactly when reading every name does, whatever the bound given (at least the names there
    are), on random names of few kinds (renamings that agree, half agree, or do not) and sides of
    unequal lengths; without a bar the share is the whole one."""
    rng = random.Random(5)
    for _ in range(3000):
        size = rng.randint(0, 30)
        left = [rng.choice("abcde") for _ in range(size)]
        renaming = {name: rng.choice("vwxyz") for name in "abcde"}
        right = [renaming[name] if rng.random() < 0.9 else rng.choice("abvwxyz") for name in left]
        right = right[: rng.randint(0, size)] if rng.random() < 0.2 else right
        whole = consistent_renaming(left, right)
        for bar in (0.5, 0.85, 1.0):
            given_up = consistent_renaming(iter(left), iter(right), below=bar, at_most=size + rng.choice((0, 0, 3)))
            assert (given_up < bar) == (whole < bar)
            if given_up >= bar:
                assert given_up == whole
        assert consistent_renaming(iter(left), iter(right)) == whole


# The comment and string patterns as first written (one character at a time, lazy bodies) and the
# blanking as first written (a Python call per match): what the unrolled patterns and the C-level
# replacement must answer exactly.
_PLAIN_HASH_PARTS = re.compile(
    r"#(?P<comment>[^\n]*)|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
)
_PLAIN_C_PARTS = re.compile(
    r"/(?P<comment>/[^\n]*|\*[\s\S]*?\*/)|`(?:[^`\\]|\\.)*`|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
)


def plain_blank(text: str, pattern: re.Pattern[str]) -> str:
    def replace(match: re.Match[str]) -> str:
        newlines = "\n" * match.group(0).count("\n")
        return newlines if match.group("comment") is not None else '"' + newlines

    return pattern.sub(replace, text)


def test_unrolled_comment_and_string_patterns_blank_exactly_as_the_plain_ones() -> None:
    """The same matches (spans) and the same blanked text on real code of both comment families
    and on random strings of quotes, escapes, comment marks and newlines: unterminated strings,
    a backslash before a newline, four quotes in a row, `/*/`, `**/`."""
    rng = random.Random(11)
    pieces = ['"', "'", "#", "/", "*", "`", "\\", "\n", "a", " ", '"""', "'''", "/*", "*/", "//"]
    samples = [
        SOURCE,
        'x = """a""""\ny = \'\'\'b\'\'\' "c\\"d" \'e\\\nf\' # g "h"\n"""unterminated\n',
        "a = `x\n${b}` /* c */ /*/ d */ /** e **/ // f\n'g\\'' \"h\\\nk\" `l\\\nm`",
        *(path.read_text(encoding="utf-8") for path in sorted(Path("reviewgate").rglob("*.py"))[:80]),
        *("".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(20_000)),
    ]
    for text in samples:
        for language, current, plain in (
            (Language.PYTHON, _HASH_LANGUAGE_PARTS, _PLAIN_HASH_PARTS),
            (Language.JAVASCRIPT, _C_LANGUAGE_PARTS, _PLAIN_C_PARTS),
        ):
            assert [match.span() for match in current.finditer(text)] == [
                match.span() for match in plain.finditer(text)
            ], text
            assert _blank(text, language) == plain_blank(text, plain), text


def test_blanking_makes_no_python_call_per_comment_or_string() -> None:
    """A file with thousands of strings and comments is blanked without a Python-level call per
    match: the repository side of the DRY index blanks every file of the tree on a cold run."""
    text = "".join(f'x{number} = "s{number}"  # c{number}\n' for number in range(2_000))
    calls = 0

    def count(frame: FrameType, event: str, argument: object) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        blanked = _blank(text, Language.PYTHON)
    finally:
        sys.setprofile(None)
    assert blanked == plain_blank(text, _PLAIN_HASH_PARTS)
    assert calls < 20  # the blanking's own calls, none per match


def test_names_between_are_the_identifiers_behind_the_marks() -> None:
    normalized = Normalized.of(SOURCE, Language.PYTHON)
    every_name = names_by_counting_marks(normalized)
    assert every_name[:6] == ["total", "items", "rate", "result", "item", "items"]
    assert "y" not in every_name and "Path" not in every_name  # over-long and import lines
    assert "words" not in every_name and "comment" not in every_name  # strings and comments
    assert normalized.names_between(0, len(normalized.text)) == every_name
    text = normalized.text
    for start in range(0, len(text), 7):
        for end in (start, start + 13, len(text)):
            before = text.count(IDENTIFIER_MARK, 0, start)
            count = text.count(IDENTIFIER_MARK, start, end)
            assert normalized.names_between(start, end) == every_name[before : before + count]


# Every field shape the walk reads by the grammar: optional nodes (`returns`), lists with holes
# (`{**rest}`'s key, a keyword-only parameter without a default), lists of names (`global`),
# patterns, comprehensions, f-strings, decorators, starred and lambda nodes.
GRAMMAR_SOURCE = SOURCE + '''
@decorate(key=1)
async def fetch(a, /, b=2, *rest, c, d=4, **options) -> dict:
    global counter, total
    merged = {**options, "b": b, **{k: v for k, v in rest if v}}
    async with session(a) as (left, right), other():
        async for item in stream(*rest):
            match item:
                case {"kind": "x", **others} | [1, *_, 2]:
                    yield f"{item!r:>{width}} {others}"
                case Point(x=0, y=yy) if yy > 0:
                    pass
    return lambda z=1, *, w: (z if w else -z) and not merged[1:2, ...]
'''


def test_nodes_of_is_ast_walk_grouped_by_class() -> None:
    tree = ast.parse(GRAMMAR_SOURCE)
    walked = list(ast.walk(tree))
    operators = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
    kinds = {type(node) for node in walked if not isinstance(node, operators)}
    assert len(kinds) >= 50
    for kind in kinds:
        assert nodes_of(tree, kind) == tuple(node for node in walked if type(node) is kind), kind.__name__


def test_prefetch_caches_what_read_bytes_reads(tmp_path: Path) -> None:
    files = {"a.py": "print(1)\n", "d/\u00e9.go": "package d\n"}
    repo = make_repo(tmp_path, files)
    paths = ["a.py", "d/\u00e9.go", "missing.py", "new\nline.py"]
    expected = {path: TreeReader(repo.path, repo.head_sha).read_bytes(path) for path in paths}
    assert expected["a.py"] == b"print(1)\n" and expected["missing.py"] is None
    reader = TreeReader(repo.path, repo.head_sha)
    reader.prefetch(paths)
    reader.repo = tmp_path / "elsewhere"  # no git can run there: what is read now was cached
    assert reader.read_bytes("a.py") == expected["a.py"]
    assert reader.read_bytes("d/\u00e9.go") == expected["d/\u00e9.go"]
    reader.repo = repo.path
    assert {path: reader.read_bytes(path) for path in paths} == expected


def plain_outside_strings(line: str, marker: str) -> int:
    """`_outside_strings` as first written: every line blanked before the marker is looked for."""
    blanked = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`",
                     lambda match: " " * len(match.group(0)), line)
    index = blanked.find(marker)
    while marker == "//" and index > 0 and blanked[index - 1] == ":":
        index = blanked.find(marker, index + 2)
    return index


def test_a_line_without_its_comment_marker_blanks_no_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most added lines hold no comment marker at all: they are answered without blanking their
    strings (a pattern and a Python call per string, for every added line), the same answer."""
    rng = random.Random(11)
    for _ in range(3000):
        line = "".join(rng.choice("ab #/:-\"'`\\") for _ in range(rng.randint(0, 30)))
        for marker in ("#", "//", "--"):
            assert _outside_strings(line, marker) == plain_outside_strings(line, marker), (line, marker)
    blanked: list[str] = []
    real = common_module._QUOTES

    class Counted:
        def sub(self, replacement: Any, line: str) -> str:
            blanked.append(line)
            return real.sub(replacement, line)

    monkeypatch.setattr(common_module, "_QUOTES", Counted())
    assert comment_on(1, 'x = "a # b"', Language.PYTHON) is None
    assert comment_on(2, "total = price(rate, 3)", Language.PYTHON) is None
    assert comment_on(3, 'go("http://x")  // next', Language.JAVASCRIPT) == Comment(3, "next", False)
    assert blanked == ['x = "a # b"', 'go("http://x")  // next']
