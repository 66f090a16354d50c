"""The test run's own last word: in a fresh clone, without the format owners' schemas in
../shared/conformance beside the checkout, the tests that need them skip; the end of the run says
how many and why, rather than leaving it to a row of `s` marks."""

from __future__ import annotations

import pytest

from testing.conformance import CONFORMANCE_DIR

# What every such skip's reason names (testing/conformance.py, the skipif marks).
CONFORMANCE_REASON = "shared/conformance"


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = terminalreporter.stats.get("skipped", [])
    count = sum(1 for report in skipped if CONFORMANCE_REASON in _reason(report))
    if count:
        terminalreporter.write_line(
            f"reviewgate: {count} test(s) skipped: they check outputs against the format owners' schemas in "
            f"{CONFORMANCE_DIR}, which is absent (it sits in ../shared/conformance beside the checkout)",
            yellow=True, bold=True)
