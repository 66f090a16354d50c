"""What the bug rules' lenses share: a finding at the severity the rule's record allows
(reviewers/builtin/rule.py, `Rule.reported_severity`), the changed files that mention what a rule
looks for, and the lens that reads Python with `ast` and the C-like languages from blanked text."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import NamedTuple

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass
from reviewgate.freeze.diff import FileChange
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.python_parsing import parse_python, parse_python_touched


def bug_finding(
    *, rule: str, category: str, title: str, body: str, path: str, line: int, code: str, chained: bool = False
) -> Finding:
    """A finding of a bug rule, at the severity its record allows, or at its declared severity
    where the finding is the rule's source→sink shape (`chained`, `Rule.chained`). The rule's
    declaration is read from the registry: the registry imports the lenses, so not at import."""
    from reviewgate.reviewers.builtin.rules import RULES_BY_ID

    declared = RULES_BY_ID[rule]
    chained = chained and bool(declared.chained)
    return lens_finding(
        rule=rule,
        category=category,
        finding_class=FindingClass.CORRECTNESS,
        severity=declared.severity if chained else declared.reported_severity,
        title=title,
        body=body + ("" if chained else declared.record_note()),
        path=path,
        line=line,
        code=code,
    )


def changed_sources(
    request: ReviewRequest, languages: Collection[Language], needles: tuple[str, ...] | None
) -> Iterator[tuple[FileChange, Language, str]]:
    """Each changed file of the rule's languages whose text at head holds one of `needles` (a
    cheap test before any parse: a rule about redirects reads no file that never says so); every
    one of them when `needles` is None (the lens asks `mentions` itself, when it has a cheaper test)."""
    for change in reviewable_changes(request):
        language = language_of(change.path)
        if language not in languages:
            continue
        text = request.head.read_text(change.path)
        if text is not None and (needles is None or mentions(text, needles)):
            yield change, language, text


def mentions(text: str, needles: tuple[str, ...]) -> bool:
    """Whether `text` holds one of `needles`: a search of the whole text for each needle it lacks."""
    return any(needle in text for needle in needles)


# What a bug rule reads a file with: `ast` for Python, the blanked text for the C-like ones.
PythonReader = Callable[[ast.Module, str, str, dict[int, str]], Iterable[Finding]]
TextReader = Callable[[str, str, dict[int, str], Language], Iterable[Finding]]
# Whether a tree holds what the rule looks for on an added line (a sink, a reduction).
PythonCandidates = Callable[[ast.Module, dict[int, str]], bool]


class TwoReaderLens(NamedTuple):
    """A bug rule read with `ast` in Python files and from blanked text in the C-like ones: the
    files of its languages that mention what it looks for, each to the reader of its language.

    A rule reports only what spans an added line, so its Python reader gets the tree of the
    statements the change touches (python_parsing.parse_python_touched). One that reads the rest of the
    module too (where a value flows from, a module's constants) says what it looks for on an added
    line in `python_candidates`, asked of those statements: found, its reader gets the whole
    module."""

    rule: str
    languages: frozenset[Language]
    needles: tuple[str, ...]
    python: PythonReader
    text: TextReader
    python_candidates: PythonCandidates | None = None
    # A Python file must also say this before it is parsed, where the rule's Python form needs
    # more than its needles (a flag its other languages do not have).
    python_mentions: Callable[[str], bool] | None = None

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, language, text in changed_sources(request, self.languages, self.needles):
            added = change.added_lines()
            if language is Language.PYTHON:
                if self.python_mentions is not None and not self.python_mentions(text):
                    continue
                tree = parse_python_touched(change, text)
                if tree is None:
                    continue
                if self.python_candidates is not None:
                    if not self.python_candidates(tree, added):
                        continue
                    whole = parse_python(text, change.path)
                    if whole is None:
                        continue
                    tree = whole
                yield from self.python(tree, text, change.path, added)
            else:
                yield from self.text(text, change.path, added, language)


def code_line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def matched(code: str) -> str:
    flat = " ".join(code.split()).replace("`", "'")
    return f"Matched `{flat if len(flat) <= 100 else flat[:99] + '…'}`"
