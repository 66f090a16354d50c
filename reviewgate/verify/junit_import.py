"""Import the app's own JUnit XML (`[test] junit = "..."`) so CI test views show its cases.

Accepts the shapes test runners write: a `<testsuites>` root or a bare `<testsuite>`, suites
nested in suites. A case failed when it has a `<failure>` or `<error>` child (junit-10.xsd);
`<skipped>` counts as not failed. The file comes from the app under review: it is read as
data (Python's expat refuses entity expansion attacks since 3.7.1 / expat 2.4), and every
message is masked like the logs.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from reviewgate.text import truncate
from reviewgate.verify.logs import SecretMasker
from reviewgate.verify.read_back import ReadBackError, read_back

# junit.xml is one testcase per imported case; a cap keeps a runaway suite from flooding it.
MAX_IMPORTED_CASES = 5000
MAX_MESSAGE_CHARACTERS = 2000
# The file is read whole before it is parsed: a suite of MAX_IMPORTED_CASES cases fits well in this.
MAX_JUNIT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class ImportedTests:
    cases: tuple[tuple[str, str, bool, str], ...]  # (suite, case, passed, message)
    problem: str = ""  # why the file could not be read, said in the log and the report

    @property
    def failed(self) -> int:
        return sum(1 for _, _, passed, _ in self.cases if not passed)


def _case_result(case: ElementTree.Element, masker: SecretMasker) -> tuple[bool, str]:
    for tag in ("failure", "error"):
        problem = case.find(tag)
        if problem is not None:
            message = problem.get("message") or (problem.text or "").strip() or tag
            return False, truncate(masker.mask(message), MAX_MESSAGE_CHARACTERS)
    if case.find("skipped") is not None:
        return True, "skipped"
    return True, ""


def read_junit(path: Path, masker: SecretMasker, *, within: Path | None = None,
               written_after: float | None = None) -> ImportedTests:
    """The cases of the JUnit file `path`, read only as a regular file inside `within` (default:
    its own directory) of at most MAX_JUNIT_BYTES, modified after `written_after` when given."""
    try:
        file = read_back(path, path.parent if within is None else within, MAX_JUNIT_BYTES)
    except FileNotFoundError:
        return ImportedTests((), f"{path.name}: not found (the test step did not write it)")
    except ReadBackError as error:
        return ImportedTests((), f"{path.name} {error}; not imported")
    if written_after is not None and file.modified < written_after:
        return ImportedTests((), f"{path.name} was not written by this run; not imported")
    try:
        root = ElementTree.fromstring(file.data)
    except ElementTree.ParseError as error:
        return ImportedTests((), f"{path.name}: not readable JUnit XML: {masker.mask(str(error))}")
    if root.tag not in ("testsuites", "testsuite"):
        return ImportedTests((), f"{path.name}: not JUnit XML (root element <{root.tag}>)")
    cases: list[tuple[str, str, bool, str]] = []
    # iter() includes the root itself, so a bare <testsuite> and nested suites are both covered.
    for suite in root.iter("testsuite"):
        suite_name = masker.mask(suite.get("name") or "tests")
        for case in suite.findall("testcase"):
            if len(cases) >= MAX_IMPORTED_CASES:
                return ImportedTests(
                    tuple(cases), f"{path.name}: more than {MAX_IMPORTED_CASES} cases; the rest left out"
                )
            classname = case.get("classname") or ""
            name = case.get("name") or "(unnamed)"
            passed, message = _case_result(case, masker)
            cases.append(
                (suite_name, masker.mask(f"{classname}.{name}" if classname else name), passed, message)
            )
    return ImportedTests(tuple(cases))
