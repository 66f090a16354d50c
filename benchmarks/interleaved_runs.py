"""Gate and jscpd runs interleaved in pairs, each pair's wall ratio read on its own.

jscpd's wall time drifts with the host (3.7-4.6 s within minutes at +304k appended on the same
2-core machine), so a ratio of two medians taken a minute apart moves by about ±10% between
commands. Run back to back, a gate and jscpd see nearly the same host: each pair's ratio is
steadier than the medians', and the spread of the pairs' ratios says how far to trust their median.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.measure import Measured


@dataclass(frozen=True)
class Pair:
    """One gate run and the jscpd run right after it."""

    round_number: int
    gate: int
    gate_run: Measured
    jscpd_run: Measured

    @property
    def ratio(self) -> float:
        return self.gate_run.wall / self.jscpd_run.wall

    @property
    def cpu_ratio(self) -> float:
        return self.gate_run.cpu / self.jscpd_run.cpu


def interleave(gates: Sequence[Callable[[], Measured]], jscpd: Callable[[], Measured], rounds: int) -> list[Pair]:
    """`rounds` rounds of pairs, each gate run beside its own jscpd run: even rounds (gate 0,
    jscpd, gate 1, jscpd, ...), odd rounds the mirror (jscpd, gate 1, ..., jscpd, gate 0), so that
    neither a gate's place in the round nor going first in its pair (a cooler cache, the previous
    run's writes still flushing) favours one side over an even number of rounds."""
    pairs = []
    for round_number in range(rounds):
        mirrored = round_number % 2 == 1
        order = list(enumerate(gates))
        for number, gate in reversed(order) if mirrored else order:
            if mirrored:
                jscpd_run = jscpd()
                pairs.append(Pair(round_number, number, gate(), jscpd_run))
            else:
                gate_run = gate()
                pairs.append(Pair(round_number, number, gate_run, jscpd()))
    return pairs


@dataclass(frozen=True)
class Summary:
    """A gate's pairs over one change: the median and range of their ratios, medians of the rest."""

    gate: int
    ratio_median: float
    ratio_low: float
    ratio_high: float
    gate_wall: float
    gate_cpu: float
    jscpd_wall: float
    jscpd_cpu: float
    # The median of the pairs' CPU ratios: on a loaded machine, where a command gets a share of a
    # core that changes within seconds, steadier than any wall ratio.
    cpu_ratio: float


def summarise(pairs: Sequence[Pair], gate: int) -> Summary:
    mine = [pair for pair in pairs if pair.gate == gate]
    ratios = [pair.ratio for pair in mine]
    return Summary(
        gate,
        statistics.median(ratios),
        min(ratios),
        max(ratios),
        statistics.median(pair.gate_run.wall for pair in mine),
        statistics.median(pair.gate_run.cpu for pair in mine),
        statistics.median(pair.jscpd_run.wall for pair in mine),
        statistics.median(pair.jscpd_run.cpu for pair in mine),
        statistics.median(pair.cpu_ratio for pair in mine),
    )


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def pair_lines(change: str, pairs: Sequence[Pair]) -> list[str]:
    """A row per pair: wall and CPU of both runs and the wall ratio."""
    lines = [f"{'change':<17} {'round':>5} {'gate':>4} {'gate wall':>9} {'gate CPU':>8} "
             f"{'jscpd wall':>10} {'jscpd CPU':>9} {'wall ratio':>10}"]
    for pair in pairs:
        lines.append(
            f"{change:<17} {pair.round_number + 1:>5} {pair.gate:>4} {pair.gate_run.wall:8.2f}s "
            f"{pair.gate_run.cpu:7.2f}s {pair.jscpd_run.wall:9.2f}s {pair.jscpd_run.cpu:8.2f}s {pair.ratio:9.2f}x"
        )
    return lines


def summary_lines(change: str, summaries: Sequence[Summary], peaks: Sequence[float], target: float | None) -> list[str]:
    """A row per gate: the median ratio, its range, the medians of wall and CPU, the peak memory
    (of the untimed run) and the verdict on the median ratio."""
    lines = [f"{'change':<17} {'gate':>4} {'median ratio':>12} {'min-max':>13} {'gate wall':>9} {'gate CPU':>8} "
             f"{'jscpd wall':>10} {'jscpd CPU':>9} {'CPU ratio':>9} {'peak MB':>7}  target"]
    for summary in summaries:
        verdict = "" if target is None else (
            f"<= {target:g}x {'met' if summary.ratio_median <= target else 'NOT met'}"
            f" (max {'met' if summary.ratio_high <= target else 'NOT met'})")
        lines.append(
            f"{change:<17} {summary.gate:>4} {summary.ratio_median:11.2f}x "
            f"{summary.ratio_low:5.2f}-{summary.ratio_high:.2f}x {summary.gate_wall:8.2f}s {summary.gate_cpu:7.2f}s "
            f"{summary.jscpd_wall:9.2f}s {summary.jscpd_cpu:8.2f}s {summary.cpu_ratio:8.2f}x "
            f"{peaks[summary.gate]:7.0f}  {verdict}"
        )
    return lines
