"""What bounding every tree-sitter parse costs an ordinary change. One command:

    python benchmarks/parse_budget_benchmark.py REPOSITORY... [--runs 7] [--gate CHECKOUT]...
    python benchmarks/parse_budget_benchmark.py --hostile [--gate CHECKOUT]...

For each local git repository given (real code: a Java, Go, Rust, C#, Ruby, PHP, Kotlin or
JavaScript project), it clones it into a temp dir and times `reviewgate run --reviewer builtin
--no-verify` on two branches:

- a one-line push: the largest source file of the repository's main language gets one of its own
  `return` lines again (the file is parsed at head and at the base, as a push's file is);
- a wider change: the same one-line edit in each of its 30 largest source files.

It prints the median wall seconds and the CPU seconds (user + system, the gate and every process
it started) of `--runs` runs of each, for each reviewgate checkout given with `--gate` (default:
this one): a checkout from before a change and one from after, their runs taken in turn so that
the load of a shared machine falls on both alike.

With `--hostile` it times instead, once each, the review of a branch adding one file of text that
tree-sitter's runtime spends minutes on without a progress report (testing/hostile_parses.py):
the run's wall seconds, the builtin reviewer's own, the file's parse budget, and whether the run's
notes name the file. The target: the review ends within the budget plus 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO_ROOT = BENCHMARKS.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.measure import python_environment  # noqa: E402
from reviewgate.reviewers.builtin.languages.syntax_tree import PARSE_SECONDS_FLOOR, PARSE_SECONDS_PER_BYTE, grammar_of  # noqa: E402
from testing.hostile_parses import LINES, SLOW_FILES  # noqa: E402
from testing.repo import GIT_IDENTITY, make_repo  # noqa: E402

WIDE_FILES = 30
_RETURN = re.compile(rb"^[ \t]+return\b[^\n]*\n", re.MULTILINE)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _source_files(repo: Path) -> list[Path]:
    """The tracked files a grammar reads, with a `return` line, largest first, in the most common grammar."""
    tracked = [repo / name for name in _git(repo, "ls-files").splitlines() if grammar_of(name) not in (None, "python")]
    by_grammar: dict[str, list[Path]] = {}
    for path in tracked:
        if path.is_file() and _RETURN.search(path.read_bytes()):
            by_grammar.setdefault(grammar_of(path.name) or "", []).append(path)
    if not by_grammar:
        raise SystemExit(f"{repo}: no source file with a `return` line in a language the gate parses")
    files = max(by_grammar.values(), key=len)
    return sorted(files, key=lambda path: path.stat().st_size, reverse=True)


def _one_line_edit(path: Path) -> None:
    data = path.read_bytes()
    line = _RETURN.search(data)
    assert line is not None
    path.write_bytes(data[: line.end()] + line.group(0) + data[line.end() :])


def _branch(repo: Path, name: str, files: list[Path]) -> None:
    _git(repo, "checkout", "-q", "-B", name, "main")
    for path in files:
        _one_line_edit(path)
    _git(repo, "commit", "-q", "-am", name)


def _gate_run(repo: Path, gate: Path, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [sys.executable, "-m", "reviewgate", "run", "--base", "main", "--reviewer", "builtin", "--no-verify",
         "--output-dir", str(repo.parent / "out")],
        cwd=repo, env=python_environment(gate), check=False, capture_output=True, text=True, timeout=timeout,
    )
    if completed.returncode not in (0, 1):
        raise SystemExit(f"the gate exited {completed.returncode} in {repo}: {completed.stderr[-2000:]}")
    return completed


def _timed_run(repo: Path, gate: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the gate and all it waited for) of one gate run."""
    before = os.times()
    started = time.perf_counter()
    _gate_run(repo, gate)
    wall = time.perf_counter() - started
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _hostile(gates: list[Path]) -> None:
    """The review of each hostile file's branch, once per checkout (a run over 5 minutes is cut)."""
    for path, line in SLOW_FILES:
        text = line * LINES
        budget = PARSE_SECONDS_FLOOR + PARSE_SECONDS_PER_BYTE * len(text)
        for number, gate in enumerate(gates):
            with tempfile.TemporaryDirectory() as temporary:
                repo = make_repo(Path(temporary), {"README.md": "x\n"}, {path: text}).path
                started = time.perf_counter()
                try:
                    _gate_run(repo, gate, timeout=300)
                except subprocess.TimeoutExpired:
                    print(f"{path:<16} {line.strip():<7} gate {number}  over 300 s: cut", flush=True)
                    continue
                wall = time.perf_counter() - started
                report = json.loads((repo.parent / "out" / "report.json").read_text(encoding="utf-8"))
                builtin = next(item for item in report["reviewers"] if item["reviewer"] == "builtin")
                named = any(note.startswith(f"{path}: not parsed") for note in builtin["notes"])
                print(f"{path:<16} {line.strip():<7} gate {number}  run {wall:.1f} s  review "
                      f"{builtin['duration_seconds']:.1f} s  budget {budget:.2f} s  named {named}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repositories", nargs="*", type=Path)
    parser.add_argument("--hostile", action="store_true", help="time the review of text tree-sitter explodes on")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--gate", type=Path, action="append", help="a reviewgate checkout timed (repeatable)")
    options = parser.parse_args()
    gates: list[Path] = options.gate or [REPO_ROOT]
    for number, gate in enumerate(gates):
        print(f"gate {number}: {gate.resolve()} ({_git(gate, 'rev-parse', '--short', 'HEAD').strip()})")
    if options.hostile:
        _hostile(gates)
        return
    if not options.repositories:
        parser.error("give a repository to time an ordinary change in, or --hostile")
    for source in options.repositories:
        with tempfile.TemporaryDirectory() as temporary:
            repo = Path(temporary) / "repo"
            subprocess.run(["git", "clone", "-q", "--local", str(source), str(repo)], check=True)
            _git(repo, "checkout", "-q", "-B", "main")
            files = _source_files(repo)
            for name, edited in (("one-line", files[:1]), (f"{WIDE_FILES}-files", files[:WIDE_FILES])):
                _branch(repo, name, edited)
                for gate in gates:
                    _timed_run(repo, gate)  # warm: bytecode, page cache
                runs: list[list[tuple[float, float]]] = [[] for _ in gates]
                for _ in range(options.runs):
                    for number, gate in enumerate(gates):
                        runs[number].append(_timed_run(repo, gate))
                size = sum(path.stat().st_size for path in edited) // 1024
                for number, timed in enumerate(runs):
                    wall = statistics.median(run[0] for run in timed)
                    cpu = statistics.median(run[1] for run in timed)
                    print(f"{source.name:<12} {name:<9} {len(edited):>3} files {size:>5} KB  gate {number}  "
                          f"wall {wall:.3f} s  cpu {cpu:.3f} s", flush=True)


if __name__ == "__main__":
    main()
