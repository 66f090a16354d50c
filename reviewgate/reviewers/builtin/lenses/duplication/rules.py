"""What the DRY lens does not count, and how it names what it found: re-wrapped hunks, tables of
literals, definitions per language, and the evidence a duplicate finding shows."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import ChangeStatus, DiffLine, FileChange, LineKind
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import IDENTIFIER_MARK, KEYWORDS, Normalized

# A definition starts its line; each language has its own keywords (Go's `func` is not Python's
# `for func in`). The name is the pattern's first non-empty group.
_JAVA_LIKE_METHOD = (
    r"^\s*(?:@\w+\s+)*(?:(?:public|private|protected|internal|static|final|abstract|override|virtual|"
    r"sealed|async|synchronized|open|suspend)\s+)+[\w<>\[\],.?]+\s+(\w+)\s*\("
)
_DEFINITIONS: dict[Language, re.Pattern[str]] = {
    Language.PYTHON: re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)"),
    Language.GO: re.compile(r"^func\s*(?:\([^)]*\)\s*)?(\w+)|^type\s+(\w+)\s"),
    Language.JAVASCRIPT: re.compile(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)"
        r"|^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([\w$]+)"
        r"|^\s*(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:function\b|\(|[\w$]+\s*=>)"
        r"|^\s*(?:(?:public|private|protected|static|async|readonly|override)\s+)*"
        r"(?!(?:if|for|while|switch|catch|return|function|with)\b)([\w$]+)\s*\([^)]*\)\s*(?::[^{]+)?\{"
    ),
    Language.JAVA: re.compile(r"^\s*(?:\w+\s+)*(?:class|interface|enum|record)\s+(\w+)|" + _JAVA_LIKE_METHOD),
    Language.CSHARP: re.compile(r"^\s*(?:\w+\s+)*(?:class|interface|enum|record|struct)\s+(\w+)|" + _JAVA_LIKE_METHOD),
    Language.KOTLIN: re.compile(
        r"^\s*(?:\w+\s+)*(?:class|interface|object)\s+(\w+)|^\s*(?:\w+\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)"
    ),
}
_DEFINITIONS[Language.TYPESCRIPT] = _DEFINITIONS[Language.JAVASCRIPT]
# Two words one of which every match of a language's definition pattern holds: a line with neither
# is not searched (the search was half of `_members`' time).
_DEFINITION_WORDS: dict[Language, tuple[str, str]] = {Language.PYTHON: ("def", "class"), Language.GO: ("func", "type")}


def definition_name(lines: list[str], first: int, last: int, language: Language) -> str | None:
    """The first function, method or class defined in lines `first` to `last` (at least the two
    after `first`, where a copied block often starts), by the definition syntax of the file's own
    language."""
    pattern = _DEFINITIONS.get(language)
    if pattern is None:
        return None
    for text in lines[first - 1 : max(last, first + 2)]:
        match = pattern.search(text)
        if match:
            return next(group for group in match.groups() if group)
    return None


def starts_a_definition(lines: list[str], first: int, language: Language) -> bool:
    """Whether the run starts with a function, method or class definition (on its first line,
    or its second after a decorator or a blank line): a copied definition, not a fragment."""
    pattern = _DEFINITIONS.get(language)
    return pattern is not None and any(pattern.search(text) for text in lines[max(first - 1, 0) : first + 1])


# Token-wise folding of a re-wrapped hunk: whitespace and line breaks go, quotes are one kind, and a
# trailing comma before a closer (a formatter's "magic comma") is layout.
_FOLD_SPACE = re.compile(r"\s+|\\\n")
_TRAILING_COMMA = re.compile(r",(?=[)\]}])")


def _folded(texts: list[str]) -> str:
    joined = _FOLD_SPACE.sub("", "\n".join(texts)).replace("'", '"')
    return _TRAILING_COMMA.sub("", joined)


def _blocks(lines: tuple[DiffLine, ...]) -> Iterator[list[DiffLine]]:
    """Runs of removed and added lines between context lines."""
    block: list[DiffLine] = []
    for line in lines:
        if line.kind is LineKind.CONTEXT:
            if block:
                yield block
            block = []
        else:
            block.append(line)
    if block:
        yield block


def _rewrapped(lines: list[DiffLine]) -> set[int]:
    added = [line for line in lines if line.kind is LineKind.ADDED and line.new_line is not None]
    removed = [line.text for line in lines if line.kind is LineKind.REMOVED]
    if added and removed and _folded([line.text for line in added]) == _folded(removed):
        return {line.new_line for line in added if line.new_line is not None}
    return set()


def rewrapped_lines(change: FileChange) -> set[int]:
    """Added lines that only re-wrap or re-indent what they replace: a hunk (or a run of changed
    lines inside one) whose added text equals its removed text once layout is folded away. A
    formatter's pass is not new code, however alike the code it touches."""
    found: set[int] = set()
    if not change.stats.removed_lines:
        return found  # nothing replaced (an appended file): its lines are not read, see split_out_copies
    for hunk in change.hunks:
        whole = _rewrapped(list(hunk.lines))
        found |= whole or {number for block in _blocks(hunk.lines) for number in _rewrapped(block)}
    return found


# A region whose operands are mostly strings and numbers is a table (constants, a mapping, a list
# of cases): two tables of one shape are data, not logic to keep in step, unless they are the same
# text.
MIN_LITERAL_SHARE = 0.5
_LAYOUT = re.compile(r"\s+")


def mostly_literals(normalized_region: str) -> bool:
    literals = normalized_region.count('"') + normalized_region.count("0")
    names = normalized_region.count(IDENTIFIER_MARK)
    return literals > 0 and literals >= MIN_LITERAL_SHARE * (literals + names)


def same_text(left: list[str], right: list[str]) -> bool:
    return _LAYOUT.sub("", "".join(left)) == _LAYOUT.sub("", "".join(right))


@dataclass(frozen=True)
class Side:
    """One side of a duplicate pair: where it is and its source lines."""

    path: str
    first: int
    last: int

    def overlaps(self, other: Side) -> bool:
        return self.path == other.path and self.first <= other.last and other.first <= self.last

    def __str__(self) -> str:
        return f"{self.path}:{self.first}"


MAX_EVIDENCE_LINES = 12


def evidence(lines: list[str], side: Side) -> str:
    """The existing code, quoted: the reader sees the repetition without opening the file."""
    shown = lines[side.first - 1 : min(side.last, side.first - 1 + MAX_EVIDENCE_LINES)]
    more = side.last - side.first + 1 - len(shown)
    tail = f"\n… {more} more line(s)" if more > 0 else ""
    fence = "````" if any("```" in line for line in shown) else "```"
    return f"{fence}\n" + "\n".join(shown) + f"\n{fence}{tail}"


# Evidence too weak to block: a run with fewer than this many substantive lines (two names or more,
# not an argument line), the rest closers and one-name statements (`}`, `return a`, `else:`), is
# reported at minor.
STRONG_LINES = 5
_SUBSTANTIVE_NAMES = 2
# A copy whose source lost at least this many lines in the same change is code split out of it.
SPLIT_REMOVED_LINES = 5
# Argument lines of a long call (`a=a,`), openers and closers: the same helper called with keyword
# arguments in two places has this shape without being a copy, so they are not distinct lines, nor
# substantive ones.
CONTINUATION = re.compile(r"(?:[,(\[{]|^[)\]}]+[,;]?)$")


def weak_evidence(normalized: Normalized, side: Side) -> bool:
    """Too few substantive lines: the rest are closers, argument lines and one-name statements."""
    substantive = sum(
        1
        for text in normalized.lines[side.first - 1 : side.last]
        if text.count(IDENTIFIER_MARK) >= _SUBSTANTIVE_NAMES and not CONTINUATION.search(text)
    )
    return substantive < STRONG_LINES


def split_out_copies(request: ReviewRequest) -> set[str]:
    """Paths of copies git found whose source the same change shrank: code split out of a file,
    to be compared with what the source holds at head (moved code is gone there), not a fork."""
    # Counted from the diff's text (`stats`), not its lines: reading every line of every file
    # touched the objects a forked worker shares with the gate (22 MB of pages copied at +300k lines).
    removed = {
        change.path: change.stats.removed_lines
        for change in request.target.files
        if change.status in (ChangeStatus.MODIFIED, ChangeStatus.RENAMED)
    }
    return {
        change.path
        for change in request.target.files
        if change.status is ChangeStatus.COPIED
        and change.old_path is not None
        and removed.get(change.old_path, 0) >= SPLIT_REMOVED_LINES
    }


# `class Name(Base, ...)` (Python), `class Name extends Base` (JS/TS/Java/Kotlin-ish), `class Name : Base` (C#).
_CLASS_LINE = re.compile(
    r"^(?P<indent>\s*)(?:export\s+)?(?:default\s+)?(?:public\s+|abstract\s+|final\s+)*class\s+(?P<name>[\w$]+)"
    r"(?:\s*\((?P<py>[^)]*)\)|[^{:\n]*?\bextends\s+(?P<js>[\w$.]+)|\s*:\s*(?P<cs>[\w$.]+))?"
)


def _bases(match: re.Match[str]) -> str:
    """What a class line names as its bases (Python's parentheses, `extends`, C#'s colon)."""
    return (match.group("py") or match.group("js") or match.group("cs") or "").strip()


def enclosing_class(lines: list[str], first: int) -> tuple[str, str] | None:
    """(class name, its base) of the class around line `first`, by indentation: the nearest class
    line above it indented less than the line itself; None outside a class or without a base."""
    start = lines[first - 1] if 0 < first <= len(lines) else ""
    depth = len(start) - len(start.lstrip())
    for index in range(min(first, len(lines) + 1) - 2, -1, -1):
        text = lines[index]
        # Most lines hold no `class`: a substring test is far cheaper than the pattern, and a
        # large module without classes is otherwise matched line by line for every candidate.
        if "class" not in text:
            continue
        match = _CLASS_LINE.match(text)
        if match and len(match.group("indent")) < max(depth, 1):
            base = _bases(match)
            return (match.group("name"), base) if base and base != "object" else None
    return None


def sibling_classes(mine: list[str], mine_first: int, theirs: list[str], theirs_first: int) -> tuple[str, str] | None:
    """(mine, theirs) class names when both runs open a class of their own under different names
    with the same bases, or none: two implementations of one protocol (a sink, a handler, a
    plugin) whose attribute and method headers look alike by design. None otherwise."""
    one = _CLASS_LINE.match(mine[mine_first - 1]) if 0 < mine_first <= len(mine) else None
    other = _CLASS_LINE.match(theirs[theirs_first - 1]) if 0 < theirs_first <= len(theirs) else None
    if one is None or other is None or one.group("name") == other.group("name"):
        return None
    if _bases(one) != _bases(other):
        return None
    return one.group("name"), other.group("name")


def sibling_implementations(mine: list[str], mine_first: int, theirs: list[str], theirs_first: int) -> str | None:
    """The shared base when both runs sit in different classes with the same base class: two
    implementations of one interface (ZshComplete and a new PowerShellComplete, both
    ShellComplete) look alike by design. None otherwise."""
    one, other = enclosing_class(mine, mine_first), enclosing_class(theirs, theirs_first)
    if one is None or other is None or one[0] == other[0] or one[1] != other[1]:
        return None
    return one[1]


# Two directories mirror each other when they hold at least this many other files of the same
# names, and those are at least half the files of the smaller one.
MIRROR_MIN_SHARED = 3


# One module for two module systems, side by side: `index.d.ts` and `index.d.cts`, `lib.mjs` and
# `lib.cjs`. The suffix names the module system; the stem is the module.
_MODULE_SYSTEM_SUFFIX = re.compile(r"\.(?:d\.)?[cm]?[jt]sx?$")


def module_system_twins(mine: str, theirs: str) -> bool:
    """Whether the two paths are one module written for two module systems (ESM and CommonJS)."""
    mine_stem, theirs_stem = _MODULE_SYSTEM_SUFFIX.sub("", mine), _MODULE_SYSTEM_SUFFIX.sub("", theirs)
    return mine != theirs and mine_stem == theirs_stem and mine_stem not in (mine, theirs)


def mirrored_directories(files: list[str], mine: str, theirs: str) -> tuple[str, str, int] | None:
    """(my directory, theirs, how many other names they share) when the two files have the same
    name in directories that mirror each other: variants of one module kept side by side by
    design (`v4/classic/` and `v4/mini/`, `_async/` and `_sync/`, one per platform or API
    version), which repeat each other file by file. None otherwise."""
    mine_directory, _, mine_name = mine.rpartition("/")
    theirs_directory, _, theirs_name = theirs.rpartition("/")
    if mine_name != theirs_name or mine_directory == theirs_directory:
        return None
    names: dict[str, set[str]] = {mine_directory: set(), theirs_directory: set()}
    for path in files:
        directory, _, name = path.rpartition("/")
        if directory in names and name != mine_name:
            names[directory].add(name)
    shared = len(names[mine_directory] & names[theirs_directory])
    smaller = min(len(names[mine_directory]), len(names[theirs_directory]))
    if shared < MIRROR_MIN_SHARED or shared * 2 < smaller:
        return None
    return mine_directory or ".", theirs_directory or ".", shared


# Lines a copy's size leaves out: `@overload` stubs (signatures for the type checker) and
# docstring-only lines, which normalise to a lone string mark.
_OVERLOAD = re.compile(r"^\s*@(?:[\w.]+\.)?overload\b")
_DOCSTRING_MARK = '"'


def overload_stub_lines(lines: list[str]) -> set[int]:
    """Line numbers of Python `@overload` stubs: the decorator through the stub's `...`."""
    found: set[int] = set()
    if "overload" not in "\n".join(lines):  # most files: no line is matched one by one
        return found
    number = 0
    while number < len(lines):
        if _OVERLOAD.match(lines[number]):
            start = number
            while number < len(lines) and not lines[number].split("#", 1)[0].rstrip().endswith("..."):
                number += 1
            found.update(range(start + 1, min(number, len(lines) - 1) + 2))
        number += 1
    return found


def sized_lines(normalized: Sequence[str], first: int, last: int, added: Collection[int], stubs: set[int]) -> int:
    """Lines of code a copy counts for its size: added by the change (an unchanged neighbour the
    match window takes in is not), neither an overload stub nor a docstring."""
    return sum(
        1
        for number in range(first, last + 1)
        if number in added and number not in stubs and normalized[number - 1] not in ("", _DOCSTRING_MARK)
    )


# A boilerplate family: at least this many members of one shape in a file, the change adding some, each at most this
# many lines of code (overload stubs and docstrings aside): a property and its setter per field,
# one dunder method per class, thin wrappers forwarding to one implementation.
FAMILY_MIN_MEMBERS = 3
FAMILY_MEMBER_LINES = 8
# JS/TS accessors (`get name() {`, `set name(value) {`), which the definition patterns leave out.
_ACCESSOR = re.compile(r"^\s*(?:static\s+)?(?:get|set)\s+[\w$#]+\s*\(")
_DECORATOR = re.compile(r"^\s*@")
# Type names the normalisation keeps as keywords: in a member's shape they are names like any other.
_TYPE_KEYWORDS = re.compile(r"\b(?:int|string|bool|void)\b")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


# `_members`' pass compiled (`_normalize.definition_members`, where a C compiler built it): the same
# steps, the definition patterns still asked of the same lines; the loop below is its definition.
_compiled_members: Callable[..., list[tuple[int, int]]] | None = None
try:
    from reviewgate.reviewers.builtin.lenses.duplication import _normalize
except ImportError:
    pass
else:
    _compiled_members = getattr(_normalize, "definition_members", None)  # None in a build older than it


def _members(lines: list[str], language: Language) -> list[tuple[int, int]]:
    """(first, last) line numbers of each definition, its decorators included: a definition runs
    to the last non-blank line before the first non-blank line indented no deeper than it, or to
    that line when it closes a bracket (`}`, `)`). One pass over the lines with the definitions
    still open on a stack, where a scan from each definition read a class's body once per method."""
    pattern = _DEFINITIONS.get(language)
    if pattern is None:
        return []
    ends: dict[int, tuple[int, int]] = {}  # a definition's line index -> (its indentation, its last line's index)
    open_definitions: list[tuple[int, int]] = []  # (indentation, line index), the deepest last
    last_seen = -1  # the last non-blank line read
    search, accessor = pattern.search, (None if language is Language.PYTHON else _ACCESSOR.match)
    first_word, second_word = _DEFINITION_WORDS.get(language, ("", ""))  # "" is in every line
    if _compiled_members is not None:  # a loop over every line of the file, 0.1 s at Django +304k appended
        return _compiled_members(lines, search, accessor, first_word, second_word)
    for index, text in enumerate(lines):
        stripped = text.lstrip()
        if not stripped:  # a blank line closes nothing
            continue
        depth = len(text) - len(stripped)
        if open_definitions and depth <= open_definitions[-1][0]:
            closing = index if stripped.startswith(("}", ")")) else last_seen
            while open_definitions and depth <= open_definitions[-1][0]:
                opened_depth, opened = open_definitions.pop()
                ends[opened] = (opened_depth, closing)
        if (first_word in text or second_word in text) and search(text) or (
            accessor is not None and accessor(text)
        ):
            open_definitions.append((depth, index))
        last_seen = index
    for opened_depth, opened in open_definitions:
        ends[opened] = (opened_depth, last_seen)
    found = []
    for index in sorted(ends):
        depth, last = ends[index]
        first = index
        while first > 0 and _DECORATOR.match(lines[first - 1]) and _indent(lines[first - 1]) == depth:
            first -= 1
        found.append((first + 1, last + 1))
    return found


class Families:
    """A changed file's boilerplate families and overload stubs, found once for all the copies
    reported in it: each is a pass over the whole file (and its members' lines), which a change of
    many copies (347 in 223 new files at +98k lines) made once per copy, a third of its review."""

    def __init__(self, lines: list[str], normalized: Sequence[str], added: Collection[int], language: Language) -> None:
        self._lines, self._normalized, self._added, self._language = lines, normalized, added, language
        self.stubs = overload_stub_lines(lines) if language is Language.PYTHON else set()
        by_shape: dict[tuple[str, ...], list[tuple[int, int, bool]]] = {}
        for start, end in _members(lines, language):
            numbers = [number for number in range(start, end + 1)
                       if number not in self.stubs and normalized[number - 1] not in ("", _DOCSTRING_MARK)]
            if not numbers or len(numbers) > FAMILY_MEMBER_LINES:
                continue
            shape = [_TYPE_KEYWORDS.sub(IDENTIFIER_MARK, normalized[number - 1]) for number in numbers]
            name = definition_name(lines, start, end, language)
            if name in KEYWORDS:  # a member named like a keyword (`delete`) keeps its name in the shape
                shape = [text.replace(name, IDENTIFIER_MARK, 1) if index == 0 else text
                         for index, text in enumerate(shape)]
            by_shape.setdefault(tuple(shape), []).append((start, end, all(number in added for number in numbers)))
        # A family counts its members already there too (the change adds `put` beside `get` and `post`).
        self._families = [members for members in by_shape.values() if len(members) >= FAMILY_MIN_MEMBERS]
        self._covered = {number for members in self._families for start, end, new in members if new
                         for number in range(start, end + 1)}

    def sized_lines(self, first: int, last: int) -> int:
        """`sized_lines` of the lines `first`..`last` of this file."""
        return sized_lines(self._normalized, first, last, self._added, self.stubs)

    def family_of(self, first: int, last: int) -> list[str] | None:
        """The names of the family the lines `first`..`last` belong to, when every counted line
        there is in short members of shapes the change adds at least FAMILY_MIN_MEMBERS of; None
        otherwise."""
        counted = [number for number in range(first, last + 1) if number in self._added
                   and number not in self.stubs and self._normalized[number - 1] not in ("", _DOCSTRING_MARK)]
        if not counted or not all(number in self._covered for number in counted):
            return None
        names = []
        for members in self._families:
            for start, end, _new in members:
                if start <= last and first <= end:
                    name = definition_name(self._lines, start, end, self._language)
                    if name is not None and name not in names:
                        names.append(name)
        return names or None
