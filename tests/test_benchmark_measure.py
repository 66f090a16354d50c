"""The benchmarks' timing of a command: a timed run that is not sampled for memory pays nothing
for sampling, so the wall time compared against jscpd is the command's own."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

from benchmarks.measure import run_timed


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_an_unsampled_run_costs_the_measuring_process_no_cpu(tmp_path: Path) -> None:
    # A child holding 50 MB for a second: the memory sampler reads its pages every 10 ms.
    command = [sys.executable, "-c", "import time; block = bytearray(50 * 2**20); time.sleep(1)"]
    before = _own_cpu()
    sampled = run_timed(command, tmp_path)
    sampling_cost = _own_cpu() - before
    before = _own_cpu()
    unsampled = run_timed(command, tmp_path, sample_memory=False)
    unsampled_cost = _own_cpu() - before
    assert sampled.peak_mb >= 50 and unsampled.peak_mb >= 50  # ru_maxrss when not sampled
    assert unsampled.wall >= 1.0
    assert unsampled_cost < 0.02 < sampling_cost, (unsampled_cost, sampling_cost)
