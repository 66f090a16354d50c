"""The test run's own settings and last word.

- Where PYTHONDONTWRITEBYTECODE is set, the hundreds of `python -m reviewgate` subprocesses the
  tests start would each compile every module they import from source (0.2-0.3 s of CPU a run, a
  third of a CLI test's time): for this run they keep their bytecode in one temporary
  PYTHONPYCACHEPREFIX instead, the source tree left as the variable asks.
- In a fresh clone, without the format owners' schemas in ../shared/conformance beside the
  checkout, the tests that need them skip; the end of the run says how many and why, rather than
  leaving it to a row of `s` marks."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from testing.conformance import CONFORMANCE_DIR

# What every such skip's reason names (testing/conformance.py, the skipif marks).
CONFORMANCE_REASON = "shared/conformance"


def pytest_configure(config: pytest.Config) -> None:
    # Here, before pytest-xdist starts its workers: they and every subprocess inherit the setting.
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        directory = tempfile.mkdtemp(prefix="reviewgate-tests-bytecode-")
        os.environ["PYTHONPYCACHEPREFIX"] = directory
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))


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
