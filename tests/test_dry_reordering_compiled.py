"""The DRY lens's growth of a region over statements put in another order, compiled
(`_runs.reordered_growth`) and in Python (`reordering._growth`, its definition): the same growth
before and after every region of random files built from a few line shapes (so that lines repeat,
swap places and sit beside blank ones), at line boundaries and off them."""

from __future__ import annotations

import importlib
import random
from array import array
from collections.abc import Collection, Iterator
from itertools import accumulate

import pytest

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication import duplicates, reordering
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized, renaming_share
from reviewgate.reviewers.builtin.lenses.duplication.runs import Region
from reviewgate.reviewers.builtin.lenses.duplication.sizes import MIN_LINES

BUILT_ONLY_WITH_A_COMPILER = "built only where a C compiler is at hand (.ci/run checks that it was)"
needs_compiled = pytest.mark.skipif(reordering._compiled_growth is None, reason=BUILT_ONLY_WITH_A_COMPILER)
# Normalized lines: a few shapes, empty lines (blank, comment, import), one of wider characters.
SHAPES = ["\x01=\x01(\x01)", "\x01=\x01(\x01,\x01)", "\x01+=0", "return\x01", "if\x01:", "", "", "\x01.\x01=\x01",
          "\x01=\"é\""]


def _normalized(lines: list[str]) -> Normalized:
    starts = array("I", accumulate(map(len, lines[:-1]), initial=0))
    return Normalized("".join(lines), starts, tuple(lines), "")


def _swapped(rng: random.Random, lines: list[str]) -> list[str]:
    """`lines` with a few neighbouring blocks of up to four lines put in another order."""
    lines = list(lines)
    for _ in range(rng.randint(0, 4)):
        at, size = rng.randrange(len(lines)), rng.randint(2, 4)
        block = lines[at : at + size]
        rng.shuffle(block)
        lines[at : at + size] = block
    return lines


def _python_growth(region: Region, mine: Normalized, theirs: Normalized) -> tuple[int, int] | str:
    try:
        return reordering._growth(region, mine, theirs)
    except IndexError:
        return "reads past the lines"


@needs_compiled
def test_the_compiled_growth_over_reordered_lines_is_that_of_python() -> None:
    assert reordering._compiled_growth is not None
    rng = random.Random(5)
    grown = 0
    for _ in range(400):
        mine_lines = [rng.choice(SHAPES) for _ in range(rng.randint(1, 40))]
        theirs_lines = _swapped(rng, mine_lines) if rng.random() < 0.8 else [rng.choice(SHAPES) for _ in range(30)]
        mine, theirs = _normalized(mine_lines), _normalized(theirs_lines)
        for _ in range(30):
            if rng.random() < 0.7:  # whole lines, as the runs are cut
                first = rng.randrange(len(mine_lines))
                last = rng.randrange(first, len(mine_lines))
                start, end = mine.line_starts[first], mine.line_starts[last] + len(mine_lines[last])
                # Mostly where a shared run would put it: the same line on the other side.
                aligned = first < len(theirs_lines) and rng.random() < 0.8
                other_start = theirs.line_starts[first if aligned else rng.randrange(len(theirs_lines))]
            else:
                start = rng.randint(0, len(mine.text))
                end, other_start = rng.randint(start, len(mine.text) + 3), rng.randint(0, len(theirs.text) + 3)
            region = Region(start=start, end=end, other="other.py", other_start=other_start)
            expected = _python_growth(region, mine, theirs)
            compiled = reordering._compiled_growth(mine.lines, mine.line_starts, theirs.lines, theirs.line_starts,
                                                   start, end, other_start)
            assert compiled == expected or (compiled is None and expected == "reads past the lines"), (
                mine_lines, theirs_lines, region)
            grown += compiled is not None and compiled != (0, 0)
    assert grown > 300  # the cases grow regions, not only leave them


@needs_compiled
def test_the_compiled_growth_refuses_sides_that_do_not_add_up() -> None:
    assert reordering._compiled_growth is not None
    mine = _normalized(["\x01=\x01(\x01)", "return\x01"])
    with pytest.raises(ValueError, match="line starts"):
        reordering._compiled_growth(mine.lines, array("I", [0]), mine.lines, mine.line_starts, 0, 8, 0)
    with pytest.raises(TypeError, match="tuple of str"):
        reordering._compiled_growth((b"\x01=\x01(\x01)", 1), mine.line_starts, mine.lines, mine.line_starts, 0, 8, 0)


# Statements of a few shapes over a few names, so that lines of one shape sit near each other.
STATEMENTS = ["{0} = {1}({2})", "{0} = {1}( {2}, {0} )", "{0}.{1} = {2}", "return {0}", "if {0}:", "{0} += 1", "",
              "# {0} {1}", "{0} = '{1}'"]
NAMES = ["a", "b", "total", "value", "self", "_x", "$y", "é"]


def _source(rng: random.Random, count: int, names: list[str]) -> list[str]:
    shapes = STATEMENTS if rng.random() < 0.3 else rng.sample(STATEMENTS, 2)  # mostly two shapes: twins near
    return [rng.choice(shapes).format(*rng.sample(names, 3)) for _ in range(count)]


def _paired(mine: Normalized, mine_range: tuple[int, int], theirs: Normalized, their_range: tuple[int, int],
            below: float) -> object:
    try:
        return reordering.paired_renaming_share(mine, mine_range, theirs, their_range, below=below)
    except (IndexError, ValueError) as error:
        return type(error)


def test_the_compiled_pairing_is_that_of_python(monkeypatch: pytest.MonkeyPatch) -> None:
    if reordering._compiled_pairing is None:
        pytest.skip(BUILT_ONLY_WITH_A_COMPILER)
    compiled = reordering._compiled_pairing
    answers: list[object] = []

    def counted(*arguments: object) -> object:
        answers.append(compiled(*arguments))
        return answers[-1]

    rng = random.Random(7)
    # Mostly text not all ASCII, one case of five all ASCII; no region's start shifted.
    for mine, start, end, theirs, their_range in _renamed_regions(rng, 1500, mostly_ascii=False, shifted=False):
        below = rng.choice([0.0, 0.5, 0.85, 1.0])
        monkeypatch.setattr(reordering, "_compiled_pairing", counted)
        answer = _paired(mine, (start, end), theirs, their_range, below)
        monkeypatch.setattr(reordering, "_compiled_pairing", None)
        assert answer == _paired(mine, (start, end), theirs, their_range, below), (mine.lines, theirs.lines,
                                                                                  (start, end), their_range)
    # The cases pair lines in C, not only leave them or leave them to Python.
    assert sum(isinstance(answer, float) for answer in answers) > 250


def test_a_build_with_other_constants_is_left_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_runs = pytest.importorskip("reviewgate.reviewers.builtin.lenses.duplication._runs")
    compiled_normalize = pytest.importorskip("reviewgate.reviewers.builtin.lenses.duplication._normalize")
    try:
        monkeypatch.setattr(compiled_runs, "MAX_REORDERED_LINES", reordering.MAX_REORDERED_LINES + 1)
        monkeypatch.setattr(compiled_normalize, "PAIRING_REACH", reordering.PAIRING_REACH + 1)
        stale = importlib.reload(reordering)
        assert (stale._compiled_growth, stale._compiled_pairing) == (None, None)
    finally:
        monkeypatch.undo()
        importlib.reload(reordering)
    assert reordering._compiled_growth is compiled_runs.reordered_growth
    assert reordering._compiled_pairing is compiled_normalize.paired_renaming_share


def _judged(mine: Normalized, mine_range: tuple[int, int], theirs: Normalized, their_range: tuple[int, int],
            below: float) -> object:
    try:
        return reordering.renamed_consistently(mine, mine_range, theirs, their_range, below=below)
    except (IndexError, ValueError) as error:
        return type(error)


def _renamed_regions(rng: random.Random, cases: int, *, mostly_ascii: bool = True, shifted: bool = True,
                     ) -> Iterator[tuple[Normalized, int, int, Normalized, tuple[int, int]]]:
    """Regions of random files against the same files renamed (for the whole file, per line or not
    at all) with lines swapped, mostly at line boundaries and aligned; text not all ASCII in one
    file of five (in four of five unless `mostly_ascii`); the other side's start shifted in one
    region of ten when `shifted`."""
    for case in range(cases):
        names = (NAMES[:-1] if case % 5 else NAMES) if mostly_ascii else (NAMES if case % 5 else NAMES[:-1])
        mine_source = _source(rng, rng.randint(1, 30), names)
        renamings = rng.choice(["file", "none", "line"])
        renamed = dict(zip(names, rng.sample(names, len(names)), strict=True))
        theirs_source = []
        for line in mine_source:
            if renamings == "line":
                renamed = dict(zip(names, rng.sample(names, len(names)), strict=True))
            theirs_source.append(" ".join(renamed.get(word, word) if renamings != "none" else word
                                          for word in line.split(" ")))
        theirs_source = _swapped(rng, theirs_source) if rng.random() < 0.8 else _source(rng, 30, names)
        mine = Normalized.of("\n".join(mine_source), Language.PYTHON)
        theirs = Normalized.of("\n".join(theirs_source), Language.PYTHON)
        for _ in range(10):
            first = rng.randrange(len(mine_source))
            last = rng.randrange(first, len(mine_source))
            start, end = mine.line_starts[first], mine.line_starts[last] + len(mine.lines[last])
            if rng.random() < 0.2:  # anywhere, past the text's end too
                start, end = rng.randint(0, len(mine.text)), rng.randint(0, len(mine.text) + 3)
            other = first if first < len(theirs_source) and rng.random() < 0.8 else rng.randrange(len(theirs_source))
            their_range = (theirs.line_starts[other], theirs.line_starts[other] + end - start)
            if shifted and rng.random() < 0.1:
                their_range = (their_range[0] + rng.randint(0, 5), their_range[1])
            yield mine, start, end, theirs, their_range


def test_the_compiled_renaming_check_is_that_of_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both checks in one call, the offsets read in C (`_normalize.renamed_consistently`), against
    the Python path (the names in order, then paired): on regions whose names agree in order, only
    paired, or not."""
    if reordering._compiled_judging is None:
        pytest.skip(BUILT_ONLY_WITH_A_COMPILER)
    compiled = reordering._compiled_judging
    answers: list[object] = []
    in_order: list[bool] = []

    def counted(*arguments: object) -> object:
        answers.append(compiled(*arguments))
        return answers[-1]

    rng = random.Random(11)
    for mine, start, end, theirs, their_range in _renamed_regions(rng, 1500):
        below = rng.choice([0.0, 0.5, 0.85, 1.0])
        monkeypatch.setattr(reordering, "_compiled_judging", counted)
        answer = _judged(mine, (start, end), theirs, their_range, below)
        monkeypatch.setattr(reordering, "_compiled_judging", None)
        assert answer == _judged(mine, (start, end), theirs, their_range, below), (
            mine.lines, theirs.lines, (start, end), their_range, below)
        at_most = mine.text.count("\x01", start, end)
        in_order.append(answers[-1] is True and renaming_share(
            mine, (start, end), theirs, their_range, below=below, at_most=at_most) >= below)
    # Answered in C, each way, and agreeing both in order and only once lines were paired.
    assert sum(answer is False for answer in answers) > 4000
    assert sum(in_order) > 6000
    assert sum(answer is True for answer in answers) - sum(in_order) > 40


def _sized(mine: Normalized, region: Region, added: Collection[int], theirs: Normalized) -> object:
    try:
        return duplicates.sized_and_renamed(mine, region, added, theirs)
    except (IndexError, ValueError) as error:
        return type(error)


def test_the_compiled_size_and_renaming_checks_are_those_of_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """`duplicates.sized_and_renamed` in one compiled call (the region's lines of code and those
    added counted from the offsets, then the renaming) against its Python path, with the added
    lines a range (an appended file), a set, or a range with a step."""
    if reordering.compiled_sized_and_renamed is None:
        pytest.skip(BUILT_ONLY_WITH_A_COMPILER)
    compiled = reordering.compiled_sized_and_renamed
    answers: list[object] = []

    def counted(*arguments: object) -> object:
        answers.append(compiled(*arguments))
        return answers[-1]

    rng = random.Random(13)
    passed_the_size = 0
    for mine, start, end, theirs, their_range in _renamed_regions(rng, 1500):
        count = len(mine.lines)
        low = rng.randint(1, count)
        added: Collection[int] = rng.choice([
            range(low, rng.randint(low, count + 2)),
            {number for number in range(1, count + 1) if rng.random() < 0.7},
            range(1, count + 1, rng.choice([1, 2])),
        ])
        region = Region("theirs.py", start, end, their_range[0])
        monkeypatch.setattr(duplicates, "compiled_sized_and_renamed", counted)
        answer = _sized(mine, region, added, theirs)
        monkeypatch.setattr(duplicates, "compiled_sized_and_renamed", None)
        assert answer == _sized(mine, region, added, theirs), (mine.lines, theirs.lines, region, added)
        first, last = mine.line_at(start), mine.line_at(end - 1)
        passed_the_size += answers[-1] is not NotImplemented and sum(
            1 for number in range(first, last + 1) if mine.lines[number - 1] and number in added) >= MIN_LINES
    # Answered in C both ways, and by the renaming once past the size.
    assert sum(answer is False for answer in answers) > 10000
    assert sum(answer is True for answer in answers) > 300
    assert passed_the_size > 1200
