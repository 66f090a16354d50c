"""A fixed GateResult for golden-file tests of the sinks: every value deterministic."""

from __future__ import annotations

from pathlib import Path

from reviewgate.ci.context import CiContext
from reviewgate.config import Config
from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id
from reviewgate.freeze.diff import ChangeStatus, DiffLine, FileChange, Hunk, LineKind
from reviewgate.freeze.exclusions import ExcludedFile
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.gate import decide
from reviewgate.result import GateResult
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus, Usage
from reviewgate.verify.outcome import ABSENT


def sample_finding(
    path: str | None = "app/jobs.py",
    line: int | None = 4,
    severity: Severity = Severity.MAJOR,
    finding_class: FindingClass = FindingClass.CORRECTNESS,
    category: str = "swallowed-failure",
    title: str = "Broad exception handler does nothing",
    body: str = "A real failure looks like success.",
    source: str = "builtin",
    dismissed: str | None = None,
    rule: str = "correctness/swallowed-exception",
) -> Finding:
    return Finding(
        id=make_finding_id(source, path, category, title),
        finding_class=finding_class,
        severity=severity,
        category=category,
        title=title,
        body=body,
        source=source,
        path=path,
        line=line,
        end_line=line,
        dismissed=dismissed,
        rule=rule,
    )


SAMPLE_FINDINGS = (
    sample_finding(),
    sample_finding(path="repro/case.py", line=None, finding_class=FindingClass.SYSTEMATIC, category="reproduction",
                   rule="process/repro-in-diff", title="Reproduction files are part of the change", body="Remove `repro/case.py`."),
    sample_finding(path="app/util.py", line=2, severity=Severity.MINOR, finding_class=FindingClass.READABILITY,
                   category="readability",
                   rule="readability/narrating-comment", title="Comment narrates the change | with a pipe",
                   body="Line one\nline two: 100% sure, a,b"),
    sample_finding(path=None, line=None, severity=Severity.NIT, finding_class=FindingClass.PRODUCT_QUESTION,
                   category="product", title="Should empty input be an error?", source="llm", rule=""),
)


def sample_target() -> FrozenTarget:
    hunk = Hunk(0, 0, 1, 5, tuple(
        DiffLine(LineKind.ADDED, text, None, number)
        for number, text in enumerate(["def run(x):", "    try:", "        x()", "    except Exception:", "        pass"], 1)
    ))
    return FrozenTarget(
        repo_root="/repo",
        base_ref="main",
        base_sha="a" * 40,
        merge_base="b" * 40,
        head_ref="HEAD",
        head_sha="c" * 40,
        base_source="--base",
        patch_sha256="d" * 64,
        files=(
            FileChange("app/jobs.py", None, ChangeStatus.ADDED, hunks=(hunk,)),
            FileChange("repro/case.py", None, ChangeStatus.ADDED),
            FileChange("app/util.py", "app/old_util.py", ChangeStatus.RENAMED, similarity=90),
        ),
        excluded=(ExcludedFile("package-lock.json", "lock file"),),
    )


def sample_result(
    output_dir: Path, findings: tuple[Finding, ...] = SAMPLE_FINDINGS, ci: CiContext | None = None
) -> GateResult:
    outcomes = (
        ReviewerOutcome("builtin", ReviewerStatus.OK, findings=findings[:3], duration_seconds=0.25),
        ReviewerOutcome("llm", ReviewerStatus.OK, findings=findings[3:], duration_seconds=3.5,
                        usage=Usage(requests=1, input_tokens=1200, output_tokens=300),
                        product_questions=("Should a retry be visible to the user?",),
                        notes=("redacted a value that looks like a GitHub token at app/jobs.py:2 before sending it",)),
    )
    return GateResult(
        target=sample_target(),
        config=Config(),
        ci=ci or CiContext(provider="local"),
        verify=ABSENT,
        outcomes=outcomes,
        findings=findings,
        verdict=decide(findings, outcomes, ABSENT),
        output_dir=output_dir,
        started_at="2026-01-01T00:00:00+00:00",
        timings={"freeze": 0.125, "review": 3.75},
    )
