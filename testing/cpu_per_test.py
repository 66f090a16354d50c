"""A pytest plugin that measures each test's CPU time: `-p testing.cpu_per_test`.

Wall time says little on a shared machine; CPU time (user + system of the test process and of
every child it waited for, setup to teardown) is what a test costs whatever else runs. Each test
adds one line `seconds<TAB>node id<TAB>Python version` to the file REVIEWGATE_TEST_CPU names (one write a line, so
pytest-xdist's workers can share it); the end of the run prints the slowest when run alone."""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Generator

import pytest

OUTPUT_VARIABLE = "REVIEWGATE_TEST_CPU"
_PYTHON = "{}.{}".format(*sys.version_info[:2])


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_measured: list[tuple[float, str]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    start = _cpu_seconds()
    yield
    seconds = _cpu_seconds() - start
    _measured.append((seconds, item.nodeid))
    path = os.environ.get(OUTPUT_VARIABLE)
    if path:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, f"{seconds:.3f}\t{item.nodeid}\t{_PYTHON}\n".encode())
        finally:
            os.close(descriptor)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _measured:  # under pytest-xdist the workers measure; read the file
        return
    terminalreporter.write_sep("=", f"CPU per test: {sum(seconds for seconds, _ in _measured):.1f} s in all, slowest 30")
    for seconds, nodeid in sorted(_measured, reverse=True)[:30]:
        terminalreporter.write_line(f"{seconds:8.2f} s  {nodeid}")
