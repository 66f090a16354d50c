"""What a change does to the code's behaviour, judged against the merge base.

Each changed source file is read at both sides (the base side skipped for an added file), its
functions shaped once per side (python_shapes by `ast`, tree_shapes by tree-sitter) and paired by
qualified name. New behaviour is a function absent at the merge base that is not moved code (its
normalised body is nowhere in the base side of the changed files), or an existing function whose
branch count grew. Comments, docstrings, annotations, formatting, strings and moves are not
behaviour. A file that does not parse at one side gives no evidence.
"""

from __future__ import annotations

import copy
import enum
import re
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import NamedTuple

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.freeze.git import TreeReader, prefetch_sides
from reviewgate.reviewers.builtin.changed_lines import only_inserts, reviewable_changes
from reviewgate.reviewers.builtin.file_kinds import (
    SUPPORT_DIRECTORIES,
    is_configuration_file,
    is_stub_file,
    is_test_file,
    is_test_input,
    is_translation_file,
)
from reviewgate.reviewers.builtin.language_table import BEHAVIOUR_LANGUAGES, Language, language_of
from reviewgate.reviewers.builtin.languages.python_shapes import inserts_only, python_shapes
from reviewgate.reviewers.builtin.languages.shapes import (
    FunctionShape,
    HeadShapes,
    PackedShapes,
    Remade,
    Shapes,
    base_side,
    settle,
    unpacked,
)
from reviewgate.reviewers.builtin.product_code import GENERATED, non_product_reason
from reviewgate.reviewers.builtin.python_parsing import forget_parsed_trees, parse_python, touched_python

_NOT_BEHAVIOUR_DIRECTORIES = frozenset({"docs", "doc", "migrations"}) | SUPPORT_DIRECTORIES
# A new function of this many statements is substantial whether public or not.
SUBSTANTIAL_STATEMENTS = 5
# Branches an existing function must gain for the evidence to be strong.
STRONG_BRANCH_GROWTH = 2


def is_behaviour_file(path: str) -> bool:
    """Source that is not a test, a stub, configuration or a translation, nor in a documentation,
    example or migration directory (named in any case: a .NET `Docs/` is a `docs/`)."""
    return (
        language_of(path) in BEHAVIOUR_LANGUAGES
        and not is_test_file(path)
        and not is_stub_file(path)
        and not is_configuration_file(path)
        and not any(part.lower() in _NOT_BEHAVIOUR_DIRECTORIES for part in PurePosixPath(path).parts[:-1])
        and not is_translation_file(path)
    )


class EvidenceKind(str, enum.Enum):
    NEW_FUNCTION = "new-function"
    MORE_BRANCHES = "more-branches"
    CHANGED_DEFAULT = "changed-default"
    CHANGED_BODY = "changed-body"  # counts for a fix only: it alters behaviour, adds none


class Evidence(NamedTuple):
    """One sign that a change adds or alters behaviour (a new function, more branches), and where."""

    kind: EvidenceKind
    path: str
    line: int
    name: str
    detail: str  # what a person reads: "`connect` is absent at the merge base"
    strong: bool

    @property
    def adds_behaviour(self) -> bool:
        return self.kind is not EvidenceKind.CHANGED_BODY


def shapes_of(text: str, path: str, language: Language) -> Shapes | None:
    """The functions of one side of a file; None when it does not parse."""
    return _settled(_tree_shapes_of(text, path, language), lambda: _tree_shapes_of(text, path, language))


def _settled(shapes: Shapes | None, make: Callable[[], Shapes | None]) -> Shapes | None:
    """`shapes` let go of their syntax tree (`settle`): a change's shapes are held until the whole
    change is compared, and its trees all at once were most of a large review's memory."""
    return None if shapes is None else settle(shapes, Remade(make))


def _tree_shapes_of(text: str, path: str, language: Language) -> Shapes | None:
    if language is Language.PYTHON:
        tree = parse_python(text, path)
        return None if tree is None else python_shapes(tree, text)
    # tree-sitter for the other languages: a change with no such file never loads it.
    from reviewgate.reviewers.builtin.languages.tree_shapes import shapes_of_file

    return shapes_of_file(text, path)


def head_shapes_of(request: ReviewRequest, change: FileChange) -> Shapes | None:
    """The functions of a changed file at head; None when it is missing or does not parse."""
    return _head_shapes(request, change, language_of(change.path))


def _head_shapes(request: ReviewRequest, change: FileChange, language: Language) -> Shapes | None:
    made = _head_tree_shapes(request, change, language, with_base=True)
    # Remade from the tree they were made from: the touched statements' shapes are the whole
    # module's of the same names (`_touched_shapes`), but parsing it all again is what they spared.
    with_base = isinstance(made, HeadShapes)
    return _settled(made, lambda: _head_tree_shapes(request, change, language, with_base=with_base))


def head_shapes_unpacked(request: ReviewRequest, change: FileChange, shapes: PackedShapes) -> Shapes:
    """A changed file's head shapes another process made (head_shapes_of, then `packed`), remade
    here from the same tree when asked for what they did not keep, as `_head_shapes` remakes them."""
    language = language_of(change.path)
    return unpacked(shapes, Remade(lambda: _head_tree_shapes(request, change, language, with_base=shapes.head_shapes)))


def _head_tree_shapes(
    request: ReviewRequest, change: FileChange, language: Language, *, with_base: bool = False
) -> Shapes | None:
    """`with_base`: HeadShapes when they tell the base side's functions too (python_shapes.inserts_only)."""
    if language is Language.PYTHON:
        source = request.head.read_text(change.path)
        if source is None:
            return None
        if with_base and (touched := _touched_shapes(change, source)) is not None:
            return touched
        tree = parse_python(source, change.path)  # the tree the other lenses share
        if tree is None:
            return None
        shapes = python_shapes(tree, source)
        if with_base and only_inserts(change) and inserts_only(tree, source, change.added_lines()):
            return HeadShapes(shapes)
        return shapes
    text = request.head.read_text(change.path)
    return None if text is None else _tree_shapes_of(text, change.path, language)


def _touched_shapes(change: FileChange, source: str) -> HeadShapes | None:
    """HeadShapes of only the statements the change adds whole (python_parsing.touched_python): the others'
    functions are the same at both sides, which compare equal and give no evidence. So when no
    name they define is one the added statements define too (`name#2` numbers a name's functions
    in file order), and the base side is the head's less the added statements (inserts_only, which
    reads only the statements holding added lines)."""
    touched = touched_python(change, source)
    if touched is None or not inserts_only(touched.tree, source, change.added_lines()):
        return None
    shapes = python_shapes(touched.tree, source)
    if any(name.partition("#")[0].partition(".")[0] in touched.other_names for name in shapes):
        return None
    return HeadShapes(shapes)


def _base_path(change: FileChange) -> str | None:
    if change.status is ChangeStatus.ADDED:
        return None
    return change.old_path or change.path


def _first_added_line(change: FileChange, shape: FunctionShape) -> int:
    added = change.added_lines()
    return next((line for line in range(shape.line, shape.end_line + 1) if line in added), shape.line)


# A new function most of whose lines the merge base already has, in the files the change touches,
# was extracted from existing code (a helper pulled out of a longer function), not written: at
# least this share of its distinct body lines, and at least this many of them. (The diff alone
# cannot tell: git often keeps the extracted lines as context and adds the call around them.)
EXTRACTED_SHARE = 0.6
EXTRACTED_MIN_LINES = 3
EXTRACTED_WHOLE_LINES = 2
# Lines too generic to say where code came from (`return x`, `}`, `else:`, `pass`).
_GENERIC_LINE = re.compile(r"^(?:[\W_]*|(?:return|pass|else|try|finally|break|continue)\b\W*\w{0,12}\W*)$")


def _body_lines(text: str) -> set[str]:
    """A function's distinct body lines (signature line left out), stripped, generic ones dropped."""
    generic = _GENERIC_LINE.match
    return {line for line in map(str.strip, text.split("\n")[1:]) if line and not generic(line)}


class MovedCode:
    """The functions the change removes (their name is gone from their file at head, or their
    file is deleted): a function "new" at head with the same text or normalised body was moved
    or renamed, not written. So is one whose lines the change removes elsewhere (extracted)."""

    def __init__(self, removed: list[FunctionShape], base_texts: tuple[str, ...] = ()) -> None:
        self.removed = removed
        self.base_texts = base_texts
        self._base_lines: frozenset[str] | None = None  # split when first asked
        self.texts = {shape.text.split("\n", 1)[-1] for shape in removed}
        self._bodies: set[str] | None = None
        self._counts: set[tuple[int, int]] | None = None

    def extracted(self, shape: FunctionShape) -> bool:
        if not self.base_texts:
            return False
        if self._base_lines is None:
            self._base_lines = frozenset(line.strip() for text in self.base_texts for line in text.split("\n"))
        lines = _body_lines(shape.text)
        found = len(lines & self._base_lines)
        # A short one counts when all its lines were there: a constructor moved into a delegate.
        whole = found == len(lines) >= EXTRACTED_WHOLE_LINES
        return whole or (found >= EXTRACTED_MIN_LINES and found >= EXTRACTED_SHARE * len(lines))

    def holds(self, shape: FunctionShape) -> bool:
        if self.extracted(shape):
            return True
        if not self.removed:
            return False
        if shape.text.split("\n", 1)[-1] in self.texts:  # the same lines under another signature line
            return True
        if self._counts is None:
            self._counts = {(item.branches, item.statements) for item in self.removed}
        if (shape.branches, shape.statements) not in self._counts:
            return False  # cheap to tell apart: no body to normalise
        if self._bodies is None:
            self._bodies = {item.body for item in self.removed}
        return shape.body in self._bodies


def _new_function(change: FileChange, shape: FunctionShape) -> Evidence:
    # A new public function is what a library's users get: strong unless it is a stub or a bare
    # accessor. A private helper is strong only when substantial.
    strong = shape.statements >= SUBSTANTIAL_STATEMENTS or (shape.public and not shape.trivial)
    size = f"{shape.statements} statement(s), {shape.branches} branch(es)"
    return Evidence(
        EvidenceKind.NEW_FUNCTION, change.path, shape.line, shape.name,
        f"`{shape.name}` is absent at the merge base ({size})", strong,
    )


def is_decisionless_one_liner(shape: FunctionShape) -> bool:
    """A function written on one line that decides nothing (`export const f = () => Object.create(null)`,
    `def name(self): return self._name`): it names an expression; there is no behaviour of its own
    for a test to pin down."""
    return shape.line == shape.end_line and shape.branches == 0 and shape.statements <= 1


def _changed_defaults(old: FunctionShape, shape: FunctionShape) -> list[tuple[str, str, str]]:
    before = dict(old.defaults)
    return [
        (parameter, before[parameter], value)
        for parameter, value in shape.defaults
        if parameter in before and before[parameter] != value
    ]


def compare(
    change: FileChange, base: Shapes | None, head: Shapes, moved: MovedCode, *, changed_bodies: bool = True
) -> list[Evidence]:
    """Evidence for one file: `base` None when the file is new. `changed_bodies` also reports
    functions that do something different without gaining behaviour (what a fix does)."""
    found: list[Evidence] = []
    for name, shape in head.items():
        old = None if base is None else base.get(name)
        if old is None:
            if not is_decisionless_one_liner(shape) and not moved.holds(shape):
                found.append(_new_function(change, shape))
            continue
        if shape.text == old.text:
            continue  # untouched, whatever else moved around it
        if shape.branches > old.branches:
            grew = shape.branches - old.branches
            found.append(Evidence(
                EvidenceKind.MORE_BRANCHES, change.path, _first_added_line(change, shape), name,
                f"branches: {old.branches} → {shape.branches} in `{name}`", grew >= STRONG_BRANCH_GROWTH,
            ))
        defaults = _changed_defaults(old, shape) if shape.public else []
        if defaults:
            parameter, before, after = defaults[0]
            found.append(Evidence(
                EvidenceKind.CHANGED_DEFAULT, change.path, _first_added_line(change, shape), name,
                f"default of `{parameter}` in `{name}`: `{before}` → `{after}`", False,
            ))
        elif changed_bodies and shape.branches <= old.branches and shape.body != old.body:
            found.append(Evidence(
                EvidenceKind.CHANGED_BODY, change.path, _first_added_line(change, shape), name,
                f"`{name}` does something different than at the merge base", False,
            ))
    return _restructured(_deprecations(found, change, head), base, head)


# A line that says something is deprecated: Python's DeprecationWarning, depd's `deprecate(...)`,
# a `@deprecated` marker, a "... is deprecated" message.
_DEPRECATION = re.compile(r"deprecat", re.IGNORECASE)
# A line that opens a branch, in any language the lens reads.
_BRANCH_HEADER = re.compile(r"^\s*(?:\}\s*)?(?:if|elif|else\s+if|else|switch|case|catch|except|for|while)\b")
# How far below its header a branch's deprecation warning may be (a multi-line `warnings.warn(`).
DEPRECATION_REACH = 8
# A new function this small whose code warns of a deprecation is a shim (an alias that warns, a
# module `__getattr__` for a removed attribute), not behaviour.
DEPRECATION_SHIM_STATEMENTS = 8


def _only_deprecates(change: FileChange, shape: FunctionShape, *, opens_branches: bool) -> bool:
    """Whether the lines the change adds to the function warn of a deprecation and every branch
    among them leads to such a warning within DEPRECATION_REACH lines; with `opens_branches`,
    also whether they open a branch at all."""
    added = change.added_lines()
    lines = [(number, added[number]) for number in range(shape.line, shape.end_line + 1) if number in added]
    warnings = [number for number, text in lines if _DEPRECATION.search(text)]
    headers = [number for number, text in lines if _BRANCH_HEADER.match(text)]
    return bool(warnings) and (bool(headers) or not opens_branches) and all(
        any(header < warning <= header + DEPRECATION_REACH for warning in warnings) for header in headers
    )


def _deprecations(found: list[Evidence], change: FileChange, head: Shapes) -> list[Evidence]:
    """Branches or a small function added only to warn that something is deprecated announce a
    removal; they add no behaviour a test must pin down: weak evidence (minor)."""
    kept = []
    for item in found:
        shape = head.get(item.name)
        if item.strong and shape is not None and _is_deprecation(item, change, shape):
            item = item._replace(strong=False, detail=item.detail + " (its new code only warns of a deprecation)")
        kept.append(item)
    return kept


def _is_deprecation(item: Evidence, change: FileChange, shape: FunctionShape) -> bool:
    if item.kind is EvidenceKind.NEW_FUNCTION:
        return shape.statements <= DEPRECATION_SHIM_STATEMENTS and _only_deprecates(change, shape, opens_branches=False)
    if item.kind is EvidenceKind.MORE_BRANCHES:
        # The growth must come from branches that warn, not from conditions grown beside them.
        return _only_deprecates(change, shape, opens_branches=True)
    return False


# How many branches a refactor may add when it takes at least RESTATED_MIN_LOST out of the file's
# existing functions: a moved decision restated as guard clauses.
RESTATED_BRANCHES = 1
RESTATED_MIN_LOST = 3


def _restructured(found: list[Evidence], base: Shapes | None, head: Shapes) -> list[Evidence]:
    """New functions that hold what the file's other functions lost are the same code rearranged
    (a refactor that splits a long function into helpers), not new code: when the file holds no
    more branches than at the merge base (one more when other functions lost at least
    RESTATED_MIN_LOST: decisions restated as guard clauses), and either the new functions carry decisions the file
    had already, or other functions of the file lost statements and the file's statements grew by
    no more than one (a call) per new function, the evidence is weak (minor)."""
    if base is None or not any(item.strong for item in found):
        return found
    before, after = sum(shape.branches for shape in base.values()), sum(shape.branches for shape in head.values())
    lost_branches = sum(max(0, shape.branches - head[name].branches) if name in head else shape.branches
                        for name, shape in base.items())
    # Decisions moved into a helper are often restated as guard clauses, one more than the nested
    # condition they replace (`if ty is not None: return ty` for `if ty is None and default ...`).
    if after > before + (RESTATED_BRANCHES if lost_branches >= RESTATED_MIN_LOST else 0):
        return found
    # Decisions can be rearranged; a new function without branches (a public one-liner) is new
    # behaviour unless the statements it holds left another function of the file.
    rearranged = any(item.strong and item.name in head and head[item.name].branches for item in found)
    new = sum(1 for name in head if name not in base)  # moved ones too: each is called from somewhere
    written = sum(shape.statements for shape in head.values()) - sum(shape.statements for shape in base.values())
    lost = sum(max(0, shape.statements - head[name].statements if name in head else shape.statements)
               for name, shape in base.items())
    if not rearranged and not (new and lost and written <= new):
        return found
    note = f" (the file's branches overall: {before} → {after}, statements {written:+d}: rearranged rather than added)"
    return [item._replace(strong=False, detail=item.detail + note) if item.strong else item for item in found]


def _base_texts(base: TreeReader | None, paths: list[str]) -> dict[str, str]:
    if base is None or not paths:
        return {}
    prefetch_sides([(base, paths)])  # done already when the builtin reviewer ran
    return {path: text for path in paths if (text := base.read_text(path)) is not None}


def is_product_file(request: ReviewRequest, path: str) -> bool:
    """A behaviour file the repository's tooling does not run or type-check as a test, and that is
    the product's own code (product_code.py: not vendored, documentation or examples, nor marked
    generated by the target side's tooling). Code generated by its own word (a header, a name the
    branch wrote) is read: its findings are shown, at minor."""
    return (
        is_behaviour_file(path)
        and not is_test_input(request, path)
        and non_product_reason(request, path, read_header=False) in (None, GENERATED)
    )


def _behaviour_changes(request: ReviewRequest) -> list[FileChange]:
    return [change for change in reviewable_changes(request) if is_product_file(request, change.path)]


def _deleted_paths(request: ReviewRequest) -> list[str]:
    return [
        change.path
        for change in request.target.files
        if change.status is ChangeStatus.DELETED and is_product_file(request, change.path)
    ]


def _shrunk_changes(request: ReviewRequest) -> list[FileChange]:
    """Source files the change only removes lines from: code may have moved out of them too."""
    return [
        change
        for change in request.target.files
        if change.status is not ChangeStatus.DELETED
        and not change.is_binary
        and not change.is_submodule
        and is_product_file(request, change.path)
        and not change.added_lines()
        and bool(change.hunks)
    ]


def base_side_paths(request: ReviewRequest) -> list[str]:
    """What the analysis reads at the merge base: the base side of every changed source file,
    those compared, and the deleted and shrunk ones code may have moved from."""
    changes = _behaviour_changes(request)
    if not changes:
        return []
    compared = {path for change in changes if (path := _base_path(change)) is not None}
    shrunk = {path for change in _shrunk_changes(request) if (path := _base_path(change)) is not None}
    return sorted(compared | shrunk | set(_deleted_paths(request)))


def prefetch_both_sides(request: ReviewRequest, other_head_paths: tuple[str, ...] = ()) -> None:
    """Read the changed code files at head and what this analysis reads at the merge base with
    one git process (plus `other_head_paths`, files other lenses read at head)."""
    head_paths = [
        change.path for change in reviewable_changes(request) if language_of(change.path) in BEHAVIOUR_LANGUAGES
    ] + [change.path for change in _shrunk_changes(request)] + list(other_head_paths)
    base = base_reader_for(request.target)
    prefetch_sides([(request.head, head_paths)] + ([(base, base_side_paths(request))] if base else []))


def _base_shapes(text: str, path: str) -> Shapes | None:
    shapes = shapes_of(text, path, language_of(path))
    forget_parsed_trees()  # settled: the tree is of no more use, one at a time
    return shapes


# What a Cargo manifest says of a proc-macro crate (`[lib] proc-macro = true`).
_PROC_MACRO = re.compile(r"^\s*proc[-_]macro\s*=\s*true\b", re.MULTILINE)


class _ProcMacroCrates:
    """Which Rust files lie in a proc-macro crate, by the nearest `Cargo.toml` above each at the
    merge base (the branch cannot make its own crate one): such a crate exports its macros and
    nothing else, so its other functions, `pub` or not, are no public API."""

    def __init__(self, base: TreeReader | None) -> None:
        self.base = base
        self.by_directory: dict[str, bool] = {}

    def holds(self, path: str) -> bool:
        if self.base is None:
            return False
        directory = path.rpartition("/")[0]
        seen = []
        while directory not in self.by_directory:
            seen.append(directory)
            manifest = self.base.read_text(f"{directory}/Cargo.toml" if directory else "Cargo.toml")
            if manifest is not None:
                self.by_directory[directory] = bool(_PROC_MACRO.search(manifest))
                break
            if not directory:
                self.by_directory[directory] = False
                break
            directory = directory.rpartition("/")[0]
        found = self.by_directory[directory]
        self.by_directory.update(dict.fromkeys(seen, found))
        return found


def _crate_private(shapes: Shapes) -> Shapes:
    """A proc-macro crate's functions with only its macros (`#[proc_macro...]`) public."""
    made: Shapes = {}
    for name, shape in shapes.items():
        if shape.public and "#[proc_macro" not in shape.text:
            shape = copy.copy(shape)
            shape.public = False
        made[name] = shape
    return made


def analyse(
    request: ReviewRequest, *, changed_bodies: bool = True, head_shapes: Mapping[str, Shapes | None] | None = None
) -> list[Evidence]:
    """Evidence over every changed source file that is not a test, in file order. `head_shapes`:
    the head side's functions by path, when the caller made them already (head_shapes_of)."""
    changes = _behaviour_changes(request)
    if not changes:
        return []
    base_texts = _base_texts(base_reader_for(request.target), base_side_paths(request))
    head_shapes = {
        change.path: head_shapes[change.path] if head_shapes is not None and change.path in head_shapes
        else _head_shapes(request, change, language_of(change.path))
        for change in changes
    }
    # A file whose change only inserts whole statements tells its base side's functions at head.
    derived = {
        base_path: base_side(head, change.added_line_numbers())
        for change in changes
        if isinstance(head := head_shapes[change.path], HeadShapes) and (base_path := _base_path(change)) in base_texts
    }
    base_shapes = {path: derived[path] if path in derived else _base_shapes(text, path) for path, text in base_texts.items()}
    removed = [shape for path in _deleted_paths(request) for shape in (base_shapes.get(path) or {}).values()]
    shrunk_changes = _shrunk_changes(request)
    shrunk = {change.path: _head_shapes(request, change, language_of(change.path)) for change in shrunk_changes}
    for change in [*changes, *shrunk_changes]:
        base_path = _base_path(change)
        head = head_shapes[change.path] if change.path in head_shapes else shrunk.get(change.path)
        base = None if base_path is None else base_shapes.get(base_path)
        if base is not None and head is not None:
            removed += [shape for name, shape in base.items() if name not in head]
    moved = MovedCode(removed, tuple(base_texts.values()))
    crates = _ProcMacroCrates(base_reader_for(request.target))
    evidence: list[Evidence] = []
    for change in changes:
        base_path, head = _base_path(change), head_shapes[change.path]
        if head is not None and language_of(change.path) is Language.RUST and crates.holds(change.path):
            head = _crate_private(head)
        base = None if base_path is None else base_shapes.get(base_path)
        if head is None or (base_path is not None and base is None):
            continue  # unreadable or unparsable at one side: no evidence rather than a guess
        evidence += compare(change, base, head, moved, changed_bodies=changed_bodies)
    return evidence
