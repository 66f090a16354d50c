"""The builtin reviewer's shortcuts answer exactly what the plain computations answer."""

from __future__ import annotations

import ast
import random
import re
import sys
import time
from array import array
from collections.abc import Collection
from itertools import accumulate
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from reviewgate.freeze.diff import (
    LONG_LINE_CHARS,
    ChangeStatus,
    DiffStats,
    FileChange,
    LineKind,
    added_lines_of,
    parse_hunks,
)
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.builtin import comments as comments_module
from reviewgate.reviewers.builtin.comments import Comment, _outside_strings, added_comments, comment_on
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses import secrets as secrets_module
from reviewgate.reviewers.builtin.lenses.duplication import fingerprints as fingerprints_module
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
    consistent_renaming,
    literals,
    normalized_lines,
)
from reviewgate.reviewers.builtin.lenses.literal_typo import _findings as _literal_findings
from reviewgate.reviewers.builtin.lenses.literal_typo import _python_sets
from reviewgate.reviewers.builtin.lenses.runtime_minimum import _newest_python_use, _python
from reviewgate.reviewers.builtin.lenses.secrets import SecretsLens, _candidate_lines
from reviewgate.reviewers.builtin.python_parsing import forget_parsed_trees
from reviewgate.reviewers.builtin.python_walk import nodes_of
from testing.repo import make_repo
from tests.test_dry_runs import plain_window_hash

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
            hashes.append(plain_window_hash(data[offset : offset + WINDOW]))
            offsets.append(offset)
    return hashes, offsets


@pytest.mark.parametrize("offsets_path", ["compiled", "python"])
def test_windows_of_adjacent_lines_hashed_in_one_pass_are_those_of_each_line(
        offsets_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stretch of adjacent added lines is hashed as one stretch of offsets: the same windows, in
    the same order, as each line's own, for ranges (an appended file) and sets of lines with gaps,
    blank, comment and import lines among them, lines past the end and a last window short of one;
    its offsets made compiled (`_normalize.consecutive_offsets`) or from a range."""
    if offsets_path == "python":
        monkeypatch.setattr(fingerprints_module, "_compiled_consecutive_offsets", None)
    elif fingerprints_module._compiled_consecutive_offsets is None:
        pytest.skip("built only where a C compiler is at hand (.ci/run checks that it was)")
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


def test_the_blanked_line_starts_made_compiled_are_those_of_the_lines() -> None:
    """`Normalized._blanked_starts` made in C (`_normalize.line_starts`) are where each line of the
    blanked text starts and one past its end, as summed from its lines in Python: on real files,
    empty text, text ending in a newline or not, and characters wider than a byte."""
    if fingerprints_module._compiled_line_starts is None:
        pytest.skip("built only where a C compiler is at hand (.ci/run checks that it was)")
    rng = random.Random(3)
    texts = ["", "\n", "a", "a\n", "\n\nb", "é\n\U0001f600x\nŷ", SOURCE,
             *("".join(rng.choice(["a", "\n", "é", "\U0001f600", " "]) for _ in range(rng.randint(0, 60)))
               for _ in range(300))]
    for text in texts:
        compiled = array("I")
        compiled.frombytes(fingerprints_module._compiled_line_starts(text) or b"")
        summed = array("I", [0])
        summed.extend(accumulate(len(line) + 1 for line in text.split("\n")))
        assert compiled == summed, text
        normalized = Normalized.of(text, Language.PYTHON)
        assert [normalized.blanked_line(index) for index in range(len(normalized.lines))] == normalized.blanked.split("\n")


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
    # "\x00" and "\x02": the first characters `_blank` may stand in for a `*` that opens no comment.
    pieces = ['"', "'", "#", "/", "*", "`", "\\", "\n", "a", " ", '"""', "'''", "/*", "*/", "//", "\x00", "\x02"]
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
            assert literals(text, language) == [
                match.group(0) for match in plain.finditer(text) if match.group("comment") is None
            ] + _NUMBER.findall(plain_blank(text, plain)), text


def test_a_file_of_block_comments_that_never_close_costs_its_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the compiled normalization: a branch's 100 KB of `/*` that no `*/` follows. The
    pattern tried each opener to the end of the file (30 KB took 4 s, 100 KB about a minute, 900 KB
    hours); the openers after the last `*/` are now passed over (`_defused_openers`)."""
    monkeypatch.setattr(fingerprints_module, "_compiled_normalize", None)
    cases = (("/*\n" * 35_000, "/*\n" * 35_000, []),
             ("x = 1 /* a */ y\n" + "/* b 'c' `d`\n" * 8_000, "x = 1  y\n" + '/* b " "\n' * 8_000,
              ["'c'", "`d`"] * 8_000 + ["1"]))
    for text, blanked, table in cases:
        started = time.process_time()
        normalized = Normalized.of(text, Language.JAVASCRIPT)
        found = literals(text, Language.JAVASCRIPT)
        assert time.process_time() - started < 5  # about 0.01 s
        assert (normalized.blanked, found) == (blanked, table)


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
    real = comments_module._QUOTES

    class Counted:
        def sub(self, replacement: Any, line: str) -> str:
            blanked.append(line)
            return real.sub(replacement, line)

    monkeypatch.setattr(comments_module, "_QUOTES", Counted())
    assert comment_on(1, 'x = "a # b"', Language.PYTHON) is None
    assert comment_on(2, "total = price(rate, 3)", Language.PYTHON) is None
    assert comment_on(3, 'go("http://x")  // next', Language.JAVASCRIPT) == Comment(3, "next", False)
    assert blanked == ['x = "a # b"', 'go("http://x")  // next']


def _random_hunk_text(rng: random.Random) -> bytes:
    """One file's hunk text as git writes it: hunks of context, removed and added lines (some not
    UTF-8, some over the long-line cap, a byte-order mark on line 1), "\\ No newline" notes."""
    pieces = [b"\xef\xbb\xbfhead", b"caf\xc3\xa9", b"bad \xff\xfe", b"x" * (LONG_LINE_CHARS + rng.randint(-1, 2)),
              b"  return total", b"", b"# note"]
    hunks: list[bytes] = []
    old_line = new_line = rng.randint(1, 2)
    for _ in range(rng.randint(1, 4)):
        body: list[bytes] = []
        olds = news = 0
        for _ in range(rng.randint(1, 12)):
            marker = rng.choice(b"+ -+")
            body.append(bytes([marker]) + rng.choice(pieces))
            olds += marker != ord("+")
            news += marker != ord("-")
            if rng.random() < 0.1:
                body.append(b"\\ No newline at end of file")
        counts = f"-{old_line},{olds} +{new_line},{news}" if rng.random() < 0.8 else f"-{old_line} +{new_line}"
        hunks.append(f"@@ {counts} @@ def f():".encode() + b"\n" + b"\n".join(body))
        old_line += olds + rng.randint(1, 5)
        new_line += news + rng.randint(1, 5)
    return b"\n".join(hunks) + b"\n"


def test_added_lines_read_from_the_diff_text_are_those_of_its_parsed_hunks() -> None:
    """A file's added lines come straight from git's hunk text, every other line left unmade as an
    object (an appended file's hunks are then never parsed): the same numbers and texts, in the same
    order, as read from `parse_hunks` (a line's count running out, a byte-order mark, a cut line)."""
    rng = random.Random(5)
    for _ in range(400):
        raw = _random_hunk_text(rng)
        from_hunks = {
            line.new_line: line.text
            for hunk in parse_hunks(raw)
            for line in hunk.lines
            if line.kind is LineKind.ADDED and line.new_line is not None
        }
        assert list(added_lines_of(raw).items()) == list(from_hunks.items()), raw
    change = FileChange("a.py", "a.py", ChangeStatus.MODIFIED, raw_hunks=b"@@ -1,1 +1,2 @@\n a\n+b\n")
    assert change.added_lines() == {2: "b"} and change.added_line_count() == 1
    assert change.__dict__["_hunks_value"] == ()  # not parsed: nothing asked for the hunks
    assert [line.text for line in change.hunks[0].lines] == ["a", "b"]


def test_the_secrets_lens_asks_only_the_lines_a_search_of_the_whole_text_picks() -> None:
    """The secrets lens searches a file's added text once for a token's literal or a quoted value,
    and reads only those lines: every line a search of it alone could find a secret in is among them."""
    rng = random.Random(3)
    words = ["token", "API_KEY", "password", "x", " = ", ": ", "'", '"', "AKIA", "ghp_", "sk-", "PRIVATE KEY",
             "abcdefghijklmnop", "Zq9!xR2#vL7$wP4&", " ", "EXAMPLE", "\u2028"]
    lens = SecretsLens()
    for _ in range(300):
        lines = ["".join(rng.choice(words) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(0, 12))]
        picked = _candidate_lines(lines)
        assert picked == sorted(set(picked))
        for index, line in enumerate(lines):
            if index not in picked:
                assert lens._secret_in(line) is None, line
    # A line holding LF (never one from git's diff) is not cut by the join: every line is read.
    assert _candidate_lines(["a\nb", "c"]) == [0, 1]
    assert _candidate_lines(["x = 1", "TOKEN = 'Zq9xR2vL7wP4Kd8s'", "AKIA", "y"]) == [1, 2]


def test_added_comments_reads_only_the_lines_holding_the_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the languages with one comment marker, a line without it has no comment: only the lines
    holding it reach `comment_on`, with the same comments found as reading every line."""
    rng = random.Random(8)
    for path, language in (("a.py", Language.PYTHON), ("q.sql", Language.SQL), ("a.js", Language.JAVASCRIPT)):
        for _ in range(200):
            added = {number: "".join(rng.choice("ab #/*-!\"'") for _ in range(rng.randint(0, 12)))
                     for number in rng.sample(range(1, 60), rng.randint(0, 20))}
            change = FileChange(path, path, ChangeStatus.MODIFIED)
            change.__dict__["_added_lines"] = added  # the cached map added_lines copies
            every = [comment for number, text in sorted(added.items())
                     if (comment := comment_on(number, text, language)) is not None and comment.text]
            assert added_comments(change) == every
    read: list[str] = []
    real = comments_module.comment_on

    def counted(number: int, text: str, language: Language) -> Comment | None:
        read.append(text)
        return real(number, text, language)

    monkeypatch.setattr(comments_module, "comment_on", counted)
    change = FileChange("a.py", "a.py", ChangeStatus.MODIFIED)
    change.__dict__["_added_lines"] = {1: "x = 1", 2: "y = 2  # why", 3: "#!/bin/sh", 4: "z = 3"}
    assert added_comments(change) == [Comment(2, "why", False)]
    assert read == ["y = 2  # why", "#!/bin/sh"]


def test_literal_typo_reads_only_the_nodes_spanning_an_added_line() -> None:
    """The literal-typo rule reads the comparisons and `if` chains that span an added line: a set of
    literals lies within its node, so the findings are those of reading every node."""
    rng = random.Random(21)
    literals = ["'ready'", "'raedy'", "'readyy'", "'done'", "'dnoe'", "'pending'"]
    for _ in range(150):
        lines = []
        for _ in range(rng.randint(1, 6)):
            shape = rng.randrange(3)
            if shape == 0:
                lines.append(f"if state == {rng.choice(literals)}:\n    pass")
                for _ in range(rng.randint(0, 3)):
                    lines.append(f"elif state == {rng.choice(literals)}:\n    pass")
            elif shape == 1:
                lines.append(f"ok = (state == {rng.choice(literals)} or\n      state == {rng.choice(literals)})")
            else:
                lines.append(f"ok = state in ({rng.choice(literals)},\n  {rng.choice(literals)})")
        text = "\n".join(lines) + "\n"
        tree = ast.parse(text)
        count = len(text.splitlines())
        added = {number: "" for number in range(1, count + 1) if rng.random() < 0.3}
        every = {number: "" for number in range(1, count + 1)}
        found = list(_literal_findings(_python_sets(tree, added), text, "a.py", added))
        assert found == list(_literal_findings(_python_sets(tree, every), text, "a.py", added)), text


def test_a_secret_word_assigned_a_quoted_value_is_looked_for_before_the_whole_pattern() -> None:
    """`_secret_assigned` looks for a secret word followed by a quoted value before trying the whole
    assignment pattern (its leading `[\\w.-]*` tried from every character): the same answers as
    trying the whole pattern on every line that names a secret and quotes a value."""
    rng = random.Random(13)
    parts = [["", "x.", "my_", "cfg-", "\u017f"], ["token", "Api-Key", "PASSWORD", "pwd", "tok", "client_secret"],
             ["", "_id", "_value", ".x", "Name"], ["", "'", '"'], ["", " ", "\t"], ["=", ":=", ":", " ", "=="],
             ["", " "], ["", "b", "r", "f"], ["'", '"'], ["abcdefghijklmnop", "Zq9xR2vL7wP4kD8s", "K9fQ 2xL7mR4tW8zB",
             "short", "${SECRET_VALUE}"], ["'", '"', ""], ["", ", other", "  # note", " token = 'Zq9xR2vL7wP4kD8s'"]]
    lens = SecretsLens()
    picked = 0
    for _ in range(3000):
        line = "".join(rng.choice(choices) for choices in parts)
        plain = None
        if secrets_module._MAY_NAME_A_SECRET.search(line) and secrets_module._QUOTED_VALUE.search(line):
            for match in secrets_module._SECRET_ASSIGNMENT.finditer(line):
                value, name = match.group("value"), match.group("name")
                if (secrets_module._NOT_A_SECRET_NAME.search(name) or secrets_module._DESCRIBES_A_SECRET.search(name)
                        or secrets_module._PLACEHOLDER.search(value) or secrets_module.is_alphabet(value)):
                    continue
                if secrets_module.entropy(value) >= secrets_module.MIN_ENTROPY_BITS:
                    plain = name
                    break
        found = lens._secret_assigned(line)
        assert (found and found.kind) == (plain and f"high-entropy value assigned to `{plain}`"), line
        picked += found is not None
    assert picked > 50


# Top-level statements using what the runtime lens's tables hold, guarded or not, bound or not.
_RUNTIME_STATEMENTS = [
    "import tomllib", "from datetime import UTC", "import datetime\nstamp = datetime.datetime.now(datetime.UTC)",
    "import enum\nclass Color(enum.StrEnum):\n    RED = 'red'", "enum.StrEnum = enum.Enum",
    "if sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib",
    "try:\n    import tomllib\nexcept ImportError:\n    tomllib = None\nelse:\n    found = tomllib.loads('')",
    "def pairs(a, b):\n    return list(zip(a, b, strict=True))", "def strip(s):\n    return s.removeprefix('x')",
    "def kind(x):\n    match x:\n        case 1:\n            return 'one'\n    return 'other'",
    "def run(f):\n    try:\n        f()\n    except* ValueError:\n        pass",
    "def group():\n    raise ExceptionGroup('x', [ValueError()])", "from exceptiongroup import ExceptionGroup",
    "@functools.cache\ndef cached(x):\n    return x", "from itertools import batched",
    "def chunks(xs):\n    return itertools.batched(\n        xs, 2)", "value = 1", "def plain(x, timeout=1):\n    return x",
    "@dataclass(slots=True)\nclass Point:\n    x: int", "from typing import Self, override",
    "count = number.bit_count(); total = 2", "async def later(stream):\n    return await anext(aiter(stream))",
]


@pytest.mark.parametrize(("call", "found"), [
    ("anext(aiter(stream))", (3, 10, 0)),
    ("\uff41next(stream)", (3, 10, 0)),  # a fullwidth `a`: the parser folds the name to `anext` (NFKC)
    ("next(iter(stream))", None),
])
def test_the_runtime_lens_finds_a_builtin_however_its_name_is_spelled(call: str, found: tuple[int, ...] | None) -> None:
    """The lens skips the walk over every name when the text spells no builtin it knows; a name
    the parser folds from other code points is still found."""
    text = f"import os\n\n\nasync def later(stream):\n    return await {call}\n"
    lines = text.split("\n")
    added = {number: lines[number - 1] for number in range(4, 6)}
    change = FileChange("app/a.py", "app/a.py", ChangeStatus.MODIFIED)
    change.__dict__["_added_lines"] = added
    change.__dict__["stats"] = DiffStats(len(added), 0, 0)
    assert _newest_python_use(change, text, added) == found
    forget_parsed_trees()


@pytest.mark.parametrize("lowest", [(3, 8, 0), (3, 9, 0), (3, 10, 0), (3, 11, 0), (3, 12, 0)])
def test_the_runtime_lens_parses_a_whole_module_only_when_a_use_may_be_reported(lowest: tuple[int, int, int]) -> None:
    """The runtime lens asks the statements a change touches for the newest use on an added line,
    and parses and walks the whole module only when that use is newer than the declared minimum:
    the findings are those of always walking the whole module, for appended statements (their own
    tree) and for lines added anywhere (the whole module's)."""
    rng = random.Random(lowest[1])
    for case in range(200):
        statements = rng.sample(_RUNTIME_STATEMENTS, rng.randint(2, 9))
        kept = rng.randint(1, len(statements) - 1)
        old = "\n\n".join(statements[:kept]) + "\n"
        text = old + "\n" + "\n\n".join(statements[kept:]) + "\n"
        count = text.count("\n")
        lines = text.split("\n")
        appended = case % 2 == 0
        numbers = range(old.count("\n") + 1, count + 1) if appended else [
            number for number in range(1, count + 1) if rng.random() < 0.3
        ]
        added = {number: lines[number - 1] for number in numbers}
        change = FileChange("app/a.py", "app/a.py", ChangeStatus.MODIFIED)
        change.__dict__["_added_lines"] = added
        change.__dict__["stats"] = DiffStats(len(added), 0, 0 if appended else 1)
        plain = list(_python(text, "app/a.py", added, "pyproject.toml", ">=3.x", lowest))
        newest = _newest_python_use(change, text, added)
        shortcut = newest is not None and lowest < newest
        assert shortcut or not plain, text
        if shortcut:
            assert list(_python(text, "app/a.py", added, "pyproject.toml", ">=3.x", lowest)) == plain
        forget_parsed_trees()
