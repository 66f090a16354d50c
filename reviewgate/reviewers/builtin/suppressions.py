"""`reviewgate: ignore[rule-id] reason` on a finding's line or the line above silences that rule there.

docs/lenses.md: the finding is kept, dismissed with the reason, and listed in the report (gate.py never
blocks on a dismissed finding); a suppression without a reason is itself a minor finding. Whether the
change under review added the suppression is recorded on the finding (`extra["suppression"]`): the
target side's `[review] branch_suppressions` decides what such a suppression may do
(policy/suppressions.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.file_kinds import is_test_data
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.rule import Example, File, Rule
from reviewgate.text import lines_at

MISSING_REASON = Rule(
    id="suppression/missing-reason",
    finding_class=FindingClass.SYSTEMATIC,
    severity=Severity.MINOR,
    short="Suppression without a reason",
    full=(
        "An added `reviewgate: ignore[...]` gives no reason: the next reader cannot tell whether it "
        "still holds."
    ),
    tags=("maintainability", "suppression"),
    precision="very-high",
    fires_on="an added `reviewgate: ignore[...]` with no reason",
    not_on="",
    fires=(
        Example(
            file=File("app/calc.py", "python", """\
def calculate(expression):
    # reviewgate\x3a ignore[security/eval]
    return eval(expression)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/calc.py", "python", """\
def calculate(expression):
    # reviewgate\x3a ignore[security/eval] expressions come from our own config file
    return eval(expression)
"""),
        ),
    ),
)

UNKNOWN_RULE = Rule(
    id="suppression/unknown-rule",
    finding_class=FindingClass.SYSTEMATIC,
    severity=Severity.MINOR,
    short="Suppression names no known rule",
    full=(
        "An added `reviewgate: ignore[...]` names neither a rule id nor a family, so it suppresses "
        "nothing; the finding's title names the closest id."
    ),
    tags=("maintainability", "suppression"),
    precision="very-high",
    fires_on=(
        "an added `reviewgate: ignore[...]` naming neither a rule id of this table nor a family "
        "(`ignore[correctness/swallowed-failure]`): the title names the closest id (`did you mean "
        "correctness/swallowed-exception?`)"
    ),
    not_on=(
        "known ids and families; placeholders that are not shaped like an id (`ignore[...]`, "
        "`ignore[<rule id>]` in a help text); test data and documentation files (a marker there is an "
        "example)"
    ),
    fires=(
        Example(
            file=File("app/cache.py", "python", """\
import json


def load(text):
    try:
        return json.loads(text)
    # reviewgate\x3a ignore[correctness/swallowed-failure] the cache is optional
    except Exception:
        return {}
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/cache.py", "python", """\
import json


def load(text):
    try:
        return json.loads(text)
    # reviewgate\x3a ignore[correctness/swallowed-exception] the cache is optional
    except Exception:
        return {}
"""),
        ),
    ),
)

RULES = (MISSING_REASON, UNKNOWN_RULE)


RULE_MISSING_REASON = MISSING_REASON.id
RULE_UNKNOWN_RULE = UNKNOWN_RULE.id

# What every suppression holds, looked for in a file's diff before its added lines are read.
_MARKER = b"reviewgate:"
_SUPPRESSION = LazyPattern(r"reviewgate:\s*ignore\[(?P<rules>[^\]]*)\](?P<reason>.*)")
# Comment closers that end the line in languages with block comments (`*/`, `-->`, `#}`).
_CLOSERS = LazyPattern(r"\s*(?:\*/|-->|#\}|%\})\s*$")


class Suppression(NamedTuple):
    """A `reviewgate: ignore[...]` comment: the rules it names, its reason and its line."""

    rules: frozenset[str]
    reason: str
    line: int = 0  # where it was found (1-based), once found


def parse_suppression(text: str) -> Suppression | None:
    match = _SUPPRESSION.search(text)
    if match is None:
        return None
    rules = frozenset(item.strip() for item in match.group("rules").split(",") if item.strip())
    reason = _CLOSERS.sub("", match.group("reason")).strip(" \t:-—")
    return Suppression(rules, reason)


def added_suppressions(change: FileChange) -> Iterator[tuple[int, str, Suppression]]:
    """Each suppression the change adds to the file, in line order, with its line's number and text."""
    if not change.may_add(_MARKER):
        return
    for number, text in sorted(change.added_lines().items()):
        suppression = parse_suppression(text)
        if suppression is not None:
            yield number, text, suppression


def _covers(suppression: Suppression, rule: str) -> bool:
    return rule in suppression.rules or rule.split("/", 1)[0] in suppression.rules


def apply_suppressions(request: ReviewRequest, findings: Iterable[Finding]) -> list[Finding]:
    """Each finding with a matching suppression on its line or the line above is dismissed."""
    result = []
    marked: dict[str, bool] = {}  # by path: whether the file holds the marker at all
    for finding in findings:
        suppression = _suppression_for(request, finding, marked)
        if suppression is not None:
            reason = suppression.reason or "(no reason given)"
            change = request.target.file(finding.path or "")
            added = change is not None and suppression.line in change.added_lines()
            record = {"line": suppression.line, "reason": suppression.reason, "added_by_change": added}
            finding = finding.with_changes(dismissed=f"suppressed: {reason}",
                                           extra={**finding.extra, "suppression": record})
        result.append(finding)
    return result


def _suppression_for(request: ReviewRequest, finding: Finding, marked: dict[str, bool]) -> Suppression | None:
    if finding.path is None or finding.line is None or not finding.rule:
        return None
    data = request.head.read_bytes(finding.path)
    if data is None:
        return None
    # A file without the marker anywhere has no suppression: one search of it, not the lines of
    # each finding counted out (a large change has hundreds of findings, most in such files).
    if finding.path not in marked:
        marked[finding.path] = _MARKER in data
    if not marked[finding.path]:
        return None
    # Only the two lines: a finding in a file of 150 MB must not split all of it into lines.
    first = max(finding.line - 1, 1)
    lines = lines_at(data, first, finding.line)
    for number in (finding.line, finding.line - 1):
        if first <= number < first + len(lines):
            suppression = parse_suppression(lines[number - first])
            if suppression is not None and _covers(suppression, finding.rule):
                return suppression._replace(line=number)
    return None


def missing_reasons(request: ReviewRequest) -> Iterator[Finding]:
    """Every suppression the change adds without saying why."""
    for change in reviewable_changes(request):
        if is_test_data(change.path):
            continue  # a marker in test data is what the test is about, not a suppression
        for number, text, suppression in added_suppressions(change):
            if suppression.reason:
                continue
            yield lens_finding(
                rule=RULE_MISSING_REASON,
                category="suppression",
                finding_class=FindingClass.SYSTEMATIC,
                severity=Severity.MINOR,
                title="Suppression without a reason",
                body=(
                    "A `reviewgate: ignore[...]` comment must say why the rule does not apply here "
                    "(`reviewgate: ignore[rule-id] the reason`), so the next reader can judge it."
                ),
                path=change.path,
                line=number,
                code=text,
            )

# No lens: the builtin reviewer calls missing_reasons itself, and suppression_names.py the check of names.
LENSES: tuple[()] = ()
