"""Where the per-file stage's CPU goes, lens by lens, with the parse and the freeing of the trees apart:

    python benchmarks/per_file_cpu.py REPO BRANCH [--gate-path CHECKOUT ...] [--base main] [--runs 3]

Each checkout's gate runs once untimed (bytecode and page cache warm), then `--runs` times in turn
with the per-file stage in one process (REVIEWGATE_WORKERS=1: the DRY lens runs before it, apart),
its functions wrapped from outside (`--inside`, nothing in the checkout is edited). Each part is
charged its own CPU (`time.process_time`), what it calls that is wrapped too left out: `ast.parse`
(every caller's), the top-level statements told apart from the text (python_statements), the tests
lens's head shapes, the trees freed when a file is done, each per-file lens, and the rest of
`review_file`. A shared machine's load moves every figure (a busy sibling core slows each
instruction): runs of two checkouts in turn are comparable, runs an hour apart hardly.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
REST = "review_file, the rest"
# What is charged apart from the lens that calls it, by module, attribute (a dotted one is a class's
# method) and name. Functions imported by name into another module are wrapped there.
PARTS = (
    ("ast", "parse", "ast.parse (every caller)"),
    ("reviewgate.reviewers.builtin.languages.python_statements", "top_level_statements",
     "top-level statements told apart (python_statements)"),
    ("reviewgate.reviewers.builtin.python_walk", "Walk.__init__", "grouped walks (python_walk.Walk)"),
    ("reviewgate.reviewers.builtin.engine", "head_shapes_of", "head shapes for the tests lens"),
    ("reviewgate.reviewers.builtin.engine", "forget_parsed_trees", "trees freed (forget_parsed_trees)"),
)


def _install(result_path: str) -> None:
    """Inside the gate's process: charge each wrapped part its own CPU, written as JSON when the
    lenses are done (the gate ends with `os._exit`)."""
    import importlib

    spent: dict[str, float] = {}
    inner: list[float] = []  # per open part: the CPU of the wrapped parts it called

    def charged(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*arguments: Any, **keywords: Any) -> Any:
            started = time.process_time()
            inner.append(0.0)
            try:
                return function(*arguments, **keywords)
            finally:
                used = time.process_time() - started
                spent[label] = spent.get(label, 0.0) + used - inner.pop()
                if inner:
                    inner[-1] += used

        return call

    for module_name, attribute, label in PARTS:
        module = importlib.import_module(module_name)
        owner_name, _, name = attribute.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        setattr(owner, name, charged(label, getattr(owner, name)))
    import reviewgate.reviewers.builtin.engine as engine
    import reviewgate.reviewers.builtin.lens_review as lens_review

    class Charged:
        """A per-file lens whose findings are listed inside its own charge."""

        def __init__(self, lens: Any) -> None:
            self.check = charged(_lens_name(lens), lambda request: list(lens.check(request)))

    wrapped: dict[int, Charged] = {}
    review_file = engine.review_file

    def reviewed(request: Any, change: Any, per_file: Iterable[Any], with_shapes: bool) -> Any:
        lenses = [wrapped.setdefault(id(lens), Charged(lens)) for lens in per_file]
        return charged(REST, review_file)(request, change, lenses, with_shapes)

    engine.review_file = reviewed
    run_lenses = engine.run_lenses

    def lenses_run(*arguments: Any, **keywords: Any) -> Any:
        try:
            return run_lenses(*arguments, **keywords)
        finally:
            Path(result_path).write_text(json.dumps(dict(spent)))

    for module, name in ((engine, "run_lenses"), (lens_review, "run_lenses")):  # imported there by name
        setattr(module, name, lenses_run)


def _lens_name(lens: Any) -> str:
    rule = getattr(lens, "rule", None)
    return f"{type(lens).__name__} ({rule})" if isinstance(rule, str) else type(lens).__name__


def inside(result_path: str, arguments: list[str]) -> None:
    _install(result_path)
    import reviewgate.cli as cli

    sys.argv = ["reviewgate", *arguments]
    cli.exit_with(cli.main())


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
    parser.add_argument("--gate-path", type=Path, action="append", help="a checkout to measure (repeatable; default: this one)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each checkout, in turn (default 3)")
    arguments = parser.parse_args()
    gates = [path.resolve() for path in arguments.gate_path or [BENCHMARKS.parent]]
    for gate in gates:
        if not (gate / "reviewgate" / "__main__.py").is_file():
            parser.error(f"--gate-path {gate}: no reviewgate package there")
    repo = arguments.repo.resolve()
    subprocess.run(["git", "checkout", "-q", arguments.branch], cwd=repo, check=True)
    scratch = Path(tempfile.mkdtemp(prefix="per-file-cpu-"))
    runs: dict[int, list[dict[str, float]]] = {number: [] for number in range(len(gates))}
    try:
        gate_arguments = ["run", "--base", arguments.base, "--reviewer", "builtin", "--no-verify",
                          "--output-dir", str(scratch / "out"), "--cache-dir", str(scratch / "cache")]
        for gate in gates:
            subprocess.run([sys.executable, "-m", "reviewgate", *gate_arguments], cwd=repo,
                           env=python_environment(gate), check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"load average before: {os.getloadavg()}")
        for _ in range(arguments.runs):
            for number, gate in enumerate(gates):
                result = scratch / "spent.json"
                result.unlink(missing_ok=True)
                forget_outcomes(scratch / "cache")  # or the run reads the first one's outcome back
                env = {**python_environment(gate), "REVIEWGATE_WORKERS": "1"}
                completed = subprocess.run([sys.executable, __file__, "--inside", str(result), *gate_arguments],
                                           cwd=repo, env=env, check=False, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.PIPE)
                if not result.is_file():
                    raise SystemExit(f"the gate at {gate} exited {completed.returncode}:\n"
                                     f"{completed.stderr.decode(errors='replace')[-3000:]}")
                runs[number].append(json.loads(result.read_text()))
        print(f"load average after: {os.getloadavg()}")
    finally:
        subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    _report(arguments.branch, gates, runs)
    return 0


def _report(branch: str, gates: list[Path], runs: dict[int, list[dict[str, float]]]) -> None:
    """Median CPU seconds of each part per checkout, largest first (by the first checkout)."""
    medians = [
        {part: statistics.median(run.get(part, 0.0) for run in runs[number])
         for part in {part for run in runs[number] for part in run}}
        for number in range(len(gates))
    ]
    for number, gate in enumerate(gates):
        print(f"gate {number}: {gate}")
    parts = sorted({part for median in medians for part in median}, key=lambda part: -medians[0].get(part, 0.0))
    totals = [statistics.median(sum(run.values()) for run in runs[number]) for number in range(len(gates))]
    print(f"\n{branch}, median of {len(runs[0])} runs, CPU seconds (share of gate 0's per-file stage)")
    print(f"{'part':<58}" + "".join(f" {f'gate {number}':>14}" for number in range(len(gates))))
    for part in parts:
        print(f"{part:<58}" + "".join(
            f" {median.get(part, 0.0):7.3f} s {median.get(part, 0.0) / totals[0] * 100:4.1f}%" for median in medians))
    print(f"{'per-file stage, in all':<58}" + "".join(f" {total:7.3f} s      " for total in totals))


if __name__ == "__main__":
    raise SystemExit(main())
