"""A suppression that names no rule the builtin reviewer knows silences nothing: said as a minor
finding on its line, with the id most likely meant (docs/lenses.md, "Suppressions")."""

from __future__ import annotations

import re
from collections.abc import Iterator

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.file_kinds import is_test_data
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.path_kinds import is_documentation
from reviewgate.reviewers.builtin.rules import closest_rule, is_known_rule
from reviewgate.reviewers.builtin.suppressions import RULE_UNKNOWN_RULE, added_suppressions

# What a rule id looks like (`security`, `correctness/swallowed-exception`). A placeholder in a
# docstring or a help text (`ignore[...]`, `ignore[<rule id>]`) names no rule at all: not a typo.
_ID_SHAPED = LazyPattern(r"[a-z0-9][a-z0-9_-]*(?:/[a-z0-9][a-z0-9_.-]*)?", re.IGNORECASE)


def unknown_rule_title(name: str) -> str:
    suggestion = closest_rule(name)
    guess = f"; did you mean {suggestion}?" if suggestion else ""
    return f"ignore[{name}] names no rule{guess}"


def unknown_rule_names(request: ReviewRequest) -> Iterator[Finding]:
    """Every name in a suppression the change adds that is neither a builtin rule id nor a family.
    Test data and documentation are skipped: a marker there is an example, not a suppression."""
    for change in reviewable_changes(request):
        if is_test_data(change.path) or is_documentation(change.path):
            continue
        for number, text, suppression in added_suppressions(change):
            for name in sorted(suppression.rules):
                if is_known_rule(name) or not _ID_SHAPED.fullmatch(name):
                    continue
                yield lens_finding(
                    rule=RULE_UNKNOWN_RULE,
                    category="suppression",
                    finding_class=FindingClass.SYSTEMATIC,
                    severity=Severity.MINOR,
                    title=unknown_rule_title(name),
                    body=(
                        f"`reviewgate: ignore[...]` takes rule ids as every report shows them (the console, "
                        f"summary.md, annotation titles) or a family such as `security`; `{name}` is neither, so "
                        "this comment suppresses nothing. Every rule id is listed in docs/lenses.md."
                    ),
                    path=change.path,
                    line=number,
                    code=text,
                )
