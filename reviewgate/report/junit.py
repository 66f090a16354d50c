"""junit.xml: one testcase per finding, so CI test views (GitLab, Jenkins) show the review.

Blocking findings fail; suppressed (dismissed) ones are skipped with the reason; the others pass
with the finding in system-out. The file validates against Jenkins' junit-10.xsd as it is, which
strict readers (Jenkins' xunit plugin) check before reading anything: so a testcase has no `file`
or `line` attribute (the XSD declares neither; pytest's default xunit2 family leaves them out for
the same reason). GitLab reads a testcase's `name`, `classname`, `time`, the text of `failure`,
`error` or `skipped`, and `system-out` (lib/gitlab/ci/parsers/test/junit.rb); its `file` only
fills the Tests tab's file column, so the place is in the name instead (`rule at path:line:
title`), and codequality.json links each finding to its line in the merge request.
"""

from __future__ import annotations

from reviewgate.escaping import NOT_XML_CHARACTERS, one_line, xml_text
from reviewgate.file_writing import write_text
from reviewgate.findings import Finding
from reviewgate.gate import Decision
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.report.base import SinkContext
from reviewgate.result import GateResult
from reviewgate.text import printable

FILE_NAME = "junit.xml"

# Written here rather than through junit-xml and ElementTree (5 ms of every start-up), in
# the form those wrote: the same elements, attribute order, escaping and two-space indentation.
# Their clean-up is kept too: what XML cannot hold is dropped, with the noncharacters, C1
# controls but NEL, and raw CRs in text (an attribute keeps a CR as `&#13;`).
_DROPPED = LazyPattern(
    "[" + NOT_XML_CHARACTERS + "\x7f-\x84\x86-\x9f\ufdd0-\ufddf"
    + "".join(f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(1, 17))
    + "]"
)
# Its ASCII part, for ASCII text (nearly every value): deleted without compiling the pattern,
# whose planes of noncharacters take a millisecond of every run to compile.
_ASCII_DROPPED = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTRIBUTE_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}
)
_INDENT = "  "


def dropped_removed(text: str) -> str:
    """`text` without what XML cannot hold and the characters dropped with it (_DROPPED)."""
    return text.translate(_ASCII_DROPPED) if text.isascii() else _DROPPED.sub("", text)


class Element:
    """One element of the document: attributes in the order they are written."""

    __slots__ = ("tag", "attributes", "text", "children")

    def __init__(self, tag: str, attributes: dict[str, str], text: str | None = None) -> None:
        self.tag = tag
        self.attributes = attributes
        self.text = text
        self.children: list[Element] = []

    def render(self, level: int = 0) -> str:
        opening = "<" + self.tag + "".join(
            f' {name}="{dropped_removed(value).translate(_ATTRIBUTE_ESCAPES)}"'
            for name, value in self.attributes.items()
        )
        if not self.children:  # an element holds text or children, never both
            text = dropped_removed((self.text or "").replace("\r", "")).translate(_TEXT_ESCAPES)
            return f"{opening}>{text}</{self.tag}>" if text else f"{opening} />"
        inner = "\n" + _INDENT * (level + 1)
        return (f"{opening}>{inner}" + inner.join(child.render(level + 1) for child in self.children)
                + "\n" + _INDENT * level + f"</{self.tag}>")


class TestCase:
    """One testcase: a finding, a verify step, an imported test or the verdict. `outcome` is
    None for a pass, else (failure | skipped, message, output, type)."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, name: str, classname: str, *, stdout: str | None = None,
                 elapsed_seconds: float | None = None) -> None:
        self.name = name
        self.classname = classname
        self.stdout = stdout
        self.elapsed_seconds = elapsed_seconds
        self.outcome: tuple[str, str | None, str | None, str | None] | None = None

    def fail(self, message: str | None, output: str | None = None, kind: str | None = None) -> None:
        self.outcome = ("failure", message, output, kind)

    def skip(self, message: str | None) -> None:
        # The reason is also the element's text: GitLab shows a skip's text, not its message.
        self.outcome = ("skipped", message, message, None)

    def counts_as(self, kind: str) -> bool:
        if self.outcome is None or self.outcome[0] != kind:
            return False
        # A failure with neither message nor output was never written, nor counted.
        return kind == "skipped" or bool(self.outcome[1] or self.outcome[2])

    def element(self) -> Element:
        attributes = {"name": self.name}
        if self.elapsed_seconds:
            attributes["time"] = f"{self.elapsed_seconds:f}"
        if self.classname:
            attributes["classname"] = self.classname
        element = Element("testcase", attributes)
        if self.outcome is not None and self.counts_as(self.outcome[0]):
            kind, message, output, written_type = self.outcome
            detail = {"type": written_type or kind}
            if message:
                detail["message"] = message
            element.children.append(Element(kind, detail, output or None))
        if self.stdout:
            element.children.append(Element("system-out", {}, self.stdout))
        return element


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
        stdout=None if blocking else _describe(finding),
    )
    if finding.dismissed is not None:
        # Set aside on the record (a suppression comment, a person's answer): not a failure, and
        # not a pass either; test views show a skip with its reason.
        case.skip(xml_text(one_line(finding.dismissed)))
    elif blocking:
        case.fail(xml_text(one_line(finding.title)), _describe(finding), finding.severity.value)
    return case


def build_cases(result: GateResult) -> list[TestCase]:
    cases = [_finding_case(item, result.is_blocking(item)) for item in result.findings]
    for step in result.verify.steps:
        case = TestCase(name=step.name, classname="reviewgate.verify", elapsed_seconds=step.duration_seconds)
        if not step.passed:
            case.fail(step.detail or f"exit code {step.exit_code}", step.command)
        cases.append(case)
    for suite, name, passed, message in result.verify.imported_tests:
        case = TestCase(name=name, classname=f"app.{suite}")
        if not passed:
            case.fail(message or "failed")
        cases.append(case)
    # The verdict itself is a testcase, so a blocked review is never an all-green report.
    verdict = TestCase(name="verdict", classname="reviewgate")
    if result.verdict.decision is Decision.BLOCKED:
        # A failure of type "blocked", not an `<error>`: junit-10.xsd, which strict readers check
        # against, has no `error` element, and every reader counts a failure as not passed.
        verdict.fail("review blocked", "\n".join(result.verdict.reasons), "blocked")
    else:
        verdict.stdout = result.verdict.decision.value
    cases.append(verdict)
    return cases


def render_junit(result: GateResult) -> str:
    """One testsuite; no `disabled` count, which Jenkins' junit-10.xsd (and so strict readers) reject."""
    cases = build_cases(result)
    elapsed = sum(case.elapsed_seconds for case in cases if case.elapsed_seconds)
    counts = {kind: str(sum(case.counts_as(kind) for case in cases)) for kind in ("failure", "skipped")}
    # Nothing here is an `<error>` (a test that could not run): the count is there for readers
    # that require it.
    suite_attributes = {"errors": "0", "failures": counts["failure"], "name": "reviewgate",
                        "skipped": counts["skipped"], "tests": str(len(cases)), "time": str(elapsed)}
    if result.started_at:
        suite_attributes["timestamp"] = result.started_at
    suite = Element("testsuite", suite_attributes)
    suite.children = [case.element() for case in cases]
    root = Element("testsuites", {"errors": "0", "failures": counts["failure"],
                                  "tests": str(len(cases)), "time": str(float(elapsed))})
    root.children = [suite]
    return '<?xml version="1.0" encoding="utf-8"?>\n' + root.render() + "\n"


class JunitSink:
    name = "junit"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        write_text(result.output_dir / FILE_NAME, render_junit(result))
