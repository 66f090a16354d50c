"""Normalized token streams and their fingerprints, for finding copied code under renames.

Every token becomes one character class: identifiers a mark, numbers `0`, strings `"`, keywords
and operators stay themselves; comments, whitespace and import lines go. Two pieces of code
with the same shape then have the same normalized text whatever their names and literals.

Fingerprints are hashes of K-character windows of that text. The repository side keeps only the
windows that start at a line start (a deterministic subsample, like winnowing's, that is small and
fast to build in pure Python); the changed side hashes every window inside added lines. Any
shared run that covers a repository line start plus K characters is therefore found, and the run
is then grown character by character to its full extent.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from reviewgate.reviewers.builtin.common import C_LIKE, HASH_COMMENT, Language

# Window length in normalized characters (about one token each): long enough that common idioms
# (`for a in a:`, `if a is None: return`) do not match on their own.
WINDOW = 40

_KEYWORDS = (
    "if else elif for while do return break continue try except finally catch throw throws raise with "
    "as def class func function fn interface struct type var let const new delete import from package "
    "public private protected static final async await yield lambda in of is not and or None True False "
    "null nil true false undefined this self super switch case default go defer select range map chan "
    "void int string bool"
).split()
_HASH_LANGUAGE_PARTS = re.compile(
    r"(?P<comment>#[^\n]*)|(?P<string>\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
)
_C_LANGUAGE_PARTS = re.compile(
    r"(?P<comment>//[^\n]*|/\*[\s\S]*?\*/)|(?P<string>`(?:[^`\\]|\\.)*`|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
)
_IDENTIFIER = re.compile(r"\b(?!(?:" + "|".join(_KEYWORDS) + r")\b)[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"\b\d[\w.]*")
# What an identifier becomes: a character no keyword contains, so marks can be counted.
IDENTIFIER_MARK = "\x01"
_SPACE = re.compile(r"[ \t\r\f\v]+")
_IMPORT = re.compile(r"^(?:import|from|package|using|#include|require\(|export(?:\*|\{[^}]*\})from)")
# Minified or generated lines carry no reviewable shape and would dominate the index.
MAX_LINE_LENGTH = 400


def _blank_parts(text: str, pattern: re.Pattern[str]) -> str:
    """Comments disappear and strings become `"`, keeping every newline so lines still line up."""

    def replace(match: re.Match[str]) -> str:
        newlines = "\n" * match.group(0).count("\n")
        return newlines if match.group("comment") is not None else '"' + newlines

    return pattern.sub(replace, text)


def _blank(text: str, language: Language) -> str:
    if language in HASH_COMMENT:
        return _blank_parts(text, _HASH_LANGUAGE_PARTS)
    if language in C_LIKE:
        return _blank_parts(text, _C_LANGUAGE_PARTS)
    return text


def _kept(line: str) -> bool:
    return len(line) <= MAX_LINE_LENGTH and not _IMPORT.match(line)


def normalized_lines(text: str, language: Language) -> list[str]:
    """One normalized string per line of `text` (empty for blank, comment and import lines)."""
    text = _NUMBER.sub("0", _IDENTIFIER.sub(IDENTIFIER_MARK, _blank(text, language)))
    lines = _SPACE.sub("", text).split("\n")
    return [line if _kept(line) else "" for line in lines]


def identifier_names(text: str, language: Language) -> list[str]:
    """The identifiers behind each IDENTIFIER_MARK of the normalized text, in order."""
    blanked = _blank(text, language)
    names = _IDENTIFIER.findall(blanked)
    normalized = _SPACE.sub("", _NUMBER.sub("0", _IDENTIFIER.sub(IDENTIFIER_MARK, blanked))).split("\n")
    kept: list[str] = []
    position = 0
    for line in normalized:
        count = line.count(IDENTIFIER_MARK)
        if _kept(line):
            kept += names[position : position + count]
        position += count
    return kept


def consistent_renaming(left: list[str], right: list[str]) -> float:
    """The share of aligned identifier pairs that agree with one renaming (a one-to-one map), as a
    renamed copy has: `total -> amount` everywhere. Code that only shares a shape maps one name to
    several (Brenda Baker's parameterized matching, 1993)."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    agreeing = 0
    for mine, theirs in zip(left, right, strict=False):
        if forward.setdefault(mine, theirs) == theirs and backward.setdefault(theirs, mine) == mine:
            agreeing += 1
    return agreeing / max(len(left), 1)


@dataclass(frozen=True)
class Normalized:
    """A file's normalized text as one string, with where each source line starts in it."""

    text: str
    line_starts: tuple[int, ...]  # offset in `text` of source line i+1
    lines: tuple[str, ...]

    @classmethod
    def of(cls, source: str, language: Language) -> Normalized:
        lines = normalized_lines(source, language)
        starts, offset = [], 0
        for line in lines:
            starts.append(offset)
            offset += len(line)
        return cls("".join(lines), tuple(starts), tuple(lines))

    def marks_before(self, offset: int) -> int:
        """How many identifiers the normalized text holds before `offset`."""
        return self.text.count(IDENTIFIER_MARK, 0, offset)

    def line_at(self, offset: int) -> int:
        """The 1-based source line whose normalized text holds `offset`."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        while index + 1 < len(self.lines) and not self.lines[index]:
            index += 1  # an empty line shares its offset with the next non-empty one
        return index + 1

    def anchors(self) -> list[tuple[int, int]]:
        """(hash, offset) of the window at each non-empty line start."""
        text, found = self.text, []
        for start, line in zip(self.line_starts, self.lines, strict=True):
            if line and start + WINDOW <= len(text):
                found.append((hash(text[start : start + WINDOW]), start))
        return found

    def windows_in(self, line_numbers: set[int]) -> list[tuple[int, int]]:
        """(hash, offset) of every window starting inside the given source lines."""
        text, found = self.text, []
        for number in sorted(line_numbers):
            if not 1 <= number <= len(self.lines) or not self.lines[number - 1]:
                continue
            start = self.line_starts[number - 1]
            for offset in range(start, min(start + len(self.lines[number - 1]), len(text) - WINDOW + 1)):
                found.append((hash(text[offset : offset + WINDOW]), offset))
        return found


def common_extent(left: str, left_start: int, right: str, right_start: int) -> tuple[int, int]:
    """How far the two texts agree before and after the given aligned offsets: (back, forward)."""
    back = 0
    while (
        left_start - back > 0
        and right_start - back > 0
        and left[left_start - back - 1] == right[right_start - back - 1]
    ):
        back += 1
    forward, step = 0, 256
    while step:  # compare in slices (done in C), then narrow down to the exact end
        end_left, end_right = left_start + forward + step, right_start + forward + step
        if (
            end_left <= len(left)
            and end_right <= len(right)
            and (left[left_start + forward : end_left] == right[right_start + forward : end_right])
        ):
            forward += step
        else:
            step //= 2
    return back, forward
