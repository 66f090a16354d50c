"""junit.xml as XML readers see it: any text a verify step or the app's own tests report comes
back from a parser as it went in, less what XML cannot hold, and the file stays valid against
Jenkins' junit-10.xsd."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reviewgate.gate import Decision, Verdict
from reviewgate.report.junit import render_junit
from reviewgate.result import GateResult
from reviewgate.verify.outcome import StepResult, VerifyOutcome, VerifyStatus
from testing.conformance import validate_junit
from testing.results import SAMPLE_FINDINGS, sample_finding, sample_result

PIECES = ["\r", "\n", "\r\n", "\t", "\x00", "\x0b", "\x1f", "\x7f", "\x84", "\x85", "\x9f", "\ufdd0", "\ufffe",
          "\U0001fffe", "\U0010ffff", "&", "<", ">", '"', "]]>", "&amp;", " ", "é", "\U0001f600"]
TEXT = st.lists(st.sampled_from(PIECES) | st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
                max_size=8).map("".join)


def dropped(character: str, *, in_attribute: bool) -> bool:
    """What the writer leaves out: what XML 1.0 cannot hold, C1 controls but NEL, the
    noncharacters, and a CR in text (an attribute keeps it, as `&#13;`)."""
    code = ord(character)
    if code < 0x20:
        return character not in ("\t\n\r" if in_attribute else "\t\n")
    return 0x7F <= code <= 0x9F and code != 0x85 or 0xFDD0 <= code <= 0xFDDF or code & 0xFFFE == 0xFFFE


def kept(text: str, *, in_attribute: bool) -> str:
    return "".join(character for character in text if not dropped(character, in_attribute=in_attribute))


def failed_step_result(name: str, command: str, detail: str, test_name: str) -> GateResult:
    step = StepResult(name, command, 1, 0.5, None, passed=False, detail=detail)
    verify = VerifyOutcome(VerifyStatus.FAILED, steps=(step,), imported_tests=(("suite", test_name, False, ""),))
    return replace(sample_result(Path("/nonexistent"), findings=()), verify=verify,
                   verdict=Verdict(Decision.REQUEST_CHANGES, None))


@settings(max_examples=200, deadline=None)
@given(name=TEXT, command=TEXT, detail=TEXT, test_name=TEXT)
def test_reported_text_reads_back_whole(name: str, command: str, detail: str, test_name: str) -> None:
    text = render_junit(failed_step_result(name, command, detail, test_name))
    step_case, test_case, verdict_case = ElementTree.fromstring(text.encode("utf-8")).iter("testcase")
    assert step_case.get("name") == kept(name, in_attribute=True)
    assert step_case.get("time") == "0.500000"
    failure = step_case.find("failure")
    assert failure is not None
    assert failure.get("message") == kept(detail or "exit code 1", in_attribute=True)
    assert (failure.text or "") == kept(command, in_attribute=False)
    assert test_case.get("name") == kept(test_name, in_attribute=True)
    assert verdict_case.findtext("system-out") == "request_changes"


def test_hostile_text_leaves_the_file_valid_junit() -> None:
    hostile = "".join(PIECES)
    text = render_junit(failed_step_result(hostile, hostile, hostile, hostile))
    validate_junit(text)  # raises on a file the schema rejects
    root = ElementTree.fromstring(text.encode("utf-8"))
    assert [case.get("name") for case in root.iter("testcase")] == [kept(hostile, in_attribute=True)] * 2 + ["verdict"]
    assert root.get("failures") == "2" and root.get("tests") == "3"


def test_a_blocked_review_is_a_failed_verdict_and_valid_junit() -> None:
    result = replace(sample_result(Path("/nonexistent"), findings=()),
                     verdict=Verdict(Decision.BLOCKED, None, (), ("reviewer builtin: crashed",)))
    text = render_junit(result)
    validate_junit(text)
    verdict_case = list(ElementTree.fromstring(text.encode("utf-8")).iter("testcase"))[-1]
    failure = verdict_case.find("failure")
    assert failure is not None and failure.get("type") == "blocked" and failure.get("message") == "review blocked"
    assert failure.text == "reviewer builtin: crashed"
    assert ElementTree.fromstring(text.encode("utf-8")).get("failures") == "1"


def test_ascii_text_loses_what_the_pattern_drops_without_compiling_it() -> None:
    from reviewgate.report.junit import _DROPPED, dropped_removed

    every_ascii = "".join(map(chr, range(128)))
    assert dropped_removed(every_ascii) == _DROPPED.compiled().sub("", every_ascii)
    assert dropped_removed("é\x85\x86\ufffe\U0001fffe") == _DROPPED.compiled().sub("", "é\x85\x86\ufffe\U0001fffe")
    # A report of ASCII text, in a fresh interpreter: the pattern is never compiled.
    script = ("from pathlib import Path; from reviewgate.report import junit; from testing.results import sample_result; "
              "junit.render_junit(sample_result(Path('out'))); print(junit._DROPPED._compiled is None)")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert completed.stdout.strip() == "True"


def _with_findings() -> GateResult:
    """Blocking, passing and suppressed findings: every kind of testcase a finding makes."""
    suppressed = sample_finding(path="app/old.py", line=9, title="Swallowed <error> & more",
                                dismissed="suppressed by a comment: the caller logs it")
    return sample_result(Path("/nonexistent"), findings=(*SAMPLE_FINDINGS, suppressed))


def test_findings_leave_the_file_valid_against_junit_10_xsd_unmodified() -> None:
    text = render_junit(_with_findings())
    validate_junit(text)  # the XSD as published: a testcase's `file` (or any other undeclared attribute) fails it
    cases = list(ElementTree.fromstring(text.encode("utf-8")).iter("testcase"))
    assert len(cases) == len(SAMPLE_FINDINGS) + 2  # the findings and the verdict


def test_gitlab_reads_each_findings_place_outcome_and_text() -> None:
    """What GitLab's parser takes from a testcase (lib/gitlab/ci/parsers/test/junit.rb): `name`,
    `classname`, and the text of `failure` or `skipped` as the details it shows; system-out."""
    result = _with_findings()
    root = ElementTree.fromstring(render_junit(result).encode("utf-8"))
    by_id = {case.get("name", "").rsplit("[", 1)[-1].rstrip("]"): case for case in root.iter("testcase")}
    for finding in result.findings:
        case = by_id[finding.id]
        assert f" at {finding.location}: " in case.get("name", "")  # the place, shown in GitLab's test name
        assert case.get("classname") == f"reviewgate.{finding.source}"
        if finding.dismissed:
            assert case.findtext("skipped") == finding.dismissed  # GitLab shows the skip's text as its reason
        elif result.is_blocking(finding):
            details = case.findtext("failure") or ""
            assert finding.title in details and finding.body in details and f"at {finding.location}" in details
        else:
            assert case.find("failure") is None and finding.title in (case.findtext("system-out") or "")
