"""What a change does to the code's behaviour, judged against the merge base.

Each changed source file is read at both sides (the base side skipped for an added file), its
functions shaped once per side (python_shapes by `ast`, c_like_shapes by tokens) and paired by
qualified name. New behaviour is a function absent at the merge base that is not moved code (its
normalised body is nowhere in the base side of the changed files), or an existing function whose
branch count grew. Comments, docstrings, annotations, formatting, strings and moves are not
behaviour. A file that does not parse at one side gives no evidence.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.diff import ChangeStatus, FileChange
from reviewgate.git import TreeReader
from reviewgate.reviewers.builtin.c_like_shapes import c_like_shapes
from reviewgate.reviewers.builtin.common import (
    CODE_LANGUAGES,
    Language,
    is_test_file,
    language_of,
    parse_python,
    parse_python_at_head,
    reviewable_changes,
)
from reviewgate.reviewers.builtin.python_shapes import python_shapes
from reviewgate.reviewers.builtin.shapes import FunctionShape, Shapes
from reviewgate.target import base_reader_for

# Files that hold configuration or wiring, not behaviour a unit test would pin down.
_NOT_BEHAVIOUR = re.compile(r"(?:^setup\.py$|^conftest\.py$|^noxfile\.py$|\.config\.[cm]?[jt]s$|\.d\.ts$)")
_NOT_BEHAVIOUR_DIRECTORIES = frozenset(
    {"docs", "doc", "examples", "example", "benchmarks", "scripts", "migrations"}
)
# A new function of this many statements is substantial whether public or not.
SUBSTANTIAL_STATEMENTS = 5
# Branches an existing function must gain for the evidence to be strong.
STRONG_BRANCH_GROWTH = 2


def is_behaviour_file(path: str) -> bool:
    pure = PurePosixPath(path)
    return (
        language_of(path) in CODE_LANGUAGES
        and not is_test_file(path)
        and not _NOT_BEHAVIOUR.search(pure.name)
        and not any(part in _NOT_BEHAVIOUR_DIRECTORIES for part in pure.parts[:-1])
    )


class EvidenceKind(str, enum.Enum):
    NEW_FUNCTION = "new-function"
    MORE_BRANCHES = "more-branches"
    CHANGED_DEFAULT = "changed-default"
    CHANGED_BODY = "changed-body"  # counts for a fix only: it alters behaviour, adds none


@dataclass(frozen=True)
class Evidence:
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
    if language is Language.PYTHON:
        tree = parse_python(text, path)
        return None if tree is None else python_shapes(tree)
    try:
        return c_like_shapes(text, language)
    except (IndexError, KeyError, RecursionError):  # a tokenizer confused by odd input: no evidence
        return None


def _head_shapes(request: ReviewRequest, change: FileChange, language: Language) -> Shapes | None:
    if language is Language.PYTHON:
        parsed = parse_python_at_head(request, change.path)  # the tree the other lenses share
        return None if parsed is None else python_shapes(parsed[0])
    text = request.head.read_text(change.path)
    return None if text is None else shapes_of(text, change.path, language)


def _base_path(change: FileChange) -> str | None:
    if change.status is ChangeStatus.ADDED:
        return None
    return change.old_path or change.path


def _first_added_line(change: FileChange, shape: FunctionShape) -> int:
    added = change.added_lines()
    return next((line for line in range(shape.line, shape.end_line + 1) if line in added), shape.line)


def _new_function(change: FileChange, shape: FunctionShape) -> Evidence:
    strong = shape.statements >= SUBSTANTIAL_STATEMENTS or (
        shape.public and (shape.branches >= 1 or shape.statements >= 3)
    )
    size = f"{shape.statements} statement(s), {shape.branches} branch(es)"
    return Evidence(
        EvidenceKind.NEW_FUNCTION, change.path, shape.line, shape.name,
        f"`{shape.name}` is absent at the merge base ({size})", strong,
    )


def compare(change: FileChange, base: Shapes | None, head: Shapes, moved: set[str]) -> list[Evidence]:
    """Evidence for one file: `base` None when the file is new, `moved` the normalised bodies of
    every function at the base side of the changed files."""
    found: list[Evidence] = []
    for name, shape in head.items():
        old = None if base is None else base.get(name)
        if old is None:
            if shape.body not in moved:
                found.append(_new_function(change, shape))
            continue
        if shape.branches > old.branches:
            grew = shape.branches - old.branches
            found.append(Evidence(
                EvidenceKind.MORE_BRANCHES, change.path, _first_added_line(change, shape), name,
                f"branches: {old.branches} → {shape.branches} in `{name}`", grew >= STRONG_BRANCH_GROWTH,
            ))
        old_defaults = dict(old.defaults)
        changed = [
            (parameter, old_defaults[parameter], value)
            for parameter, value in shape.defaults
            if parameter in old_defaults and old_defaults[parameter] != value
        ]
        if changed and shape.public:
            parameter, before, after = changed[0]
            found.append(Evidence(
                EvidenceKind.CHANGED_DEFAULT, change.path, shape.line, name,
                f"default of `{parameter}` in `{name}`: `{before}` → `{after}`", False,
            ))
        elif shape.body != old.body and shape.branches <= old.branches:
            found.append(Evidence(
                EvidenceKind.CHANGED_BODY, change.path, _first_added_line(change, shape), name,
                f"`{name}` does something different than at the merge base", False,
            ))
    return found


def _base_texts(base: TreeReader | None, paths: list[str]) -> dict[str, str]:
    if base is None or not paths:
        return {}
    base.prefetch(paths)
    texts = {}
    for path in paths:
        text = base.read_text(path)
        if text is not None:
            texts[path] = text
    return texts


def analyse(request: ReviewRequest) -> list[Evidence]:
    """Evidence over every changed source file that is not a test, in file order."""
    changes = [change for change in reviewable_changes(request) if is_behaviour_file(change.path)]
    if not changes:
        return []
    # The base side of every changed source file: those compared, and deleted ones code moved from.
    wanted = sorted(
        {path for change in changes if (path := _base_path(change)) is not None}
        | {
            change.path
            for change in request.target.files
            if change.status is ChangeStatus.DELETED and is_behaviour_file(change.path)
        }
    )
    base_texts = _base_texts(base_reader_for(request.target), wanted)
    base_shapes: dict[str, Shapes | None] = {
        path: shapes_of(text, path, language_of(path)) for path, text in base_texts.items()
    }
    moved = {shape.body for shapes in base_shapes.values() if shapes for shape in shapes.values()}
    evidence: list[Evidence] = []
    for change in changes:
        language = language_of(change.path)
        base_path = _base_path(change)
        base = None if base_path is None else base_shapes.get(base_path)
        if base_path is not None and base is None:
            continue  # unreadable or unparsable at the merge base: no evidence rather than a guess
        head = _head_shapes(request, change, language)
        if head is not None:
            evidence += compare(change, base, head, moved)
    return evidence
