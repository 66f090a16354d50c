"""junit.xml: one testcase per finding, so CI test views (GitLab, Jenkins) show the review.

Blocking findings fail; suppressed (dismissed) ones are skipped with the reason; the others pass
with the finding in system-out. `file` is set for GitLab; `line` is left out because junit-10.xsd
(Jenkins' xunit) does not allow it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from junit_xml import TestCase, TestSuite, to_xml_report_string

from reviewgate.escaping import one_line, xml_text
from reviewgate.findings import Finding
from reviewgate.gate import Decision
from reviewgate.report.base import SinkContext
from reviewgate.report.files import write_text
from reviewgate.result import GateResult
from reviewgate.text import printable

FILE_NAME = "junit.xml"


def _describe(finding: Finding) -> str:
    lines = [
        f"{finding.severity.value} {finding.finding_class.value}, rule {finding.rule_id}: {finding.title}",
        f"at {printable(finding.location)} (source {finding.source}, id {finding.id})",
    ]
    if finding.dismissed:
        lines.append(finding.dismissed)
    if finding.body:
        lines += ["", finding.body]
    return xml_text("\n".join(lines))


def _finding_case(finding: Finding, blocking: bool) -> TestCase:
    case = TestCase(
        name=xml_text(f"{finding.rule_id} at {finding.location}: {one_line(finding.title)} [{finding.id}]"),
        classname=xml_text(f"reviewgate.{finding.source}"),
        file=printable(finding.path) if finding.path else None,
        stdout=None if blocking else _describe(finding),
    )
    if finding.dismissed is not None:
        # Set aside on the record (a suppression comment, a person's answer): not a failure, and
        # not a pass either; test views show a skip with its reason.
        case.add_skipped_info(message=xml_text(one_line(finding.dismissed)))
    elif blocking:
        case.add_failure_info(message=xml_text(one_line(finding.title)), output=_describe(finding),
                              failure_type=finding.severity.value)
    return case


def build_cases(result: GateResult) -> list[TestCase]:
    cases = [_finding_case(item, result.is_blocking(item)) for item in result.findings]
    for step in result.verify.steps:
        case = TestCase(name=step.name, classname="reviewgate.verify", elapsed_sec=step.duration_seconds)
        if not step.passed:
            case.add_failure_info(message=step.detail or f"exit code {step.exit_code}", output=step.command)
        cases.append(case)
    for suite, name, passed, message in result.verify.imported_tests:
        case = TestCase(name=name, classname=f"app.{suite}")
        if not passed:
            case.add_failure_info(message=message or "failed")
        cases.append(case)
    # The verdict itself is a testcase, so a blocked review is never an all-green report.
    verdict = TestCase(name="verdict", classname="reviewgate")
    if result.verdict.decision is Decision.BLOCKED:
        verdict.add_error_info(message="review blocked", output="\n".join(result.verdict.reasons))
    else:
        verdict.stdout = result.verdict.decision.value
    cases.append(verdict)
    return cases


# junit-xml writes `disabled`, which Jenkins' junit-10.xsd (and so strict readers) reject.
_UNDECLARED_ATTRIBUTES = ("disabled",)


def render_junit(result: GateResult) -> str:
    suite = TestSuite("reviewgate", build_cases(result), timestamp=result.started_at)
    root = ElementTree.fromstring(to_xml_report_string([suite], prettyprint=False, encoding="utf-8"))
    for element in (root, *root.iter("testsuite")):
        for name in _UNDECLARED_ATTRIBUTES:
            element.attrib.pop(name, None)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


class JunitSink:
    name = "junit"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        write_text(result.output_dir / FILE_NAME, render_junit(result))
