"""Swallowed failures outside Python (seed 000, item 5: "for every catch, default or fallback,
whether a real failure now looks like success"), found by careful tokenization of each language:
empty `catch` blocks (JavaScript, TypeScript, Java, C#, Kotlin), promise `.catch(() => {})`,
Go's `if err != nil { return nil }` and `_ = err`, shell `|| true` and `set +e` in CI and scripts."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from reviewgate.context import ReviewRequest
from reviewgate.diff import FileChange
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.reviewers.builtin.common import (
    C_LIKE,
    Language,
    comment_on,
    is_ci_or_script,
    language_of,
    lens_finding,
    reviewable_changes,
)

RULE_EMPTY_CATCH = "correctness/empty-catch"
RULE_DROPPED_ERROR = "correctness/dropped-error"
RULE_IGNORED_EXIT = "correctness/ignored-exit-status"

_NOTHING = r"(?:\s|//[^\n]*|/\*.*?\*/)*"  # whitespace and comments only: the block does nothing
_EMPTY_CATCH = re.compile(r"\bcatch\b\s*(?:\([^(){}]*\))?\s*\{" + _NOTHING + r"\}", re.DOTALL)
_PROMISE_CATCH = re.compile(
    r"\.catch\(\s*(?:async\s+)?(?:\(\s*[\w$]*\s*(?::\s*[\w$]+)?\s*\)|[\w$]+)\s*=>\s*"
    r"(?:\{" + _NOTHING + r"\}|null|undefined|void 0)\s*\)"
    r"|\.catch\(\s*function\s*[\w$]*\s*\([^)]*\)\s*\{" + _NOTHING + r"\}\s*\)",
    re.DOTALL,
)
_GO_DROPPED = re.compile(
    r"\bif\s+(?:[^{};\n]+;\s*)?(?P<name>[\w.]*[eE]rr\w*)\s*!=\s*nil\s*\{\s*(?:return\s+nil(?:\s*,\s*nil)*\s*)?\}"
)
_GO_BLANK = re.compile(r"^\s*_\s*=\s*(?P<name>err\w*|\w*Err)\s*$")
_SHELL_TRUE = re.compile(r"\|\|\s*(?:true|:)\s*(?:$|[;&)#'\"])")
_SHELL_SET_E = re.compile(r"(?:^|[\s;'\"])set\s+(?:\+e|\+o\s+errexit)\b")


def _line_starts(text: str) -> list[int]:
    return [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]


class OtherLanguagesSwallowedFailureLens:
    rules = (RULE_EMPTY_CATCH, RULE_DROPPED_ERROR, RULE_IGNORED_EXIT)

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            language = language_of(change.path)
            if is_ci_or_script(change.path):
                yield from self._shell(change, language)
            if language not in C_LIKE:
                continue
            text = request.head.read_text(change.path)
            if text is None:
                continue
            yield from self._blocks(change, language, text)

    def _blocks(self, change: FileChange, language: Language, text: str) -> Iterator[Finding]:
        added = change.added_lines()
        starts = _line_starts(text)
        lines = text.split("\n")
        patterns: list[tuple[re.Pattern[str], str]] = []
        if language is Language.GO:
            patterns.append((_GO_DROPPED, RULE_DROPPED_ERROR))
        else:
            patterns += [(_EMPTY_CATCH, RULE_EMPTY_CATCH), (_PROMISE_CATCH, RULE_EMPTY_CATCH)]
        for pattern, rule in patterns:
            for match in pattern.finditer(text):
                first = bisect.bisect_right(starts, match.start())
                last = bisect.bisect_right(starts, match.end() - 1)
                if not any(number in added for number in range(first, last + 1)):
                    continue
                if comment_on(first, lines[first - 1], language) is not None and lines[
                    first - 1
                ].strip().startswith(("//", "/*", "*")):
                    continue  # commented-out code is the readability lens's business
                yield self._finding(change.path, first, last, rule, lines[first - 1])
        if language is Language.GO:
            for number, line in added.items():
                if _GO_BLANK.match(line):
                    yield self._finding(change.path, number, number, RULE_DROPPED_ERROR, line)

    def _shell(self, change: FileChange, language: Language) -> Iterator[Finding]:
        for number, line in sorted(change.added_lines().items()):
            code = line.split(" #", 1)[0] if language is not Language.OTHER else line
            if code.lstrip().startswith("#"):
                continue
            if _SHELL_TRUE.search(code) or _SHELL_SET_E.search(code):
                yield self._finding(change.path, number, number, RULE_IGNORED_EXIT, line)

    def _finding(self, path: str, line: int, end_line: int, rule: str, code: str) -> Finding:
        title, body = _WORDING[rule]
        return lens_finding(
            rule=rule,
            category="swallowed-failure",
            finding_class=FindingClass.CORRECTNESS,
            severity=Severity.MAJOR,
            title=title,
            body=body,
            path=path,
            line=line,
            end_line=end_line if end_line != line else None,
            code=code,
        )


_WORDING = {
    RULE_EMPTY_CATCH: (
        "Empty catch swallows the failure",
        "This handler catches the error and does nothing with it, so a real failure here looks like "
        "success to the caller. Handle the specific error you expect, and log, rethrow or return an "
        "explicit error for the rest.",
    ),
    RULE_DROPPED_ERROR: (
        "Non-nil error is dropped",
        "The error is checked and then thrown away (or assigned to `_`), so the caller sees success "
        "when the operation failed. Return it (wrapped with context), or handle the specific case.",
    ),
    RULE_IGNORED_EXIT: (
        "Failing command's exit status is ignored",
        "`|| true` / `set +e` makes a failed command look like success, so CI passes when the step "
        "broke. Check for the specific condition you expect instead.",
    ),
}
