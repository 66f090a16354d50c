"""Each sink's output for one fixed result, compared with a golden file.

Regenerate after an intended format change with `REVIEWGATE_UPDATE_GOLDEN=1 pytest tests/test_report_golden.py`
and review the diff of tests/golden/ like any other change.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from reviewgate.ci.context import CiContext
from reviewgate.report import publish
from testing.conformance import validate_junit, validate_report
from testing.golden import check_golden
from testing.results import sample_result


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, Path, Path]:
    monkeypatch.chdir(tmp_path)  # a relative output dir keeps the printed paths the same every run
    summary, outputs = tmp_path / "step-summary.md", tmp_path / "outputs"
    ci = CiContext(provider="github", step_summary_path=str(summary), output_path=str(outputs))
    stdout = io.StringIO()
    publish(sample_result(Path("out"), ci=ci), stdout)
    return tmp_path / "out", stdout.getvalue(), summary, outputs


def test_report_json(published: tuple[Path, str, Path, Path]) -> None:
    import json

    output_dir = published[0]
    text = (output_dir / "report.json").read_text(encoding="utf-8")
    validate_report(json.loads(text))
    check_golden("report.json", text)


def test_junit_xml(published: tuple[Path, str, Path, Path]) -> None:
    text = (published[0] / "junit.xml").read_text(encoding="utf-8")
    validate_junit(text)
    check_golden("junit.xml", text)


def test_summary_md(published: tuple[Path, str, Path, Path]) -> None:
    output_dir, _, step_summary, _ = published
    text = (output_dir / "summary.md").read_text(encoding="utf-8")
    check_golden("summary.md", text)
    assert step_summary.read_text(encoding="utf-8") == text + "\n"


def test_stdout_annotations_and_console(published: tuple[Path, str, Path, Path]) -> None:
    stdout = published[1]
    # The fence token is random per run; replace it to compare.
    lines = stdout.splitlines()
    token_line = next(line for line in lines if line.startswith("::stop-commands::"))
    token = token_line.removeprefix("::stop-commands::")
    check_golden("stdout.txt", stdout.replace(token, "TOKEN"))


def test_step_outputs(published: tuple[Path, str, Path, Path]) -> None:
    outputs = published[3].read_text(encoding="utf-8")
    assert outputs.splitlines()[:3] == ["verdict=request_changes", "findings=4", "blocking=2"]


def test_annotations_stop_at_ten_per_level_and_the_rest_are_counted_and_summarized(tmp_path: Path) -> None:
    from reviewgate.findings import FindingClass, Severity
    from testing.results import sample_finding

    blocking = tuple(sample_finding(path=f"app/m{index}.py", title=f"swallowed {index}") for index in range(13))
    minor = tuple(sample_finding(path=f"app/r{index}.py", severity=Severity.MINOR,
                                 finding_class=FindingClass.READABILITY, title=f"comment {index}")
                  for index in range(11))
    stdout = io.StringIO()
    result = sample_result(tmp_path / "out", findings=blocking + minor,
                           ci=CiContext(provider="github"))
    publish(result, stdout)
    lines = stdout.getvalue().splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert sum(line.startswith("::warning ") for line in lines) == 10
    note = "4 more finding(s) were not annotated (GitHub shows 10 per level per step); all are listed in the summary and report.json."
    assert note in lines
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert note in summary and "app/m12.py" in summary and "app/r10.py" in summary


def test_junit_testcases_are_unique_by_classname_and_name(published: tuple[Path, str, Path, Path]) -> None:
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.parse(published[0] / "junit.xml").getroot()
    keys = [(case.get("classname"), case.get("name")) for case in root.iter("testcase")]
    assert len(keys) == len(set(keys)) == 5  # four findings and the verdict
