"""Freeze a large synthetic change and compare `reviewgate freeze` with plain `git diff`.

    python benchmarks/freeze_benchmark.py [--files 50000] [--changed-files 5000] [--changed-lines 200000]

The default scale: a repository of 50,000 files, a change of 5,000 files and
200,000 changed lines. Targets: freeze at most 2x the time of `git diff` on the same range
(measured in the same run) and a peak resident memory below 500 MB. The repository is built
once with `git fast-import` under benchmarks/.cache/ (gitignored) and reused.
Each command runs once untimed (files in the page cache, bytecode written), then they alternate
`--repeat` times; the ratio judged is the median of the runs' ratios (each freeze against the
`git diff` run just before it), so a burst of load on a shared machine moves one pair, not the
verdict. Exits 1 when a target is missed, so CI can run it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.measure import python_environment  # noqa: E402

HERE = Path(__file__).resolve().parent
MAX_RATIO = 2.0
MAX_MEMORY_MB = 500.0
# Each changed file gets this many changed lines per block, blocks spaced so they form
# separate hunks (a realistic diff, not one giant hunk per file).
LINES_PER_BLOCK = 5
BLOCK_SPACING = 12
UNCHANGED_FILE_LINES = 10
IDENTITY = "Bench <bench@example.com> 1767225600 +0000"


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=50_000, help="files in the repository (default 50000)")
    parser.add_argument(
        "--changed-files", type=int, default=5_000, help="files the change touches (default 5000)"
    )
    parser.add_argument(
        "--changed-lines", type=int, default=200_000, help="lines the change replaces (default 200000)"
    )
    parser.add_argument(
        "--repeat", type=int, default=7, help="alternating runs of each command; the median counts (default 7)"
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=HERE / ".cache", help="where the repository is built"
    )
    arguments = parser.parse_args(argv)
    if not 0 < arguments.changed_files <= arguments.files:
        parser.error("--changed-files: expected between 1 and --files")
    if arguments.changed_lines < arguments.changed_files:
        parser.error("--changed-lines: expected at least one line per changed file")
    return arguments


def _data(text: str) -> bytes:
    encoded = text.encode()
    return b"data %d\n" % len(encoded) + encoded + b"\n"


def _file_text(index: int, lines: int, changed: set[int]) -> str:
    return "".join(
        f"{'changed' if number in changed else 'value'} = compute({index}, {number})  # line {number}\n"
        for number in range(lines)
    )


def _changed_numbers(count: int) -> set[int]:
    numbers: set[int] = set()
    block = 0
    while len(numbers) < count:
        start = block * BLOCK_SPACING + 3
        numbers.update(range(start, start + min(LINES_PER_BLOCK, count - len(numbers))))
        block += 1
    return numbers


def _stream(files: int, changed_files: int, changed_lines: int) -> Iterator[bytes]:
    """A fast-import stream: `main` with every file, `feature` replacing lines in some."""
    per_file = [
        changed_lines // changed_files + (1 if index < changed_lines % changed_files else 0)
        for index in range(changed_files)
    ]
    lengths = [max(per_file) * BLOCK_SPACING // LINES_PER_BLOCK + BLOCK_SPACING] * changed_files
    yield b"commit refs/heads/main\n" + f"committer {IDENTITY}\n".encode() + _data("base")
    for index in range(files):
        lines = lengths[index] if index < changed_files else UNCHANGED_FILE_LINES
        yield f"M 100644 inline src/module{index // 500:03d}/file{index:05d}.py\n".encode()
        yield _data(_file_text(index, lines, set()))
    yield b"commit refs/heads/feature\n" + f"committer {IDENTITY}\n".encode() + _data("change")
    yield b"from refs/heads/main\n"
    for index in range(changed_files):
        yield f"M 100644 inline src/module{index // 500:03d}/file{index:05d}.py\n".encode()
        yield _data(_file_text(index, lengths[index], _changed_numbers(per_file[index])))
    yield b"done\n"


def build_repository(arguments: argparse.Namespace) -> Path:
    name = f"repo-{arguments.files}-{arguments.changed_files}-{arguments.changed_lines}"
    repo: Path = arguments.cache_dir / name
    if (repo / ".git" / "refs" / "heads" / "feature").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    started = time.monotonic()
    importer = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=repo, stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for chunk in _stream(arguments.files, arguments.changed_files, arguments.changed_lines):
        importer.stdin.write(chunk)
    importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")
    # HEAD on the branch without checking 50,000 files out: freeze reads commits, not the tree.
    subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/feature"], cwd=repo, check=True)
    print(f"built {repo} in {time.monotonic() - started:.1f}s")
    return repo


def timed(command: list[str], repo: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall time and peak resident memory (MB) of one command and its children, via wait4."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    while process.stdout.read(1 << 20):
        pass  # read it all, as reviewgate reads git's output
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return elapsed, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    repo = build_repository(arguments)
    git_diff = ["git", "diff", "main...feature"]
    freeze = [sys.executable, "-m", "reviewgate", "freeze", "--base", "main", "--head", "feature"]
    environment_note = (
        f"{arguments.files} files, {arguments.changed_files} changed, {arguments.changed_lines} lines"
    )
    environment = python_environment(HERE.parent)
    timed(git_diff, repo)
    timed(freeze, repo, environment)
    diff_times, freeze_runs, ratios = [], [], []
    for _ in range(arguments.repeat):
        diff_times.append(timed(git_diff, repo)[0])
        freeze_runs.append(timed(freeze, repo, environment))
        ratios.append(freeze_runs[-1][0] / diff_times[-1] if diff_times[-1] else float("inf"))
    diff_time = statistics.median(diff_times)
    freeze_time = statistics.median(run[0] for run in freeze_runs)
    memory = max(run[1] for run in freeze_runs)
    ratio = statistics.median(ratios)
    print(f"repository: {environment_note}; median of {arguments.repeat} alternating runs")
    print(f"git diff main...feature: {diff_time:.2f}s")
    print(f"reviewgate freeze:       {freeze_time:.2f}s")
    print(f"ratio: {ratio:.2f}x (target at most {MAX_RATIO:g}x; runs from {min(ratios):.2f}x to {max(ratios):.2f}x)")
    print(f"peak memory of reviewgate freeze: {memory:.0f} MB (target below {MAX_MEMORY_MB:g} MB)")
    met = ratio <= MAX_RATIO and memory < MAX_MEMORY_MB
    print("targets met" if met else "target missed")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
