"""Which added lines change the code in substance. A formatter's pass (re-indenting, re-wrapping,
spaces around operators) rewrites lines without changing what they say: compared with the lines
the change removes from the same file, whitespace ignored, such a line was there already. A
finding whose lines the change only re-formats is about code the change did not write: it is
left out, and the review notes how many were (a reformat of 21,000 lines is not 17 findings on
code that was already there). A committed secret is reported wherever it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding
from reviewgate.freeze.diff import FileChange, LineKind
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.lenses.secrets import RULE_SECRET
from reviewgate.reviewers.builtin.lenses.tests_needed import RULE_FIX_WITHOUT_TEST

_WHITESPACE = LazyPattern(r"\s+")


def reformatted_lines(change: FileChange) -> set[int]:
    """Added lines whose text, whitespace aside, is a line the change removes from the same file
    (each removed line pairs with one added line), and lines that only re-wrap what they replace."""
    if not change.stats.removed_lines:
        return set()
    # The DRY lens's modules, loaded only for a finding on a file the change removes lines from.
    from reviewgate.reviewers.builtin.lenses.duplication.rules import rewrapped_lines

    removed: Counter[str] = Counter()
    added: list[tuple[int, str]] = []
    for hunk in change.hunks:
        for line in hunk.lines:
            if line.kind is LineKind.REMOVED:
                removed[_WHITESPACE.sub("", line.text)] += 1
            elif line.kind is LineKind.ADDED and line.new_line is not None:
                added.append((line.new_line, _WHITESPACE.sub("", line.text)))
    found = set()
    for number, folded in added:
        if removed[folded] > 0:
            removed[folded] -= 1
            found.add(number)
    return found | rewrapped_lines(change)


def _only_reformatted(finding: Finding, added: Mapping[int, str], reformatted: set[int]) -> bool:
    """Whether every added line in the finding's span is re-formatted (and it spans one at all)."""
    if finding.line is None:
        return False
    span = range(finding.line, (finding.end_line or finding.line) + 1)
    touched = [number for number in span if number in added]
    return bool(touched) and all(number in reformatted for number in touched)


def keep_substance(request: ReviewRequest, findings: Iterable[Finding]) -> tuple[list[Finding], list[str]]:
    """The findings less those on lines the change only re-formats, and one note per file that had any."""
    changes = {change.path: change for change in request.target.files}
    reformatted: dict[str, set[int]] = {}
    kept: list[Finding] = []
    left_out: Counter[str] = Counter()
    for finding in findings:
        change = changes.get(finding.path or "")
        # A secret is reported wherever it is; a fix without a test is about the whole change.
        if change is None or finding.rule in (RULE_SECRET, RULE_FIX_WITHOUT_TEST) or finding.line is None:
            kept.append(finding)
            continue
        if change.path not in reformatted:
            reformatted[change.path] = reformatted_lines(change)
        if reformatted[change.path] and _only_reformatted(finding, change.added_lines(), reformatted[change.path]):
            left_out[change.path] += 1
        else:
            kept.append(finding)
    notes = [f"{path}: {count} finding(s) left out on lines the change only re-formats "
             "(the same text, whitespace aside, as lines it removes)" for path, count in left_out.items()]
    return kept, notes
