"""The shapes of a regular expression that backtrack exponentially in a backtracking engine
(JavaScript, Python's `re`, Java, .NET), read from its source: a repeated group whose body can
match the same text in more than one way.

Two shapes, each decided from the pattern alone:
- a repeated group whose every required part can be matched by one repeated character inside it:
  `(a+)+`, `(\\w+\\s?)*`, `([A-Z0-9_+-]+\\.?)*` (the separator is optional, so `aaaa` splits
  into the group's turns in 2^n ways);
- a repeated alternation of single characters two of which can match the same character:
  `(\\p{Extended_Pictographic}|\\p{Emoji_Component})+`, `(\\w|\\d)+`, `(.|\\s)*`.
Either is exponential only where something after the group can fail (`$`, a required character),
so a group at the very end of the pattern is not reported. Atomic groups `(?>…)` and possessive
quantifiers (`a++`) do not backtrack and are skipped.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from typing import NamedTuple

# Characters a single-character atom is tried against: what two atoms both match is their overlap.
_SAMPLES = tuple(chr(code) for code in range(32, 127)) + ("\t", "\n", "\u00a0", "\u00e9", "\u00c9", "\u0661", "\U0001f600", "\U0001f9b0", "\u200d", "\ufe0f")
_GENERAL_CATEGORIES = frozenset("LMNPSZC")
_WORD = frozenset(item for item in _SAMPLES if re.fullmatch(r"\w", item))


class Atom(NamedTuple):
    """One piece of a pattern: a single character (its samples), a group (its alternatives), or
    something that matches no character (an anchor, a lookaround)."""

    kind: str  # "char" | "group" | "zero" | "other"
    samples: frozenset[str] = frozenset()
    alternatives: tuple[tuple[Item, ...], ...] = ()
    atomic: bool = False
    # A zero-width piece: `\\b`, or a lookahead of one character (the samples it lets follow).
    boundary: bool = False
    follows: frozenset[str] | None = None


class Item(NamedTuple):
    atom: Atom
    least: int
    most: int | None  # None: unbounded
    possessive: bool
    end: int  # where the item (with its quantifier) ends in the pattern


class _Unreadable(Exception):
    pass


def exponential_shape(pattern: str, ignore_case: bool = False) -> str:
    """The repeated group (as written) that backtracks exponentially, or "" when none does or the
    pattern cannot be read."""
    try:
        parser = _Parser(pattern, ignore_case)
        alternatives = parser.alternatives()
    except (_Unreadable, IndexError, RecursionError):
        return ""
    return _find(pattern, alternatives, parser.starts)


def _find(pattern: str, alternatives: tuple[tuple[Item, ...], ...], starts: dict[int, int]) -> str:
    for sequence in alternatives:
        for item in sequence:
            if item.atom.kind != "group":
                continue
            repeated = item.most is None and not item.possessive and not item.atom.atomic
            if repeated and _ambiguous(item.atom) and _something_after(pattern, item.end) and not (
                _matches_anything(item.atom) and _nothing_required_after(pattern, item.end)
            ):
                return pattern[starts.get(item.end, 0):item.end]
            inner = _find(pattern, item.atom.alternatives, starts)
            if inner:
                return inner
    return ""


def _ambiguous(group: Atom) -> bool:
    alternatives = group.alternatives
    for sequence in alternatives:
        if _one_repeated_character_covers(sequence):
            return True
    singles = [sequence[0].atom.samples for sequence in alternatives
               if len(sequence) == 1 and sequence[0].atom.kind == "char" and sequence[0].least >= 1]
    if len(singles) == len(alternatives) >= 2:
        return any(first & second for index, first in enumerate(singles) for second in singles[index + 1:])
    return False


def _one_repeated_character_covers(sequence: tuple[Item, ...]) -> bool:
    """A repeated single character that can match every required part of the sequence: the
    group's turns can then split a run of it in many ways. Not where the run must end where
    the text stops matching it (a lookahead after it, `\\s+(?!\\s)`, `#+(?=[^#])`), nor where a
    turn starts at `\\b` and the run is of word characters (`(?:\\\\?\\b[a-z_]\\w*)+`): no turn can
    end or start inside the run (Prism's grammars, markdown's heading pattern)."""
    required = [item for item in sequence if item.least >= 1 and item.atom.kind != "zero"]
    starts_at_boundary = next((item.atom.boundary for item in sequence
                               if item.atom.boundary or item.least >= 1 and item.atom.kind != "zero"), False)
    for index, item in enumerate(sequence):
        if item.atom.kind != "char" or item.most is not None or item.possessive:
            continue
        following = sequence[index + 1].atom.follows if index + 1 < len(sequence) else None
        if following is not None and not following & item.atom.samples:
            continue  # the run stops only where its character does
        if starts_at_boundary and item.atom.samples <= _WORD:
            continue
        if all(part.atom.kind == "char" and part.atom.samples & item.atom.samples for part in required):
            return True
    return False


def _lookahead_follows(opening: str, alternatives: tuple[tuple[Item, ...], ...]) -> frozenset[str] | None:
    """The characters a one-character lookahead lets follow (`(?!\\s)`: all but spaces;
    `(?=[^#])`: all but `#`), or None for a lookbehind or a longer lookahead."""
    if opening not in ("?=", "?!") or not all(
        len(sequence) == 1 and sequence[0].atom.kind == "char" and (sequence[0].least, sequence[0].most) == (1, 1)
        for sequence in alternatives
    ):
        return None
    matched = frozenset().union(*(sequence[0].atom.samples for sequence in alternatives))
    return matched if opening == "?=" else frozenset(_SAMPLES) - matched


def _matches_anything(group: Atom) -> bool:
    """A group whose single characters together match any character (`(.|\\s)`): its turns can
    always reach the end of the text."""
    covered: frozenset[str] = frozenset()
    for sequence in group.alternatives:
        for item in sequence:
            if item.atom.kind == "char":
                covered |= item.atom.samples
    return covered >= frozenset(_SAMPLES)


def _nothing_required_after(pattern: str, end: int) -> bool:
    """Only optional characters and the end anchor follow (`'?$`): a group that can reach the end
    of any text makes the match succeed, so there is no failure to backtrack from."""
    return re.fullmatch(r"(?:(?:\\.|[^\\()\[\]|])[?*]\??|\$|\))*", pattern[end:]) is not None


def _something_after(pattern: str, end: int) -> bool:
    """Whether anything the match can fail on follows the group (not only closing parentheses)."""
    rest = re.sub(r"[)|*+?]|\{\d*,?\d*\}", "", pattern[end:])
    return bool(rest)


class _Parser:
    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.pattern = pattern
        self.position = 0
        self.ignore_case = ignore_case
        self.starts: dict[int, int] = {}  # a quantified item's end -> its start

    def alternatives(self) -> tuple[tuple[Item, ...], ...]:
        found: list[tuple[Item, ...]] = []
        current: list[Item] = []
        pattern = self.pattern
        while self.position < len(pattern) and pattern[self.position] != ")":
            if pattern[self.position] == "|":
                found.append(tuple(current))
                current = []
                self.position += 1
                continue
            start = self.position
            atom = self.atom()
            item = self.quantified(atom)
            self.starts[item.end] = start
            current.append(item)
        found.append(tuple(current))
        return tuple(found)

    def quantified(self, atom: Atom) -> Item:
        pattern, position = self.pattern, self.position
        least: int = 1
        most: int | None = 1
        if position < len(pattern) and pattern[position] in "*+?":
            quantifiers: dict[str, tuple[int, int | None]] = {"*": (0, None), "+": (1, None), "?": (0, 1)}
            least, most = quantifiers[pattern[position]]
            position += 1
        else:
            counted = re.compile(r"\{(\d+)(,(\d*))?\}").match(pattern, position)
            if counted:
                least = int(counted.group(1))
                most = least if counted.group(2) is None else (int(counted.group(3)) if counted.group(3) else None)
                position = counted.end()
        possessive = False
        if (least, most) != (1, 1) and position < len(pattern) and pattern[position] in "?+":
            possessive = pattern[position] == "+"
            position += 1
        self.position = position
        return Item(atom, least, most, possessive, position)

    def atom(self) -> Atom:
        pattern = self.pattern
        char = pattern[self.position]
        if char == "(":
            return self.group()
        if char == "[":
            end = self._class_end(self.position)
            text = pattern[self.position:end]
            self.position = end
            return Atom("char", self._samples(text))
        if char == "\\":
            return self.escape()
        self.position += 1
        if char in "^$":
            return Atom("zero")
        if char == ".":
            return Atom("char", frozenset(item for item in _SAMPLES if item != "\n"))
        return Atom("char", self._samples(re.escape(char)))

    def group(self) -> Atom:
        pattern = self.pattern
        self.position += 1
        lookaround = re.compile(r"\?(?:=|!|<=|<!)").match(pattern, self.position)
        atomic = pattern.startswith("?>", self.position)
        if lookaround:
            self.position = lookaround.end()
        else:
            opening = re.compile(r"\?(?:P?<[A-Za-z_]\w*>|'[A-Za-z_]\w*'|:|>|[a-zA-Z-]+:)?").match(pattern, self.position)
            if opening and opening.group(0) == "?":
                raise _Unreadable  # an inline flag group, `(?i)`: not read
            if opening:
                self.position = opening.end()
        alternatives = self.alternatives()
        if self.position >= len(pattern):
            raise _Unreadable
        self.position += 1  # the `)`
        if lookaround:
            return Atom("zero", follows=_lookahead_follows(lookaround.group(0), alternatives))
        return Atom("group", alternatives=alternatives, atomic=atomic)

    def escape(self) -> Atom:
        pattern = self.pattern
        following = pattern[self.position + 1]
        if following in "bBAzZG":
            self.position += 2
            return Atom("zero", boundary=following == "b")
        if following.isdigit() and following != "0" or following == "k":
            self.position += 2
            return Atom("other")
        if following in "pP":
            named = re.compile(r"\\[pP]\{([^}]*)\}").match(pattern, self.position)
            if not named:
                raise _Unreadable
            self.position = named.end()
            return Atom("char", _property_samples(named.group(1), following == "P"))
        counted = re.compile(r"\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|u\{[0-9A-Fa-f]+\}|c[A-Za-z]|0[0-7]{0,2})").match(
            pattern, self.position
        )
        end = counted.end() if counted else self.position + 2
        text = pattern[self.position:end]
        self.position = end
        return Atom("char", self._samples(re.sub(r"\\u\{([0-9A-Fa-f]+)\}", lambda m: chr(int(m.group(1), 16)), text)))

    def _class_end(self, start: int) -> int:
        pattern, index = self.pattern, start + 1
        if index < len(pattern) and pattern[index] == "^":
            index += 1
        if index < len(pattern) and pattern[index] == "]":
            index += 1
        while index < len(pattern) and pattern[index] != "]":
            index += 2 if pattern[index] == "\\" else 1
        if index >= len(pattern):
            raise _Unreadable
        return index + 1

    def _samples(self, text: str) -> frozenset[str]:
        return _matching(text, self.ignore_case)


@functools.lru_cache(maxsize=4096)
def _matching(text: str, ignore_case: bool) -> frozenset[str]:
    """The samples a single-character piece matches. A class Python cannot read (a `\\p{…}`
    inside brackets) counts as matching every sample that is not ASCII: it may overlap."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a `[[` Python would one day read as a nested set
            compiled = re.compile(text, re.IGNORECASE if ignore_case else 0)
    except (re.error, OverflowError):
        return frozenset(item for item in _SAMPLES if not item.isascii())
    return frozenset(item for item in _SAMPLES if compiled.fullmatch(item))


def _property_samples(name: str, negated: bool) -> frozenset[str]:
    """A `\\p{…}` property: a general category (`L`, `Lu`, `Nd`, `Letter`) by its samples; any
    other (a script, an emoji property) as every sample outside ASCII letters and digits, so two
    such properties count as overlapping: their code points are not in the text."""
    value = name.split("=", 1)[-1]
    long_names = {"Letter": "L", "Number": "N", "Punctuation": "P", "Symbol": "S", "Separator": "Z", "Mark": "M"}
    category = long_names.get(value, value)
    if category and category[0] in _GENERAL_CATEGORIES and len(category) <= 2 and category.isalpha():
        matched = frozenset(item for item in _SAMPLES if unicodedata.category(item).startswith(category))
    else:
        matched = frozenset(item for item in _SAMPLES if not item.isascii() or item in "#*")
    return frozenset(_SAMPLES) - matched if negated else matched
