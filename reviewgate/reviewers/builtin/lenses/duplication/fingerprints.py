"""Normalized token streams and their fingerprints, for finding copied code under renames.

Every token becomes one character class: identifiers a mark, numbers `0`, strings `"`, keywords
and operators stay themselves; comments, whitespace and import lines go. Two pieces of code
with the same shape then have the same normalized text whatever their names and literals.

Fingerprints are hashes of K-character windows of that text. The repository side keeps only the
windows that start at a line start (a deterministic subsample, like winnowing's, that is small and
fast to build); the changed side hashes every window inside added lines. Any shared run that
covers a repository line start plus K characters is therefore found, and the run is then grown to
its full extent (runs.py).
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import itemgetter, mul

from reviewgate.reviewers.builtin.comments import defused_comment_openers
from reviewgate.reviewers.builtin.language_table import C_LIKE, HASH_COMMENT, Language
from reviewgate.reviewers.builtin.lenses.duplication.hashes import (
    BASE,
    HASH_TYPECODE,
    CompiledWindowHashes,
    Hashes,
    window_hashes,
)
from reviewgate.text import decode_text

# Window length in normalized characters (about one token each): long enough that common idioms
# (`for a in a:`, `if a is None: return`) do not match on their own.
WINDOW = 40
# The version of what a file's fingerprints are (normalization, window, hash): part of the key of
# every stored index entry, so entries made by another version are never read. Bump it with any
# change to how a file's fingerprints come out of its bytes.
FINGERPRINT_FORMAT = 3

_KEYWORDS = (
    "if else elif for while do return break continue try except finally catch throw throws raise with "
    "as def class func function fn interface struct type var let const new delete import from package "
    "public private protected static final async await yield lambda in of is not and or None True False "
    "null nil true false undefined this self super switch case default go defer select range map chan "
    "void int string bool"
).split()
KEYWORDS = frozenset(_KEYWORDS)  # kept as written by the normalisation, not made a name mark
# Comments (the `comment` group), then strings. Every branch starts with its literal first
# character and no group comes before it, so the engine jumps from one `#`, quote or slash to the
# next instead of trying the whole pattern at every character (three times faster). Each body is
# written unrolled, a run of plain characters then an escape (or a lone quote, a lone `*`) and
# another run, instead of one character at a time through an alternation (`(?:[^"\\\n]|\\.)*`) or
# a lazy `[\s\S]*?`: the same matches (a triple-quoted string still ends at the first `"""`, a
# block comment at the first `*/`) in half the time over a repository's code.
_HASH_LANGUAGE_PARTS = re.compile(
    r"#(?P<comment>[^\n]*)"
    r"|\"\"\"[^\"]*(?:\"(?!\"\")[^\"]*)*\"\"\"|'''[^']*(?:'(?!'')[^']*)*'''"
    r"|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
)
_C_LANGUAGE_PARTS = re.compile(
    r"/(?P<comment>/[^\n]*|\*[^*]*\*+(?:[^/*][^*]*\*+)*/)"
    r"|`[^`\\]*(?:\\.[^`\\]*)*`|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
)


def _whole_matches(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`pattern` with one group, the whole match: `split` then returns the text between matches
    and each match in turn."""
    return re.compile("(" + pattern.pattern.replace("(?P<comment>", "(?:") + ")")


_HASH_LANGUAGE_SPLIT = _whole_matches(_HASH_LANGUAGE_PARTS)
_C_LANGUAGE_SPLIT = _whole_matches(_C_LANGUAGE_PARTS)
# What a comment or a string leaves before its newlines, by its first character: a comment (`#`,
# `/`) nothing, a string `"`.
_BLANKED_BY_FIRST = {"#": "", "/": "", '"': '"', "'": '"', "`": '"'}


def _alternation(words: list[str]) -> str:
    """A regular expression matching exactly `words`, as a tree of shared prefixes: the engine
    then tries a handful of branches at each word start instead of every keyword in turn (the
    identifier pattern runs over every indexed file; this is a third of its time)."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rests in sorted(by_first.items()):
        longer = [rest for rest in rests if rest]
        tail = _alternation(longer) if longer else ""
        if longer and "" in rests:
            tail = f"(?:{tail})?"
        branches.append(re.escape(first) + tail)
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


# `\b(?!keyword\b)[A-Za-z_$][\w$]*`, written first character first: the boundary and keyword checks
# move into a one-character lookbehind that starts where the identifier does, so the engine skips
# to the next letter, `_` or `$` instead of trying the pattern at every character (30% faster).
_IDENTIFIER = re.compile(r"[A-Za-z_$](?<=\b(?!" + _alternation(_KEYWORDS) + r"\b).)[\w$]*")
# The same pattern for text that is all ASCII (almost every file): `\w` and `\b` then mean what
# they mean in Unicode, and the engine tests ASCII classes faster (a tenth of the normalization).
_ASCII_IDENTIFIER = re.compile(_IDENTIFIER.pattern, re.ASCII)
# `\b\d`, written digit first (a digit is a word character, so the boundary means no word character
# before it) for the same reason as the comment patterns: the engine then skips to the next digit.
_NUMBER = re.compile(r"\d(?<!\w\d)[\w.]*")
_ASCII_NUMBER = re.compile(_NUMBER.pattern, re.ASCII)
# What an identifier becomes: a character no keyword contains, so marks can be counted.
IDENTIFIER_MARK = "\x01"
_OFFSET_TYPE = "I" if array("I").itemsize == 4 else "L"  # 4-byte unsigned: an offset
# Spaces and tabs inside lines go (newlines stay: lines must line up). A deletion table for
# str.translate, which runs in C over ASCII text eight times faster than a pattern's substitution.
_NO_SPACE = str.maketrans("", "", " \t\r\f\v")
_IMPORT_START = r"(?:import|from|package|using|#include|require\(|export(?:\*|\{[^}\n]*\})from)"
# Minified or generated lines carry no reviewable shape and would dominate the index.
MAX_LINE_LENGTH = 400
# The lines left out of the normalized text (an import, or longer than MAX_LINE_LENGTH), emptied in
# one pass over the whole text instead of a test per line (a sixth of the normalization of a file).
# Each starts after a newline (the text is given one in front): a literal first character, which
# the engine jumps to, where a multi-line `^` was tried at every character (40% faster).
_DROPPED_LINE = re.compile(rf"\n(?:{_IMPORT_START}[^\n]*|[^\n]{{{MAX_LINE_LENGTH + 1},}})")

# The normalization compiled (`_normalize.c`, built with the package where a C compiler is at hand):
# the same lines as the patterns here, which stay its definition and the path where it is missing.
_compiled_normalize: Callable[[str, int], tuple[str, list[str] | None] | None] | None = None
_compiled_anchor_hashes: Callable[[bytes, int], bytes | None] | None = None
compiled_window_hashes: CompiledWindowHashes | None = None  # hashes.window_hashes for WINDOW
_compiled_renaming_share: Callable[..., float | None] | None = None
_compiled_consecutive_offsets: Callable[[int, int], bytes] | None = None
_compiled_line_starts: Callable[[str], bytes | None] | None = None


def agrees_with_the_definition(compiled: object) -> bool:
    """Whether a compiled normalization was built with this module's constants: one built from
    another version of them (a stale build) is left out, not trusted."""
    built_with = tuple(getattr(compiled, name, None) for name in ("WINDOW", "MAX_LINE_LENGTH", "IDENTIFIER_MARK", "BASE"))
    return built_with == (WINDOW, MAX_LINE_LENGTH, ord(IDENTIFIER_MARK), BASE)


try:
    from reviewgate.reviewers.builtin.lenses.duplication import _normalize
except ImportError:
    pass
else:
    if agrees_with_the_definition(_normalize):
        _normalize.set_keywords(_KEYWORDS)
        _compiled_normalize, _compiled_anchor_hashes = _normalize.normalize, _normalize.anchor_hashes
        _compiled_renaming_share = _normalize.renaming_share
        compiled_window_hashes = getattr(_normalize, "window_hashes", None)  # None in a build older than it
        _compiled_consecutive_offsets = getattr(_normalize, "consecutive_offsets", None)
        _compiled_line_starts = getattr(_normalize, "line_starts", None)


def _blank_parts(text: str, pattern: re.Pattern[str]) -> str:
    """Comments disappear and strings become `"`, keeping every newline so lines still line up.
    `pattern` is a `_whole_matches` one; each replacement is made by C-level maps over the matches
    `split` returns instead of a Python call per match (a repository's code has a comment or a
    string every few lines: those calls were a quarter of its normalization)."""
    pieces = pattern.split(text)
    matches = pieces[1::2]
    if matches:
        pieces[1::2] = map(
            str.__add__,
            map(_BLANKED_BY_FIRST.__getitem__, map(itemgetter(0), matches)),
            map(mul, repeat("\n"), map(str.count, matches, repeat("\n"))),
        )
    return "".join(pieces)


def _blank(text: str, language: Language) -> str:
    if language in HASH_COMMENT:
        return _blank_parts(text, _HASH_LANGUAGE_SPLIT)
    if language in C_LIKE:
        defused, stand_in = defused_comment_openers(text)
        blanked = _blank_parts(defused, _C_LANGUAGE_SPLIT)
        return blanked if stand_in is None else blanked.replace(stand_in, "*")
    return text


def _normalized_blanked(blanked: str) -> list[str]:
    if blanked.isascii():
        text = _ASCII_NUMBER.sub("0", _ASCII_IDENTIFIER.sub(IDENTIFIER_MARK, blanked))
    else:
        text = _NUMBER.sub("0", _IDENTIFIER.sub(IDENTIFIER_MARK, blanked))
    return _DROPPED_LINE.sub("\n", "\n" + text.translate(_NO_SPACE)).split("\n")[1:]


def _family(language: Language) -> int:
    """Which comments and strings `_blank` knows in `language`, as the compiled path names them."""
    return 1 if language in HASH_COMMENT else 2 if language in C_LIKE else 0


def _blanked_and_normalized(text: str, language: Language) -> tuple[str, list[str]]:
    """`_blank`, then `_normalized_blanked`: compiled where it was built (the same lines in a
    seventh of the time), the names and numbers of code that is not all ASCII left to the Unicode
    patterns. The patterns alone where it was not built: slower, and as linear (`defused_comment_openers`)."""
    if _compiled_normalize is not None:
        done = _compiled_normalize(text, _family(language))
        if done is not None:
            blanked, lines = done
            return blanked, lines if lines is not None else _normalized_blanked(blanked)
    blanked = _blank(text, language)
    return blanked, _normalized_blanked(blanked)


def normalized_lines(text: str, language: Language) -> list[str]:
    """One normalized string per line of `text` (empty for blank, comment and import lines)."""
    return _blanked_and_normalized(text, language)[1]


def literals(text: str, language: Language) -> list[str]:
    """The strings of `text`, then its numbers, each in order: the data of a table, whatever its
    names are."""
    pattern = _HASH_LANGUAGE_PARTS if language in HASH_COMMENT else _C_LANGUAGE_PARTS if language in C_LIKE else None
    searched, stand_in = defused_comment_openers(text) if language in C_LIKE else (text, None)
    strings = [] if pattern is None else [
        match.group(0) for match in pattern.finditer(searched) if match.group("comment") is None
    ]
    if stand_in is not None:
        strings = [string.replace(stand_in, "*") for string in strings]
    return strings + _NUMBER.findall(_blank(text, language))


def consistent_renaming(left: Iterable[str], right: Iterable[str], *, below: float = 0.0, at_most: int = 0) -> float:
    """The share of aligned identifier pairs that agree with one renaming (a one-to-one map), as a
    renamed copy has: `total -> amount` everywhere. Code that only shares a shape maps one name to
    several (Brenda Baker's parameterized matching, 1993). A name kept as it is always agrees: a
    copy renames what it binds (`value -> amount`) and keeps the names it uses from elsewhere, so
    `self.value = value` becomes `self.value = amount`.

    Given `at_most` (no fewer than `left` holds) and `below`, it stops at the first disagreeing
    pair after which the share cannot reach `below` and answers a share under it: the names need
    not all be read (`Normalized.iter_names_between`) when most regions of a shape fail half way."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    agreeing = disagreeing = size = 0
    theirs_in_turn = iter(right)
    for mine in left:
        size += 1
        theirs = next(theirs_in_turn, None)
        if theirs is None:
            continue  # pairs end with the shorter side; the share is still of all of `left`
        if mine == theirs or (
            forward.setdefault(mine, theirs) == theirs and backward.setdefault(theirs, mine) == mine
        ):
            agreeing += 1
        else:
            disagreeing += 1
            # At most `at_most - disagreeing` of at most `at_most` names can agree: the share is
            # at most that, which division rounds monotonically.
            if at_most and (at_most - disagreeing) / at_most < below:
                return (at_most - disagreeing) / at_most
    return agreeing / max(size, 1)


def renaming_share(mine: Normalized, mine_range: tuple[int, int], theirs: Normalized, their_range: tuple[int, int],
                   *, below: float, at_most: int) -> float:
    """`consistent_renaming` of the names behind the marks of `mine.text[mine_range]` and
    `theirs.text[their_range]`, read lazily and given up on as it does. Compiled (`_normalize.c`:
    the names compared as spans of the blanked texts, never made strings; most regions a change of
    many same-shaped functions is judged on fail here) where built and both blanked texts are
    ASCII."""
    if _compiled_renaming_share is not None:
        share = _compiled_renaming_share(*mine._names_side(*mine_range), *theirs._names_side(*their_range), below, at_most)
        if share is not None:
            return share
    return consistent_renaming(mine.iter_names_between(*mine_range), theirs.iter_names_between(*their_range),
                               below=below, at_most=at_most)


@dataclass(frozen=True)
class Normalized:
    """A file's normalized text as one string, with where each source line starts in it."""

    text: str
    line_starts: array[int]  # offset in `text` of source line i+1 (4 bytes a line, where a tuple took 36)
    lines: tuple[str, ...]
    # The source with comments and strings blanked: the names behind a region's marks are read from
    # here on demand, instead of blanking and tokenizing every candidate file a second time.
    blanked: str

    @classmethod
    def of(cls, source: str, language: Language) -> Normalized:
        blanked, lines = _blanked_and_normalized(source, language)
        starts = array(_OFFSET_TYPE, accumulate(map(len, lines[:-1]), initial=0))
        return cls("".join(lines), starts, tuple(lines), blanked)

    @functools.cached_property
    def _blanked_starts(self) -> array[int]:
        """Where each line of `blanked` starts, and its end: 4 bytes a line, only for the files a
        region is checked against."""
        starts = array("I")
        compiled = None if _compiled_line_starts is None else _compiled_line_starts(self.blanked)
        if compiled is not None:  # without a Python int, nor a string, for each line
            starts.frombytes(compiled)
            return starts
        starts.append(0)
        starts.extend(accumulate(map((1).__add__, map(len, self.blanked.split("\n")))))  # each line and its LF
        return starts

    def blanked_line(self, index: int) -> str:
        """Source line `index` (0-based) with its comments and strings blanked, its indentation kept."""
        return self.blanked[self._blanked_starts[index] : self._blanked_starts[index + 1] - 1]

    def marks_before(self, offset: int) -> int:
        """How many identifiers the normalized text holds before `offset`."""
        return self.text.count(IDENTIFIER_MARK, 0, offset)

    def names_between(self, start: int, end: int) -> list[str]:
        """The identifiers behind the marks of `text[start:end]`, in order."""
        return list(self.iter_names_between(start, end))

    def _names_from(self, start: int, end: int) -> tuple[int, int, int]:
        """Where the names behind the marks of `text[start:end]` are read from: the line holding
        `start` (0-based), how many of its names come before it, and how many to read."""
        index = bisect.bisect_right(self.line_starts, start) - 1  # line_starts[0] is 0: never -1
        skip = self.text.count(IDENTIFIER_MARK, self.line_starts[index], start)
        return index, skip, self.text.count(IDENTIFIER_MARK, start, end)

    @functools.cached_property
    def _kept_lines(self) -> bytes:
        """1 for each line whose normalized text is not empty (the lines that hold marks), else 0."""
        return bytes(map(bool, self.lines))

    def _names_side(self, start: int, end: int) -> tuple[object, ...]:
        """`renaming_share`'s arguments for the names of `text[start:end]`: the blanked text has a
        line for each normalized line (normalizing keeps every newline), as `iter_names_between`
        reads them too."""
        return (self.blanked, self._blanked_starts, self._kept_lines, *self._names_from(start, end))

    @functools.cached_property
    def judging_side(self) -> tuple[object, ...]:
        """`_normalize.renamed_consistently`'s arguments for this file, made once: it reads a
        region's lines and names from them itself."""
        return (self.text, self.lines, self.line_starts, self.blanked, self._blanked_starts, self._kept_lines)

    def pairing_side(self, start: int, end: int) -> tuple[object, ...]:
        """`_normalize.paired_renaming_share`'s arguments for the region `text[start:end]`."""
        return (self.lines, self.line_starts, self.blanked, self._blanked_starts, self._kept_lines, start, end)

    def iter_names_between(self, start: int, end: int) -> Iterator[str]:
        """`names_between`, read a line at a time as they are asked for. Identifiers never span
        lines, so the kept source lines the range touches hold exactly those names."""
        index, skip, left = self._names_from(start, end)
        while left > 0 and index < len(self.lines):
            if self.lines[index]:  # blank, comment, import and over-long lines hold no marks
                line_start = self._blanked_starts[index]
                names = _IDENTIFIER.findall(self.blanked, line_start, self._blanked_starts[index + 1] - 1)
                if skip:
                    skipped = min(skip, len(names))
                    names, skip = names[skipped:], skip - skipped
                names = names[:left]
                left -= len(names)
                yield from names
            index += 1

    def line_names(self, index: int) -> list[str]:
        """`names_between` over the whole of line `index` (0-based, a line holding normalized text):
        one search of its blanked line, without locating the line by bisection and counting its
        marks before and inside the span first (the reordered-statement pass asks it of each line
        of 4,000 regions at +304k appended)."""
        marks = self.lines[index].count(IDENTIFIER_MARK)
        if not marks:
            return []
        names = _IDENTIFIER.findall(self.blanked, self._blanked_starts[index], self._blanked_starts[index + 1] - 1)
        if len(names) < marks:  # never for a line normalized here; read on as names_between does
            start = self.line_starts[index]
            return self.names_between(start, start + len(self.lines[index]))
        return names[:marks]

    def line_at(self, offset: int) -> int:
        """The 1-based source line whose normalized text holds `offset`."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        while index + 1 < len(self.lines) and not self.lines[index]:
            index += 1  # an empty line shares its offset with the next non-empty one
        return index + 1

    @functools.cached_property
    def _bytes(self) -> bytes:
        """The text one byte a character (`?` for any other than ASCII), so offsets stay the same,
        as its windows are hashed (hashes.py: stable across processes where `hash()` is not, so the
        hashes can be stored). Two windows sharing a hash are still compared as text."""
        return self.text.encode("ascii", "replace")

    def anchor_offsets(self) -> list[int]:
        """Where the window at each non-empty line start begins (a whole window's length before the
        end). The non-empty lines are picked and the tail cut in C: starts only grow."""
        starts = list(compress(self.line_starts, self.lines))
        del starts[bisect.bisect_right(starts, len(self.text) - WINDOW) :]
        return starts

    def anchor_hashes(self, offsets: list[int]) -> Hashes:
        """The hash of the window at each of `offsets` (`anchor_offsets`)."""
        return window_hashes(self._bytes, offsets, WINDOW, compiled_window_hashes)

    def windows_in(self, line_numbers: Collection[int]) -> tuple[Hashes, Hashes]:
        """The hashes and the offsets (two arrays, side by side) of every window starting inside
        the given source lines. The normalized lines follow each other with nothing between them,
        so the windows of a stretch of adjacent lines are one stretch of offsets (an appended
        file's added lines are one stretch)."""
        lines, line_starts = self.lines, self.line_starts
        last = len(self.text) - WINDOW + 1
        offsets = array(HASH_TYPECODE)
        for first, final in _stretches(line_numbers, len(lines)):
            start, stop = line_starts[first - 1], min(line_starts[final - 1] + len(lines[final - 1]), last)
            if _compiled_consecutive_offsets is not None:  # without a Python int for each window
                offsets.frombytes(_compiled_consecutive_offsets(start, stop))
            else:
                offsets.extend(range(start, stop))
        return window_hashes(self._bytes, offsets, WINDOW, compiled_window_hashes), offsets


def anchor_hashes_of(data: bytes, language: Language) -> Hashes:
    """The hashes of a file's line-start windows from its bytes, as `Normalized.of(decode_text(data),
    language)` gives them: compiled without making the file's text (a cold run's index of every
    file of the tree, in a tenth of the time), else through `Normalized`."""
    compiled = None if _compiled_anchor_hashes is None else _compiled_anchor_hashes(data, _family(language))
    if compiled is not None:
        hashes = array(HASH_TYPECODE)
        hashes.frombytes(compiled)
        return hashes
    normalized = Normalized.of(decode_text(data), language)
    return normalized.anchor_hashes(normalized.anchor_offsets())


def _stretches(line_numbers: Collection[int], count: int) -> Iterator[tuple[int, int]]:
    """The first and last line of each stretch of adjacent `line_numbers` among lines 1..count."""
    if isinstance(line_numbers, range) and line_numbers.step == 1:
        first, final = max(line_numbers.start, 1), min(line_numbers.stop - 1, count)
        if first <= final:
            yield first, final
        return
    numbers = sorted(number for number in line_numbers if 1 <= number <= count)
    first = 0
    for index, number in enumerate(numbers):
        if index + 1 == len(numbers) or numbers[index + 1] != number + 1:
            yield numbers[first], number
            first = index + 1
