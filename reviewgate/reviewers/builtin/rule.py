"""What a builtin rule is, declared once at the top of the lens module that checks it: its id,
its words (what code scanning and docs/lenses.md show), its measured record and its examples.
reviewers/builtin/rules.py gathers the declarations; tools/rule_docs.py writes the docs from them.

Named tuples, not dataclasses: every run imports every lens module, and a frozen dataclass costs
about a millisecond of start-up each (tests/test_startup_imports.py).
"""

from __future__ import annotations

from typing import NamedTuple

from reviewgate.findings import FindingClass, Severity

# Enough findings read, and enough of them holding, for a bug rule to block.
MIN_FINDINGS_READ = 5
MIN_HOLDING_SHARE = 0.8


class Record(NamedTuple):
    """Findings a rule made on the development set and how many of them held, read by hand."""

    findings: int
    holding: int
    where: str  # the development set it was measured on

    @property
    def earned(self) -> bool:
        return self.findings >= MIN_FINDINGS_READ and self.holding >= MIN_HOLDING_SHARE * self.findings


class File(NamedTuple):
    """One file of an example: where it is, its language (the Markdown fence's) and its text.

    The text is a string in a lens module, read line by line when reviewgate reviews its own
    source: where a line holds what a lens looks for (a `#` comment, a suppression's `:`, a key's
    `=`), that character is written as an escape (`\\x23`, `\\x3a`, `\\x3d`), the same text to Python."""

    path: str
    language: str
    code: str


class Example(NamedTuple):
    """A change that fires the rule, or one that does not: the file it is about (the last one the
    change writes), the files at the merge base and the other files the change writes."""

    file: File
    caption: str = ""  # one sentence that says what the example shows
    base: tuple[File, ...] = ()
    branch: tuple[File, ...] = ()
    branch_name: str = "feature"


class Rule(NamedTuple):
    """One rule as every report and docs/lenses.md show it. A bug rule (`by_record`) reports at
    minor until its record earns `severity`: 4 in 5 of at least 5 findings read holding."""

    id: str  # family/name: what findings, suppressions and `[lenses] disable` use
    finding_class: FindingClass
    severity: Severity  # the severity its findings usually have
    short: str  # one line, what code scanning shows next to each result
    full: str  # what fires it and why it matters (Markdown)
    tags: tuple[str, ...]  # code scanning filters on them; `security` marks a security rule
    precision: str  # very-high | high | medium | low (SARIF `properties.precision`)
    fires_on: str  # what it reports, in full (Markdown)
    not_on: str  # what it leaves alone, in full (Markdown; may be empty)
    fires: tuple[Example, ...]  # the first is SARIF's example
    does_not_fire: tuple[Example, ...]
    severity_note: str = ""  # when it reports at another severity: " (minor with a reason)"
    by_record: bool = False
    record: Record | None = None  # None: not measured yet
    # A bug rule's source→sink shape that reports at `severity` before the record earns it, as
    # the docs say it ("where a parameter a link sets reaches it"); "" for none.
    chained: str = ""

    @property
    def earned(self) -> bool:
        return not self.by_record or (self.record is not None and self.record.earned)

    @property
    def reported_severity(self) -> Severity:
        """The severity its findings report at today: a bug rule's `severity` only once earned."""
        return self.severity if self.earned else Severity.MINOR

    @property
    def precision_measured(self) -> str:
        return "unmeasured" if self.record is None else f"{self.record.holding}/{self.record.findings}"

    def record_note(self) -> str:
        """What a bug rule's finding adds while its record keeps it at minor."""
        if self.earned:
            return ""
        if self.record is None:
            return " Reported as minor: this rule has no measured record yet."
        held = (
            "it has found nothing there yet"
            if not self.record.findings
            else f"{self.record.holding} of its {self.record.findings} findings there held"
        )
        return (
            f" Reported as minor: a new rule blocks once 4 in 5 of at least {MIN_FINDINGS_READ} of its findings "
            f"on the development set hold, and {held}."
        )
