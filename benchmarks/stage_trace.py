"""Where one gate run's wall time goes, stage by stage, and how many cores each stage keeps busy:

    python benchmarks/stage_trace.py REPO BRANCH [--gate-path CHECKOUT] [--base main]

It runs the gate once untimed (bytecode and page cache warm, the review cache filled), then once
traced: the gate's own functions are wrapped from outside (`--inside`, nothing in the checkout is
edited) to write a time-stamped line as each stage begins and ends, in this process and in every
worker forked from it, while this process reads the CPU time of the gate's whole process tree from
/proc every 10 ms, and the machine's (/proc/stat), so a stage that left a core idle can be told
from one that shared it with someone else's work. It prints, for each stretch between two stage
boundaries of the gate's main process: its wall time, the CPU of the main process and of the
workers (and git), how many cores they kept busy, and what the rest of the machine used meanwhile.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 0.01
# What is wrapped, by module, attribute (a dotted attribute is a class's method) and stage name.
# Functions imported by name into another module are wrapped there too (the same name).
STAGES = (
    ("reviewgate.run", "open_run", "freeze"),
    ("reviewgate.run", "review_change", "review"),
    ("reviewgate.reviewers.builtin", "BuiltinReviewer.review", "builtin"),
    ("reviewgate.reviewers.builtin", "prefetch_both_sides", "prefetch base"),
    ("reviewgate.freeze.git", "TreeReader.prefetch", "prefetch"),
    ("reviewgate.reviewers.builtin", "run_lenses", "lenses"),
    ("reviewgate.reviewers.builtin.engine", "_Worker.__init__", "fork"),
    ("reviewgate.reviewers.builtin.engine", "_review_unshaped", "whole-change worker"),
    ("reviewgate.reviewers.builtin.engine", "_review_taken", "per-file worker"),
    ("reviewgate.reviewers.builtin.engine", "_shaped_findings", "tests lens"),
    ("reviewgate.reviewers.builtin.engine", "_Worker.answer", "answer"),
    ("reviewgate.reviewers.builtin.side_shapes", "head_shapes_unpacked", "unpack shapes"),
    ("reviewgate.reviewers.builtin", "mark_moved", "mark moved"),
    ("reviewgate.reviewers.builtin", "mark_non_product", "mark non-product"),
    ("reviewgate.reviewers.builtin", "apply_suppressions", "suppressions"),
    ("reviewgate.verdict_stage", "publish_result", "publish"),
    ("reviewgate.verdict_stage", "publish", "sinks"),
    ("reviewgate.report.forked_sinks", "_failure_of", "forked report writer"),
)
# Stages whose every call is not a boundary of its own (hundreds of calls): counted, not split on.
COUNTED = frozenset({"unpack shapes", "prefetch", "full collection"})


def _install(events_path: str) -> None:
    """Inside the gate's process: wrap STAGES to write `monotonic pid thread begin|end stage`."""
    import importlib
    import threading

    descriptor = os.open(events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def event(kind: str, stage: str) -> None:
        thread = "main" if threading.current_thread() is threading.main_thread() else "thread"
        os.write(descriptor, f"{time.monotonic():.6f} {os.getpid()} {thread} {kind} {stage}\n".encode())

    def wrapped(function, stage):  # type: ignore[no-untyped-def]
        def call(*arguments, **keywords):  # type: ignore[no-untyped-def]
            event("begin", stage)
            try:
                return function(*arguments, **keywords)
            finally:
                event("end", stage)

        return call

    event("begin", "imported")
    import gc

    def collected(phase: str, info: dict[str, int]) -> None:  # full collections: each walks the whole heap
        if info["generation"] == 2:
            event("begin" if phase == "start" else "end", "full collection")

    gc.callbacks.append(collected)
    for module_name, attribute, stage in STAGES:
        module = importlib.import_module(module_name)
        owner_name, _, name = attribute.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        if hasattr(owner, name):  # an older checkout (--gate-path) may lack a stage: traced without it
            setattr(owner, name, wrapped(getattr(owner, name), stage))
    import reviewgate.cli as cli

    original_exit = cli.exit_with

    def exit_with(code: int):  # type: ignore[no-untyped-def]
        event("begin", "exit")
        original_exit(code)

    cli.exit_with = exit_with
    event("end", "imported")


def inside(events_path: str, arguments: list[str]) -> None:
    _install(events_path)
    import reviewgate.cli as cli

    sys.argv = ["reviewgate", *arguments]
    cli.exit_with(cli.main())


@dataclass
class Sample:
    at: float
    cpu: dict[int, float]  # seconds, by pid of the gate's tree
    machine_busy: float  # seconds of CPU the whole machine has used since boot


@dataclass
class Event:
    at: float
    pid: int
    thread: str
    kind: str
    stage: str


@dataclass
class Trace:
    started: float
    ended: float
    root: int
    rusage_cpu: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def _tree(pid: int) -> list[int]:
    pids, pending = [], [pid]
    while pending:
        current = pending.pop()
        pids.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    pending += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return pids


def _cpu_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _machine_busy() -> float:
    with open("/proc/stat") as handle:
        values = [int(value) for value in handle.readline().split()[1:]]
    return (sum(values) - values[3] - values[4]) / TICKS  # less idle and iowait


def traced_run(repo: Path, command: list[str], env: dict[str, str], events_path: Path) -> Trace:
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    trace = Trace(started=started, ended=started, root=process.pid)
    known: dict[int, float] = {}  # a process that ended keeps its last reading
    while True:
        known.update((pid, seconds) for pid in _tree(process.pid) if (seconds := _cpu_seconds(pid)) is not None)
        trace.samples.append(Sample(time.monotonic(), dict(known), _machine_busy()))
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(SAMPLE_SECONDS)
    trace.ended = time.monotonic()
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if os.waitstatus_to_exitcode(status) not in (0, 1, 3):
        raise SystemExit(f"the gate exited {os.waitstatus_to_exitcode(status)}:\n{error[-3000:]}")
    trace.rusage_cpu = usage.ru_utime + usage.ru_stime  # the whole tree's, as the benchmark counts it
    trace.samples.append(Sample(trace.ended, dict(known), _machine_busy()))
    for line in events_path.read_text().splitlines():
        at, pid, thread, kind, stage = line.split(" ", 4)
        trace.events.append(Event(float(at), int(pid), thread, kind, stage))
    return trace


def _cpu_at(trace: Trace, at: float) -> tuple[float, float, float]:
    """The root's and the other processes' CPU, and the machine's busy seconds, at `at` (linear
    between the samples around it)."""
    before = max((sample for sample in trace.samples if sample.at <= at), key=lambda sample: sample.at,
                 default=trace.samples[0])
    after = min((sample for sample in trace.samples if sample.at >= at), key=lambda sample: sample.at,
                default=trace.samples[-1])

    def parts(sample: Sample) -> tuple[float, float, float]:
        root = sample.cpu.get(trace.root, 0.0)
        return root, sum(sample.cpu.values()) - root, sample.machine_busy

    low, high = parts(before), parts(after)
    if after.at == before.at:
        return low
    share = (at - before.at) / (after.at - before.at)
    return tuple(a + (b - a) * share for a, b in zip(low, high, strict=True))  # type: ignore[return-value]


def _workers_cumulative(trace: Trace) -> dict[int, float]:
    """Each process's CPU at its last sample (workers that ended between samples lose up to 10 ms)."""
    last: dict[int, float] = {}
    for sample in trace.samples:
        last.update(sample.cpu)
    return last


def report(trace: Trace) -> None:
    root = trace.root
    boundaries: list[tuple[float, str]] = [(trace.started, "spawn")]
    open_stages: list[str] = []
    labels: list[str] = []
    counts: dict[str, int] = {}
    opened: dict[str, float] = {}
    seconds: dict[str, float] = {}
    for event in sorted(trace.events, key=lambda item: item.at):
        if event.pid != root or event.stage in COUNTED:
            key = f"{event.stage} ({'main' if event.pid == root else event.pid})"
            counts[key] = counts.get(key, 0) + (event.kind == "begin")
            if event.kind == "begin":
                opened[key] = event.at
            elif key in opened:
                seconds[key] = seconds.get(key, 0.0) + event.at - opened.pop(key)
            continue
        if event.kind == "begin":
            open_stages.append(event.stage)
        elif event.stage in open_stages:
            open_stages.reverse()
            open_stages.remove(event.stage)
            open_stages.reverse()
        boundaries.append((event.at, f"{event.kind} {event.stage}"))
        labels.append(" / ".join(open_stages) or "(between stages)")
    boundaries.append((trace.ended, "ended"))
    labels.append("after exit_with, until the process is gone")
    worker_spans = [
        (event.pid, event.stage, event.kind, event.at) for event in trace.events if event.pid != root
    ]
    print(f"{'from':>7} {'wall':>6} {'main CPU':>8} {'others':>7} {'cores':>5} {'rest of machine':>15}  stage (main process)")
    first_label = "start-up: interpreter, imports"
    previous_root, previous_others, previous_machine = _cpu_at(trace, trace.started)
    total_wall = trace.ended - trace.started
    for index in range(len(boundaries) - 1):
        start, _ = boundaries[index]
        end, _ = boundaries[index + 1]
        root_cpu, others_cpu, machine = _cpu_at(trace, end)
        wall = end - start
        used_root = root_cpu - previous_root
        used_others = others_cpu - previous_others
        rest = machine - previous_machine - used_root - used_others
        previous_root, previous_others, previous_machine = root_cpu, others_cpu, machine
        if wall < 0.02:
            continue
        label = first_label if index == 0 else labels[index - 1]
        running = sorted({stage for pid, stage, kind, at in worker_spans if kind == "begin" and at < end
                          and not any(p == pid and s == stage and k == "end" and a <= start
                                      for p, s, k, a in worker_spans)})
        also = f"  [workers: {', '.join(running)}]" if running else ""
        print(f"{start - trace.started:6.2f}s {wall:5.2f}s {used_root:7.2f}s {used_others:6.2f}s "
              f"{(used_root + used_others) / wall:5.2f} {max(rest, 0) / wall:14.2f}c  {label}{also}")
    cumulative = _workers_cumulative(trace)
    total = trace.rusage_cpu
    print(f"\ntotal: wall {total_wall:.2f} s, CPU {total:.2f} s (sampled: main {cumulative.get(root, 0):.2f} s, "
          f"all {sum(cumulative.values()):.2f} s), "
          f"{total / total_wall:.2f} cores busy on average; calls counted (wall in them): "
          + ", ".join(f"{stage} {count} ({seconds.get(stage, 0.0):.2f} s)" for stage, count in sorted(counts.items())))
    for pid in sorted(set(cumulative) - {root}):
        spans = [event for event in trace.events if event.pid == pid]
        if spans:
            begin, end = min(event.at for event in spans), max(event.at for event in spans)
            print(f"  worker {pid}: {spans[0].stage}, {begin - trace.started:.2f}-{end - trace.started:.2f} s, "
                  f"CPU {cumulative[pid]:.2f} s")


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--inside":
        inside(sys.argv[2], sys.argv[3:])
        return 0
    sys.path.insert(0, str(BENCHMARKS.parent))  # not inside the gate: its checkout is on PYTHONPATH
    from benchmarks.measure import forget_outcomes, python_environment

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("branch")
    parser.add_argument("--base", default="main")
    parser.add_argument("--gate-path", type=Path, default=BENCHMARKS.parent)
    parser.add_argument("--runs", type=int, default=1, help="traced runs, each printed (default 1)")
    arguments = parser.parse_args()
    repo = arguments.repo.resolve()
    subprocess.run(["git", "checkout", "-q", arguments.branch], cwd=repo, check=True)
    env = python_environment(arguments.gate_path.resolve())
    scratch = Path(tempfile.mkdtemp(prefix="stage-trace-"))
    try:
        gate = ["run", "--base", arguments.base, "--reviewer", "builtin", "--no-verify",
                "--output-dir", str(scratch / "out"), "--cache-dir", str(scratch / "cache")]
        subprocess.run([sys.executable, "-m", "reviewgate", *gate], cwd=repo, env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(arguments.runs):
            events = scratch / "events"
            events.unlink(missing_ok=True)
            forget_outcomes(scratch / "cache")  # or the run reads the first one's outcome back
            print(f"\n{arguments.branch}, {arguments.gate_path}; uptime before:{os.getloadavg()}")
            trace = traced_run(repo, [sys.executable, __file__, "--inside", str(events), *gate], env, events)
            report(trace)
            print(f"load average after: {os.getloadavg()}")
    finally:
        subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
