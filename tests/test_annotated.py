"""Which findings are annotated on the diff: blocking and major ones always; a minor one only with a
concrete mechanism (a swallowed failure, an injection) or a copy with its source named; generic
minor remarks and nits go to the summary, counted there. One predicate for every sink."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from reviewgate.ci.context import CiContext
from reviewgate.findings import BY_DESIGN, DEMOTED, MOVED, SUPPORT_CODE, Finding, FindingClass, Severity
from reviewgate.report.annotated import annotated
from reviewgate.report.base import SinkContext
from reviewgate.report.github_annotations import GithubAnnotationsSink
from reviewgate.report.github_checks import update_bodies
from reviewgate.report.summary import render_summary
from testing.results import sample_finding, sample_result


def _minor(rule: str, **changes: object) -> Finding:
    return sample_finding(severity=Severity.MINOR, rule=rule, category=rule.split("/")[0],
                          title=f"finding of {rule}").with_changes(**changes)


@pytest.mark.parametrize(("finding", "shown"), [
    (_minor("correctness/swallowed-exception"), True),  # a mechanism at a line
    (_minor("security/shell-injection"), True),
    (_minor("reuse/duplicate-code"), True),  # a copy, its source quoted
    (_minor("tests/missing-tests"), False),  # generic
    (_minor("readability/narrating-comment"), False),
    (_minor("process/missing-reproduction"), False),
    (_minor("suppression/missing-reason"), False),
    (_minor("correctness/swallowed-exception", severity=Severity.NIT), False),
    (_minor("correctness/swallowed-exception", line=None), False),  # no line to put it on
    (_minor("", source="llm", category="logic"), True),  # a model's finding on a line names its mechanism
    (_minor("tests/missing-tests", extra={"suggestion": {"start_line": 4, "end_line": 4, "replacement": "x"}}), True),
    (_minor("tests/missing-tests", severity=Severity.MAJOR), True),
    # Minor because the lens found it intended or written earlier: nothing to act on at the line.
    (_minor("correctness/empty-catch", extra={DEMOTED: BY_DESIGN}), False),
    (_minor("correctness/unhandled-rejection", extra={DEMOTED: SUPPORT_CODE}), False),
    (_minor("correctness/swallowed-exception", extra={DEMOTED: MOVED}), False),
    (_minor("reuse/duplicate-code", extra={DEMOTED: BY_DESIGN}), False),
])
def test_a_minor_finding_is_annotated_only_with_evidence(finding: Finding, shown: bool) -> None:
    assert annotated(finding, blocking=False) is shown


def test_a_blocking_finding_is_always_annotated() -> None:
    assert annotated(_minor("readability/narrating-comment", severity=Severity.NIT), blocking=True)


FINDINGS = (
    sample_finding(),  # major: blocks
    _minor("correctness/empty-catch", path="app/a.js", line=3),
    _minor("tests/missing-tests", path="app/b.py", line=7, finding_class=FindingClass.CORRECTNESS),
    _minor("readability/narrating-comment", path="app/c.py", line=2, finding_class=FindingClass.READABILITY),
)


def test_workflow_commands_leave_generic_minor_findings_to_the_summary(tmp_path: Path) -> None:
    stdout = io.StringIO()
    context = SinkContext(stdout=stdout)
    result = sample_result(tmp_path, findings=FINDINGS, ci=CiContext(provider="github"))
    GithubAnnotationsSink().publish(result, context)
    lines = stdout.getvalue().splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning"]
    assert "file=app/a.js" in lines[1] and not any("app/b.py" in line or "app/c.py" in line for line in lines)
    note = "2 minor or nit finding(s) not annotated on the diff (listed in summary.md)."
    assert context.log.notes == [note]
    # The summary lists them all and says so.
    summary = render_summary(result, context.log.notes)
    assert note in summary and "finding of tests/missing-tests" in summary


def test_check_run_annotations_use_the_same_rule(tmp_path: Path) -> None:
    result = sample_result(tmp_path, findings=FINDINGS)
    [body] = update_bodies(result, "neutral", [])
    paths = [item["path"] for item in body["output"]["annotations"]]
    assert paths == ["app/jobs.py", "app/a.js"]


def test_the_lenses_mark_what_they_report_at_minor_as_intended(tmp_path: Path) -> None:
    """An empty catch whose comment says why, and one in a test, are listed but not annotated; a
    bare one in product code is."""
    from testing.lenses import review_change

    findings = review_change(tmp_path, {"README.md": "x\n"}, {
        "src/load.js": "export function store(save, data) {\n  try {\n    save(data);\n  } catch {}\n}\n"
                       "export function size(stat) {\n  try {\n    return stat().size;\n  } catch {\n"
                       "    // A missing file has no size: zero is the answer then.\n  }\n  return 0;\n}\n",
        "test/load.test.js": "test('x', () => {\n  try {\n    boom();\n  } catch {}\n});\n",
    })
    shown = {(item.path, item.line): annotated(item, blocking=False) for item in findings
             if item.rule == "correctness/empty-catch"}
    assert shown == {("src/load.js", 4): True, ("src/load.js", 9): False, ("test/load.test.js", 4): False}
