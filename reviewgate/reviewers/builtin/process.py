"""Seed 000's process rules that a diff alone can show."""

from __future__ import annotations

from collections.abc import Iterator

from reviewgate.context import ReviewRequest
from reviewgate.diff import ChangeStatus
from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id

REPRODUCTION_DIRECTORIES = ("repro", ".repro")


def is_reproduction_file(path: str) -> bool:
    return path.split("/", 1)[0] in REPRODUCTION_DIRECTORIES


class ReproductionFilesLens:
    """Seed 000: "Anything under repro/ or .repro/ in the diff is a systematic major too."
    A reproduction harness belongs on the card or in the tests, not in the shipped tree."""

    rule = "process/repro-in-diff"

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in request.target.files:
            if change.status is ChangeStatus.DELETED or not is_reproduction_file(change.path):
                continue
            title = "Reproduction files are part of the change"
            yield Finding(
                id=make_finding_id("builtin", change.path, "reproduction", title),
                finding_class=FindingClass.SYSTEMATIC,
                severity=Severity.MAJOR,
                category="reproduction",
                rule=self.rule,
                title=title,
                body=(
                    f"`{change.path}` is under a reproduction directory. A reproduction is an acceptance "
                    "harness for the review, not product code: keep it on the issue or turn it into a "
                    "regression test, and remove it from the branch."
                ),
                source="builtin",
                path=change.path,
            )
