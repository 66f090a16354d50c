"""Which findings go on the diff (workflow-command annotations, check-run annotations, inline
comments): every one that blocks or is major and above, and a minor one only when it carries
evidence a reviewer acts on at that line (or a checked one-click fix): a concrete mechanism (a swallowed or dropped failure, an
injection, a secret) or a copy with its source named. Generic remarks at minor ("new behaviour
without a test", a narrating comment, a process note, a suppression's wording) and nits go to the
summary only, counted there: on real pull requests most of them were noise on the diff.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from reviewgate.findings import DEMOTED, Finding, Severity
from reviewgate.reviewers.builtin.lens_findings import SOURCE as BUILTIN_SOURCE

# Rule families whose minor findings say what is wrong at the line and why: a specific failure path,
# a security mechanism, a copy with its source quoted.
EVIDENCE_FAMILIES = frozenset({"correctness", "security", "reuse"})
# The others (tests, readability, process, suppression) are generic or about the process.


def annotated(finding: Finding, blocking: bool) -> bool:
    """Whether the finding is shown on its line of the diff."""
    if blocking or finding.severity.rank > Severity.MINOR.rank:
        return True
    if isinstance(finding.extra.get("suggestion"), dict):
        return True  # a checked one-click fix: the reviewer applies it there
    if finding.severity is Severity.NIT or finding.path is None or finding.line is None:
        return False
    if finding.extra.get(DEMOTED):
        return False  # the lens found it intended or written before this change: nothing to act on here
    if finding.source != BUILTIN_SOURCE:
        return True  # a model's or an imported tool's finding on a line names its own mechanism
    return finding.rule_id.split("/", 1)[0] in EVIDENCE_FAMILIES


def not_annotated_note(findings: Iterable[Finding], is_blocking: Callable[[Finding], bool]) -> str | None:
    """What the summary says of the findings kept off the diff; None when there are none."""
    count = sum(1 for finding in findings if not annotated(finding, is_blocking(finding)))
    if not count:
        return None
    return f"{count} minor or nit finding(s) not annotated on the diff (listed in summary.md)."


def add_not_annotated_note(findings: Iterable[Finding], is_blocking: Callable[[Finding], bool],
                           notes: list[str]) -> None:
    """The note in `notes` once, whichever annotation sink runs first."""
    note = not_annotated_note(findings, is_blocking)
    if note is not None and note not in notes:
        notes.append(note)
