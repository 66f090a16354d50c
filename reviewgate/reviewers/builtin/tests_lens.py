"""New behaviour needs tests; a bug fix without a regression test is incomplete (seed 000 item 4).

Deliberately coarse, for precision: any test file added or changed in the diff counts as the
change's tests, because which test covers which function cannot be known without running them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.diff import ChangeStatus, FileChange
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.common import (
    CODE_LANGUAGES,
    Language,
    is_test_file,
    language_of,
    lens_finding,
    nodes_of,
    parse_python_at_head,
    reviewable_changes,
)

RULE_MISSING_TESTS = "tests/missing-tests"
RULE_FIX_WITHOUT_TEST = "tests/fix-without-test"

# Files that hold configuration or wiring, not behaviour a unit test would pin down.
_NOT_BEHAVIOUR = re.compile(r"(?:^setup\.py$|^conftest\.py$|^noxfile\.py$|\.config\.[cm]?[jt]s$|\.d\.ts$)")
_NOT_BEHAVIOUR_DIRECTORIES = frozenset(
    {"docs", "doc", "examples", "example", "benchmarks", "scripts", "migrations"}
)

_C_LIKE_BEHAVIOUR: dict[Language, re.Pattern[str]] = {
    Language.GO: re.compile(r"^func\b|^\s*(?:\}\s*else\s+)?(?:if|switch)\b"),
    Language.JAVASCRIPT: re.compile(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b"
        r"|^\s*(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*=\s*(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*=>"
        r"|^\s*(?:(?:public|private|protected|static|async|get|set)\s+)*(?!(?:if|for|while|switch|catch|function)\b)"
        r"[\w$]+\s*\([^)]*\)\s*(?::\s*[^={]+)?\{\s*$"
        r"|^\s*(?:\}\s*else\s+)?(?:if|switch)\s*\("
    ),
    Language.JAVA: re.compile(
        r"^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|override|virtual|async|"
        r"internal|suspend|fun)\s+)+[\w<>\[\],.?\s]*\(|^\s*(?:\}\s*else\s+)?(?:if|switch|when)\s*\("
    ),
}
_C_LIKE_BEHAVIOUR[Language.TYPESCRIPT] = _C_LIKE_BEHAVIOUR[Language.JAVASCRIPT]
_C_LIKE_BEHAVIOUR[Language.KOTLIN] = _C_LIKE_BEHAVIOUR[Language.JAVA]
_C_LIKE_BEHAVIOUR[Language.CSHARP] = _C_LIKE_BEHAVIOUR[Language.JAVA]


def is_behaviour_file(path: str) -> bool:
    pure = PurePosixPath(path)
    return (
        language_of(path) in CODE_LANGUAGES
        and not is_test_file(path)
        and not _NOT_BEHAVIOUR.search(pure.name)
        and not any(part in _NOT_BEHAVIOUR_DIRECTORIES for part in pure.parts[:-1])
    )


def _is_main_guard(node: ast.If) -> bool:
    return "__name__" in ast.unparse(node.test)


def first_new_behaviour(request: ReviewRequest, change: FileChange) -> int | None:
    """The first added line that starts a function, method or branch, or None."""
    added = change.added_lines()
    language = language_of(change.path)
    if language is Language.PYTHON:
        parsed = parse_python_at_head(request, change.path)
        if parsed is None:
            return None
        tree = parsed[0]
        kinds: tuple[type[ast.stmt], ...] = (ast.FunctionDef, ast.AsyncFunctionDef, ast.While, ast.Try, ast.Match)
        starts = [node.lineno for kind in kinds for node in nodes_of(tree, kind) if node.lineno in added]
        # Unparsing a condition costs more than the rest: only for branches on added lines.
        starts += [
            node.lineno for node in nodes_of(tree, ast.If) if node.lineno in added and not _is_main_guard(node)
        ]
        return min(starts, default=None)
    pattern = _C_LIKE_BEHAVIOUR.get(language)
    if pattern is None:
        return None
    return next((number for number, text in sorted(added.items()) if pattern.search(text)), None)


def changes_tests(request: ReviewRequest) -> bool:
    return any(
        is_test_file(change.path) and change.status is not ChangeStatus.DELETED
        for change in request.target.files
    )


class TestsLens:
    __test__ = False  # not a pytest test class, whatever its name says

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        if changes_tests(request):
            return
        if request.marked_as_fix:
            yield lens_finding(
                rule=RULE_FIX_WITHOUT_TEST,
                category="tests",
                finding_class=FindingClass.CORRECTNESS,
                severity=Severity.MAJOR,
                title="Fix without a regression test",
                body=(
                    "The change is marked as a fix (branch name or head commit subject) but adds or changes "
                    "no test. Seed 000: a bug fix without a regression test is incomplete; add the test that "
                    "fails without the fix."
                ),
                path=None,
            )
        for change in reviewable_changes(request):
            if not is_behaviour_file(change.path):
                continue
            line = first_new_behaviour(request, change)
            if line is None:
                continue
            yield lens_finding(
                rule=RULE_MISSING_TESTS,
                category="tests",
                finding_class=FindingClass.CORRECTNESS,
                severity=Severity.MAJOR,
                title="New behaviour without a test change",
                body=(
                    "This file gains functions or branches, and the change adds or changes no test file. "
                    "Seed 000: new behaviour needs tests."
                ),
                path=change.path,
                line=line,
                code=change.added_lines()[line],
            )
