"""The DRY lens's compiled normalization (`_normalize.c`) gives what the patterns of
fingerprints.py give: the same blanked text and normalized lines, the same line-start window hashes,
on real code of every comment family and on random text and bytes (the branch's files are
untrusted: quotes left open, lone backslashes, invalid UTF-8, a byte-order mark)."""

from __future__ import annotations

import random
import re
import sysconfig
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication import fingerprints
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import (
    Normalized,
    anchor_hashes_of,
)
from reviewgate.reviewers.builtin.lenses.duplication.hashes import HASH_TYPECODE
from reviewgate.text import decode_text
from reviewgate.tomlfile import read_toml
from tests.test_dry_index import _duplicates

compiled = pytest.importorskip(
    "reviewgate.reviewers.builtin.lenses.duplication._normalize",
    reason="built only where a C compiler is at hand (.ci/run checks that it was)",
)

# One language of each comment family `_blank` knows: `#` and Python's strings; `//`, `/* */` and
# backquoted strings; none.
LANGUAGES = (Language.PYTHON, Language.JAVASCRIPT, Language.RUST)
REPOSITORY = Path(__file__).resolve().parent.parent


def _by_patterns(text: str, language: Language) -> tuple[str, list[str]]:
    blanked = fingerprints._blank(text, language)
    return blanked, fingerprints._normalized_blanked(blanked)


def _hashes_by_patterns(data: bytes, language: Language) -> list[int]:
    normalized = Normalized.of.__func__(Normalized, decode_text(data), language)  # type: ignore[attr-defined]
    return [int(value) for value in normalized.anchor_hashes(normalized.anchor_offsets())]


@pytest.fixture(autouse=True)
def _patterns_for_normalized(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Normalized.of` and `anchor_hashes_of` by the patterns unless a test asks for the compiled
    path: each side of a comparison is then what it says."""
    monkeypatch.setattr(fingerprints, "_compiled_normalize", None)
    monkeypatch.setattr(fingerprints, "_compiled_anchor_hashes", None)
    monkeypatch.setattr(fingerprints, "compiled_window_hashes", None)
    monkeypatch.setattr(fingerprints, "_compiled_renaming_share", None)


def _assert_same(text: str, language: Language) -> bool:
    """Whether the compiled path answered (it leaves code that is not all ASCII to the patterns);
    when it did, its answer is the patterns'."""
    family = fingerprints._family(language)
    answer = compiled.normalize(text, family)
    if answer is not None:
        blanked, lines = answer
        expected_blanked, expected_lines = _by_patterns(text, language)
        assert blanked == expected_blanked, text[:200]
        assert lines is None or lines == expected_lines, text[:200]
    answered = answer is not None and answer[1] is not None
    data = text.encode("utf-8", "surrogatepass")
    digests = compiled.anchor_hashes(data, family)
    assert digests is not None or not answered  # the bytes may answer more: a byte-order mark goes
    if digests is not None:
        assert array(HASH_TYPECODE, digests).tolist() == _hashes_by_patterns(data, language)
    return answered


def _corpus_texts() -> Iterator[str]:
    """Every file of every lens corpus case: real-shaped code in Python, JavaScript, TypeScript,
    Go, Java, C#, Kotlin, Rust, Ruby and PHP."""
    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)

    for path in sorted((REPOSITORY / "tests" / "corpus").glob("*.toml")):
        yield from (text for text in strings(read_toml(path)) if "\n" in text)


def test_the_corpus_normalizes_alike_in_every_family() -> None:
    texts = list(_corpus_texts())
    assert len(texts) > 500
    answered = sum(_assert_same(text, language) for text in texts for language in LANGUAGES)
    assert answered > 0.9 * 3 * len(texts)


def test_real_python_normalizes_alike() -> None:
    """This package and five packages of the standard library."""
    library = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted((REPOSITORY / "reviewgate").rglob("*.py"))
    for package in ("email", "json", "asyncio", "unittest", "logging"):
        paths += sorted((library / package).rglob("*.py"))
    assert len(paths) > 250  # 315 on Python 3.11, 285 on 3.12
    for path in paths:
        data = path.read_bytes()
        assert _assert_same(decode_text(data), Language.PYTHON) or not data.isascii()


# Random code: names, numbers, keywords, import lines, long lines, around comments and strings
# opened, filled with escapes, quotes of the other kinds and newlines, and closed (or not).
TOKENS = (
    "a", "b_", "$", "$x", "x1", "1", "0x1F", "1.5e3", ".", "(", ")", "{", "}", "=", ",", ":", " ", "\t", "\f",
    "\n", "\r\n", "if", "in", "int", "self", "return", "undefined", "import", "from", "package", "using",
    "#include", "require(", "export*from", "export{a,b}from", "export{", "é", "\u2028", "\ufeff", "x" * 120,
    "+" * 199, "+" * 200,
)
DELIMITERS = ('"', "'", "`", '"""', "'''", "#", "//", "/*", "*/", "*", "/", "\\")
INSIDE = ("\\", "\\\n", '\\"', "\\'", "\\`", "\n", "*", "/", "a", " ", '"', "'", "`", "é")
construct = st.tuples(
    st.sampled_from(DELIMITERS), st.lists(st.sampled_from(INSIDE), max_size=6).map("".join),
    st.sampled_from(("", *DELIMITERS)),
).map("".join)
texts = st.lists(st.one_of(st.sampled_from(TOKENS), construct), min_size=1, max_size=60).map("".join)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.sampled_from(LANGUAGES))
def test_random_text_normalizes_alike(text: str, language: Language) -> None:
    _assert_same(text, language)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(texts.map(str.encode), st.binary(max_size=6)), max_size=8).map(b"".join),
       st.sampled_from(LANGUAGES), st.booleans())
def test_random_bytes_hash_alike(data: bytes, language: Language, byte_order_mark: bool) -> None:
    """Invalid UTF-8 and a byte-order mark: `anchor_hashes_of` reads the bytes as decode_text does."""
    if byte_order_mark:
        data = b"\xef\xbb\xbf" + data
    digests = compiled.anchor_hashes(data, fingerprints._family(language))
    if digests is not None:
        assert array(HASH_TYPECODE, digests).tolist() == _hashes_by_patterns(data, language)


def test_code_whose_names_are_not_ascii_is_left_to_the_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside comments and strings, a name in another script: the Unicode patterns decide, and
    `anchor_hashes_of` still answers through them. Inside a string, the rest is ASCII: compiled."""
    named = "def prix(montant):\n    total_é = montant * 2\n    return total_é\n" * 3
    assert compiled.normalize(named, 1) == (named, None)  # blanked (nothing to blank), names left
    assert compiled.normalize('label = "café"  # prix\n', 1) == _by_patterns('label = "café"  # prix\n', Language.PYTHON)
    monkeypatch.setattr(fingerprints, "_compiled_anchor_hashes", compiled.anchor_hashes)
    data = named.encode()
    assert anchor_hashes_of(data, Language.PYTHON).tolist() == _hashes_by_patterns(data, Language.PYTHON)


def test_unclosed_comments_cost_their_length_not_its_square(monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch's file of 300,000 `/*` that never close: the pattern tries each to the end of the
    file (4 s for a tenth of such a file on the development machine, hours for all of it);
    the compiled blanking looks for the end once. With a name that is not ASCII, the Unicode
    patterns mark the names of the compiled blanking's text."""
    monkeypatch.setattr(fingerprints, "_compiled_normalize", compiled.normalize)
    text = "/*é\n" * 300_000
    started = time.process_time()
    normalized = Normalized.of(text, Language.JAVASCRIPT)
    assert time.process_time() - started < 5  # about 0.05 s
    assert normalized.lines == ("/*é",) * 300_000 + ("",) and normalized.blanked == text  # `é` is no name start
    short = "/*é" * 50 + "\nlet x = 1 /* a */\n"
    assert Normalized.of(short, Language.JAVASCRIPT).lines == tuple(_by_patterns(short, Language.JAVASCRIPT)[1])


def test_a_build_of_other_constants_is_left_out() -> None:
    """The window, the longest line kept, the name mark and the hash's base are the compiled
    module's own constants too: this build agrees, and one that disagrees (built before a change to
    fingerprints.py) is not used."""
    assert fingerprints.agrees_with_the_definition(compiled)
    stale = SimpleNamespace(WINDOW=32, MAX_LINE_LENGTH=compiled.MAX_LINE_LENGTH,
                            IDENTIFIER_MARK=compiled.IDENTIFIER_MARK, BASE=compiled.BASE)
    assert not fingerprints.agrees_with_the_definition(stale)
    assert not fingerprints.agrees_with_the_definition(object())


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown comment family 7"):
        compiled.normalize("a = 1\n", 7)
    with pytest.raises(TypeError):
        compiled.anchor_hashes("a = 1\n", 1)  # type: ignore[arg-type]


def test_the_lens_finds_the_same_copies_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end, the index and the changed files compiled or not: the same findings."""
    from testing.changes import DRY_COPY, DRY_JOBS

    by_patterns = _duplicates(tmp_path / "patterns", {"app/jobs.py": DRY_JOBS + DRY_COPY})
    monkeypatch.setattr(fingerprints, "_compiled_normalize", compiled.normalize)
    monkeypatch.setattr(fingerprints, "_compiled_anchor_hashes", compiled.anchor_hashes)
    monkeypatch.setattr(fingerprints, "_compiled_renaming_share", compiled.renaming_share)
    assert _duplicates(tmp_path / "compiled", {"app/jobs.py": DRY_JOBS + DRY_COPY}) == by_patterns
    assert by_patterns


def _shares_alike(mine: Normalized, mine_range: tuple[int, int], theirs: Normalized, their_range: tuple[int, int],
                  below: float, at_most: int) -> float | None:
    """The compiled renaming share of two ranges, asserted equal to `consistent_renaming` over the
    names read lazily; None when the compiled path left them to it (a text not all ASCII)."""
    mine_side, their_side = mine._names_side(*mine_range), theirs._names_side(*their_range)
    assert mine_side is not None and their_side is not None
    share = compiled.renaming_share(*mine_side, *their_side, below, at_most)
    expected = fingerprints.consistent_renaming(
        mine.iter_names_between(*mine_range), theirs.iter_names_between(*their_range), below=below, at_most=at_most)
    assert share is None or share == expected, (share, expected)
    return share


def _renamed(text: str, generator: random.Random) -> str:
    """`text` with some of its names renamed throughout (one renaming) and a few renamed once more
    (breaking it): copies that pass the renaming check and copies that fail it late."""
    names = sorted(set(re.findall(r"\b[a-z_]\w*\b", text)) - fingerprints.KEYWORDS)
    chosen = {name: f"{name}_{index}" for index, name in enumerate(generator.sample(names, len(names) // 3))}
    renamed = re.sub(r"\b[a-z_]\w*\b", lambda match: chosen.get(match.group(0), match.group(0)), text)
    for _ in range(generator.randint(0, 3)):
        at = generator.randrange(len(renamed))
        renamed = renamed[:at] + re.sub(r"\b[a-z_]\w*\b", "other", renamed[at:], count=1)
    return renamed


def test_renaming_shares_alike_on_real_code() -> None:
    """Regions of real modules against other modules, themselves shifted, and renamed copies, at
    every threshold the lens and its tests use, with and without the early stop."""
    library = Path(sysconfig.get_paths()["stdlib"])
    generator = random.Random(11)
    sources = [path.read_text(encoding="utf-8") for path in sorted(library.glob("*.py"))[:120]]
    sources = [source for source in sources if len(Normalized.of(source, Language.PYTHON).text) >= 2_000][:40]
    assert len(sources) == 40  # modules of some size (a version's first few may be stubs)
    files = [Normalized.of(source, Language.PYTHON) for source in sources]
    files += [Normalized.of(_renamed(source, generator), Language.PYTHON) for source in sources[:20]]
    answered = passing = 0
    for _ in range(3_000):
        index = generator.randrange(20)
        mine = files[index]
        theirs = generator.choice([files[index + 40], files[index + 40], generator.choice(files), mine])
        length = generator.randint(1, min(len(mine.text), len(theirs.text), 4_000))
        start = generator.randrange(len(mine.text) - length + 1)
        other = start if theirs is not mine else min(start + generator.randint(0, 2), len(mine.text) - length)
        other = min(other, len(theirs.text) - length) if generator.random() < 0.8 else generator.randrange(
            len(theirs.text) - length + 1)
        marks = mine.text.count(fingerprints.IDENTIFIER_MARK, start, start + length)
        share = _shares_alike(mine, (start, start + length), theirs, (other, other + length),
                              generator.choice([0.0, 0.5, 0.85, 1.0]), generator.choice([marks, 0, marks + 5]))
        answered += share is not None
        passing += share is not None and share >= 0.85
    assert answered == 3_000 and 300 < passing < 2_700


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, texts, st.sampled_from(LANGUAGES), st.floats(0, 1), st.integers(0, 3))
def test_random_names_share_alike(left: str, right: str, language: Language, below: float, extra: int) -> None:
    """Keywords touching names (`if$x`), `$`, digits, dropped lines, and names that are not ASCII
    (left to the Python path)."""
    mine, theirs = Normalized.of(left, language), Normalized.of(right, language)
    length = min(len(mine.text), len(theirs.text))
    marks = mine.text.count(fingerprints.IDENTIFIER_MARK, 0, length)
    share = _shares_alike(mine, (0, length), theirs, (len(theirs.text) - length, len(theirs.text)), below,
                          marks + extra if extra < 3 else 0)
    assert share is not None or not (mine.blanked.isascii() and theirs.blanked.isascii())


def test_bad_renaming_arguments_are_refused() -> None:
    normalized = Normalized.of("a = b\nc = d\n", Language.PYTHON)
    side = normalized._names_side(0, len(normalized.text))
    assert side is not None
    blanked, starts, kept, line, skip, left = side
    with pytest.raises(ValueError, match="do not agree"):
        compiled.renaming_share(blanked, starts[:-1], kept, line, skip, left, *side, 0.85, 2)
    with pytest.raises(ValueError, match="do not agree"):
        compiled.renaming_share(blanked, starts, kept, -1, skip, left, *side, 0.85, 2)
    # Line starts that are not the text's (past its end, going back) read nothing outside it.
    for bad in ([0, 99, 100, 101], [0, 6, 2, 13], [0, 4_000_000_000, 0, 0]):
        share = compiled.renaming_share(blanked, type(starts)(starts.typecode, bad), kept, line, skip, left, *side, 0.0, 0)
        assert 0.0 <= share <= 1.0
    with pytest.raises(TypeError):
        compiled.renaming_share(b"a = b", starts, kept, line, skip, left, *side, 0.85, 2)
    with pytest.raises(TypeError):
        compiled.renaming_share(*side, *side, 0.85)
    # A line past the text's last reads as no more names, not past the buffer.
    assert compiled.renaming_share(blanked, starts, kept, 50, 0, 3, *side, 0.0, 0) == 0.0


def test_renaming_maps_grow_past_any_count_they_are_given() -> None:
    """The maps grow as they fill, whatever `left` says: a count far past the names, or the sum
    `2 * left` overflows, answers as the Python path does, and 40,000 distinct names, renamed one
    to one, agree whole."""
    count = 40_000
    mine = Normalized.of("".join(f"a{index} = 0\n" for index in range(count)), Language.PYTHON)
    theirs = Normalized.of("".join(f"b{index} = 0\n" for index in range(count)), Language.PYTHON)
    mine_side, their_side = mine._names_side(0, len(mine.text)), theirs._names_side(0, len(theirs.text))
    assert mine_side is not None and their_side is not None
    assert compiled.renaming_share(*mine_side, *their_side, 0.0, 0) == 1.0
    for left in (2**62, 2**63 - 1):
        assert compiled.renaming_share(*mine_side[:5], left, *their_side, 0.0, 0) == 1.0


def test_a_count_past_exact_division_and_unaligned_starts_are_handled() -> None:
    """`at_most` over 2**53 (where the share would round apart from Python's) is left to the Python
    path; line starts in a buffer that is not 4-byte aligned read the same."""
    mine = Normalized.of("a = b\nc = d\n", Language.PYTHON)
    theirs = Normalized.of("c = c\nc = d\n", Language.PYTHON)
    mine_side, their_side = mine._names_side(0, len(mine.text)), theirs._names_side(0, len(theirs.text))
    assert mine_side is not None and their_side is not None
    assert compiled.renaming_share(*mine_side, *their_side, 1.0, 2**53 + 1) is None
    expected = fingerprints.consistent_renaming(iter("abcd"), iter("cccd"), below=1.0, at_most=2**53 + 1)
    assert fingerprints.renaming_share(mine, (0, len(mine.text)), theirs, (0, len(theirs.text)),
                                       below=1.0, at_most=2**53 + 1) == expected
    blanked, starts, kept, line, skip, left = mine_side
    unaligned = memoryview(bytearray(1) + bytes(starts))[1:].cast("B").cast(starts.typecode)
    assert compiled.renaming_share(blanked, unaligned, kept, line, skip, left, *their_side, 0.0, 4) == \
        compiled.renaming_share(*mine_side, *their_side, 0.0, 4)
