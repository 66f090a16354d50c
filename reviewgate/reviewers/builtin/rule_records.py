"""What each bug-finding rule has earned: its measured record on the development set (findings,
how many were judged to hold), and the severity that record allows.

The bar: a rule blocks only where it has earned it. A rule with no record yet, or one
below 4 in 5 findings holding, or with fewer than 5 findings read, reports at minor (annotated,
never blocking) until it earns more. docs/lenses.md carries the same table ("Record of the bug
rules"); tests/test_lens_docs.py checks the two agree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import NamedTuple

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.diff import FileChange
from reviewgate.reviewers.builtin.common import (
    Language,
    language_of,
    lens_finding,
    parse_python,
    parse_python_touched,
    reviewable_changes,
)

# Enough findings read, and enough of them holding, for a rule to block.
MIN_FINDINGS_READ = 5
MIN_HOLDING_SHARE = 0.8

RULE_OPEN_REDIRECT = "security/open-redirect"
RULE_REGEX_INJECTION = "security/regex-injection"
RULE_PROTOTYPE_POLLUTION = "security/prototype-pollution"
RULE_DISCARDED_GO_ERROR = "correctness/discarded-error-used"
RULE_WRONG_EXCEPTION = "correctness/wrong-exception"
RULE_LITERAL_TYPO = "correctness/literal-typo"
RULE_MODULO_BIAS = "security/modulo-bias"
RULE_LISTENER_LEAK = "correctness/listener-leak"


class RuleRecord:
    """Findings the rule made on the development set and how many of them held, read by hand;
    None when the rule has not been measured. (A plain class: a dataclass costs a millisecond of
    every run's start-up.)"""

    __slots__ = ("findings", "holding", "where")

    def __init__(self, findings: int | None = None, holding: int | None = None, where: str = "unmeasured") -> None:
        self.findings = findings
        self.holding = holding
        self.where = where

    @property
    def earned(self) -> bool:
        if self.findings is None or self.holding is None or self.findings < MIN_FINDINGS_READ:
            return False
        return self.holding >= MIN_HOLDING_SHARE * self.findings

    @property
    def precision(self) -> str:
        if self.findings is None or self.holding is None:
            return "unmeasured"
        return f"{self.holding}/{self.findings}"


# Measured on 2026-12-01 (docs/lenses.md, "Record of the bug rules"): the last 50 merged PRs of
# express, flask, gin, starlette, click, commander.js and zod through the history benchmark (no
# bug rule fired; none on the 11 PRs a later fix touched), and every Python, JS/TS and Go file of
# the same seven repositories read as if added (the one finding below).
_DEVELOPMENT_SET = "350 merged PRs and the whole trees of 7 repositories"
RECORDS: dict[str, RuleRecord] = {
    RULE_OPEN_REDIRECT: RuleRecord(0, 0, _DEVELOPMENT_SET),
    RULE_REGEX_INJECTION: RuleRecord(0, 0, _DEVELOPMENT_SET),
    RULE_PROTOTYPE_POLLUTION: RuleRecord(0, 0, _DEVELOPMENT_SET),
    RULE_DISCARDED_GO_ERROR: RuleRecord(1, 1, _DEVELOPMENT_SET),
    RULE_WRONG_EXCEPTION: RuleRecord(0, 0, _DEVELOPMENT_SET),
    RULE_LITERAL_TYPO: RuleRecord(0, 0, _DEVELOPMENT_SET),
    RULE_MODULO_BIAS: RuleRecord(0, 0, _DEVELOPMENT_SET),
    RULE_LISTENER_LEAK: RuleRecord(0, 0, _DEVELOPMENT_SET),
}


def earned_severity(rule: str) -> Severity:
    """Major once the rule's record holds 4 in 5 on at least 5 findings read; minor before."""
    return Severity.MAJOR if RECORDS[rule].earned else Severity.MINOR


def record_note(rule: str) -> str:
    record = RECORDS[rule]
    if record.earned:
        return ""
    if record.findings is None:
        return " Reported as minor: this rule has no measured record yet."
    held = (
        "it has found nothing there yet"
        if not record.findings
        else f"{record.holding} of its {record.findings} findings there held"
    )
    return (
        f" Reported as minor: a new rule blocks once 4 in 5 of at least {MIN_FINDINGS_READ} of its findings "
        f"on the development set hold, and {held}."
    )


def bug_finding(
    *, rule: str, category: str, title: str, body: str, path: str, line: int, code: str
) -> Finding:
    """A finding of one of the rules above, at the severity its record allows."""
    return lens_finding(
        rule=rule,
        category=category,
        finding_class=FindingClass.CORRECTNESS,
        severity=earned_severity(rule),
        title=title,
        body=body + record_note(rule),
        path=path,
        line=line,
        code=code,
    )


def changed_sources(
    request: ReviewRequest, languages: Collection[Language], needles: tuple[str, ...]
) -> Iterator[tuple[FileChange, Language, str]]:
    """Each changed file of the rule's languages whose text at head holds one of `needles` (a
    cheap test before any parse: a rule about redirects reads no file that never says so)."""
    for change in reviewable_changes(request):
        language = language_of(change.path)
        if language not in languages:
            continue
        text = request.head.read_text(change.path)
        if text is not None and any(needle in text for needle in needles):
            yield change, language, text


# What a bug rule reads a file with: `ast` for Python, the blanked text for the C-like ones.
PythonReader = Callable[[ast.Module, str, str, dict[int, str]], Iterable[Finding]]
TextReader = Callable[[str, str, dict[int, str], Language], Iterable[Finding]]
# Whether a tree holds what the rule looks for on an added line (a sink, a reduction).
PythonCandidates = Callable[[ast.Module, dict[int, str]], bool]


class TwoReaderLens(NamedTuple):
    """A bug rule read with `ast` in Python files and from blanked text in the C-like ones: the
    files of its languages that mention what it looks for, each to the reader of its language.

    A rule reports only what spans an added line, so its Python reader gets the tree of the
    statements the change touches (common.parse_python_touched). One that reads the rest of the
    module too (where a value flows from, a module's constants) says what it looks for on an added
    line in `python_candidates`, asked of those statements: found, its reader gets the whole
    module."""

    rule: str
    languages: frozenset[Language]
    needles: tuple[str, ...]
    python: PythonReader
    text: TextReader
    python_candidates: PythonCandidates | None = None

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change, language, text in changed_sources(request, self.languages, self.needles):
            added = change.added_lines()
            if language is Language.PYTHON:
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
