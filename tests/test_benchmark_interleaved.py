"""The Django benchmark's interleaved mode: every gate run is followed by its own jscpd run, and a
pair's ratio is read from those two runs alone, so the host's drift between pairs does not enter it."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.interleaved_runs import interleave, summarise
from benchmarks.measure import Measured, run_timed


def _logged(tmp_path: Path, name: str, seconds: float, busy: float = 0.0) -> Measured:
    # A real process that notes its name in a shared log, keeps a core busy for `busy` seconds of
    # CPU and takes `seconds` of wall at least.
    script = (f"import time; open({str(tmp_path / 'order')!r}, 'a').write({name!r} + ' '); "
              f"started = time.perf_counter(); end = time.process_time() + {busy}\n"
              f"while time.process_time() < end: pass\n"
              f"time.sleep(max(0.0, {seconds} - (time.perf_counter() - started)))")
    return run_timed([sys.executable, "-c", script], tmp_path, sample_memory=False)


def test_each_gate_run_is_beside_its_own_jscpd_run_and_odd_rounds_mirror_the_order(tmp_path: Path) -> None:
    pairs = interleave(
        [lambda: _logged(tmp_path, "gate0", 0.3), lambda: _logged(tmp_path, "gate1", 0.6)],
        lambda: _logged(tmp_path, "jscpd", 0.3),
        rounds=2,
    )
    order = (tmp_path / "order").read_text().split()
    assert order == ["gate0", "jscpd", "gate1", "jscpd", "jscpd", "gate1", "jscpd", "gate0"]
    assert [(pair.round_number, pair.gate) for pair in pairs] == [(0, 0), (0, 1), (1, 1), (1, 0)]
    assert all(pair.gate_run.wall >= 0.3 and pair.jscpd_run.wall >= 0.3 for pair in pairs)


def test_the_summary_reads_each_gates_own_pairs(tmp_path: Path) -> None:
    # Far enough apart that a loaded machine's start-up of each process (up to about 1.5 s on a
    # load of 10 on 2 cores) cannot bring a ratio or jscpd's wall across its bound.
    pairs = interleave(
        [lambda: _logged(tmp_path, "gate0", 0.2), lambda: _logged(tmp_path, "gate1", 1.6)],
        lambda: _logged(tmp_path, "jscpd", 0.4),
        rounds=3,
    )
    fast, slow = summarise(pairs, 0), summarise(pairs, 1)
    assert fast.ratio_low <= fast.ratio_median <= fast.ratio_high < 0.9
    assert 1.5 < slow.ratio_low <= slow.ratio_median <= slow.ratio_high
    assert slow.gate_wall >= 1.6 and 0.4 <= slow.jscpd_wall < 1.6


def test_the_cpu_ratio_is_read_from_cpu_not_wall(tmp_path: Path) -> None:
    # The gate waits most of its wall, jscpd computes: the gate takes longer, jscpd more CPU. The
    # gate's wait is long enough that jscpd's 0.3 s of CPU stays shorter on a loaded machine (it
    # took 1.7 s of wall at a load average of 6 on 2 cores).
    pairs = interleave([lambda: _logged(tmp_path, "gate0", 4.0, busy=0.05)],
                       lambda: _logged(tmp_path, "jscpd", 0.2, busy=0.3), rounds=2)
    summary = summarise(pairs, 0)
    assert summary.ratio_median > 1.0
    assert summary.cpu_ratio < 0.6
