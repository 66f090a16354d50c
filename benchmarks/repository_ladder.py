"""What a cold run costs as the repository grows: the same +5,000-line push reviewed on
repositories of about 0.3M, 1M, 2M and 4M lines of code. One command:

    nice -n 5 python benchmarks/repository_ladder.py            # 3 alternating runs of each rung
    nice -n 5 python benchmarks/repository_ladder.py --gate-path /work/main --gate-path .

The repositories are real code: the source distributions in SDISTS, downloaded once with
`pip download --no-binary NAME --no-deps NAME==VERSION` into benchmarks/.cache/ladder-sdists/
(gitignored; `--no-binary NAME` and not `:all:`, which would build every build dependency,
Cython among them, from source) and unpacked side by side, each under its own folder. A rung
takes the distributions in SDISTS order, file by file in path order, until the lines of code (files
of a language the DRY lens reads, tests included) reach its size, and commits them as `main`.
The push (`push-5k`) adds about 5,000 lines: modules of the running Python's standard library
vendored under `django/contrib/vendored/` as django_benchmark.py does, so it repeats nothing in
the repository.

For each rung it measures, alternating and in the same run, each gate (`reviewgate run --reviewer
builtin --no-verify` as a subprocess, PYTHONPATH its checkout) cold (an empty --cache-dir: what a
CI run that restores no cache gets) and warm (the same --cache-dir again: a second push), and
prints the medians of CPU time (user + system, the workers included) and of wall time, and
cold/warm. The target is cold at most 1.5x warm on the largest rung. Every run's findings
(report.json) are compared with the first gate's first cold run of the rung: a speedup must not
change them, cold or warm, and a difference is printed and makes the command exit 1.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))

from benchmarks.django_benchmark import (  # noqa: E402
    Samples,
    add_gate_options,
    checked_gates,
    gate_command,
    git,
    pick,
    standard_library_modules,
)
from benchmarks.measure import (  # noqa: E402
    CACHE,
    CommandFailed,
    findings_of,
    forget_outcomes,
    python_environment,
    run_timed,
)
from reviewgate.reviewers.builtin.language_table import CODE_LANGUAGES, language_of  # noqa: E402

# (name, version) of each distribution, in the order a rung takes them. Pinned: the same bytes on
# every machine, so rungs compare across runs.
SDISTS = (
    ("django", "5.2.19"),
    ("sqlalchemy", "2.1.9"),
    ("sympy", "1.14.0"),
    ("twisted", "26.10.0"),
    ("salt", "3008.5"),
    ("moto", "5.2.5"),
    ("networkx", "3.6.1"),
)
RUNGS = (300_000, 1_000_000, 2_000_000, 4_000_000)
PUSH_LINES = 5_000
PUSH_BRANCH = "push-5k"
TARGET_RATIO = 1.5


def download(name: str, version: str) -> Path:
    folder = CACHE / "ladder-sdists"
    pattern = f"{name.replace('-', '_')}-{version}.tar.gz"
    found = sorted(folder.glob(pattern)) or sorted(folder.glob(f"{name}-{version}.tar.gz"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-binary", name, "--no-deps",
             f"{name}=={version}", "--dest", str(folder)],
            check=True,
            capture_output=True,
        )
        found = sorted(folder.glob(pattern)) or sorted(folder.glob(f"{name}-{version}.tar.gz"))
    return found[-1]


def sources() -> list[tuple[Path, Path]]:
    """(unpacked distribution root, file relative to it) of every file of every distribution, in
    SDISTS order and then path order."""
    unpacked = CACHE / "ladder-sources"
    files: list[tuple[Path, Path]] = []
    for name, version in SDISTS:
        archive_path = download(name, version)
        root = unpacked / archive_path.name.removesuffix(".tar.gz")
        if not root.is_dir():
            with tempfile.TemporaryDirectory(dir=CACHE) as temporary, tarfile.open(archive_path) as archive:
                archive.extractall(temporary, filter="data")
                (extracted,) = Path(temporary).iterdir()
                unpacked.mkdir(parents=True, exist_ok=True)
                shutil.move(str(extracted), root)
        files += [(root, path.relative_to(root)) for path in sorted(root.rglob("*")) if path.is_file()]
    return files


def code_lines(path: Path) -> int:
    if language_of(path.as_posix()) not in CODE_LANGUAGES:
        return 0
    with path.open("rb") as handle:
        return handle.read().count(b"\n")


def build_rung(workdir: Path, size: int, files: list[tuple[Path, Path]]) -> tuple[Path, int]:
    """The rung's repository (built once, kept) and its lines of code."""
    repo = workdir / f"rung-{size}"
    marker = repo / ".git" / "ladder-ready"
    if marker.exists():
        return repo, int(marker.read_text(encoding="utf-8"))
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    total = 0
    for root, relative in files:
        if total >= size:
            break
        source = root / relative
        total += code_lines(source)
        destination = repo / root.name.split("-")[0].lower() / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"about {size} lines of code")
    git(repo, "checkout", "-q", "-b", PUSH_BRANCH)
    folder = repo / "django" / "contrib" / "vendored"
    for path, text in pick(standard_library_modules(), PUSH_LINES, skip=0):
        destination = folder / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(f"# Vendored from the Python {sys.version_info[0]}.{sys.version_info[1]} "
                               f"standard library.\n{text}", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", PUSH_BRANCH)
    marker.write_text(str(total), encoding="utf-8")
    return repo, total


def measure_rung(
    repo: Path, gates: list[Path], runs: int, scratch: Path
) -> tuple[dict[str, Samples], list[str]]:
    """The samples of each gate cold and warm, and the runs whose findings differ from the first
    gate's first cold run."""
    samples: dict[str, Samples] = {}
    expected: str | None = None
    differing: list[str] = []
    for number, gate in enumerate(gates):  # untimed: bytecode written, files in the page cache
        run_timed(gate_command(scratch / "warm-up", scratch / f"warm-up-{number}"), repo, python_environment(gate))
    for round_number in range(runs):
        for number, gate in enumerate(gates):
            env = python_environment(gate)
            cache = scratch / f"cache-{number}-{round_number}"
            shutil.rmtree(cache, ignore_errors=True)
            for state in ("cold", "warm"):
                output = scratch / f"out-{number}-{state}"
                forget_outcomes(cache)  # warm: a second push's caches, not the first run's outcome
                samples.setdefault(f"{number}:{state}", Samples()).add(run_timed(gate_command(output, cache), repo, env))
                found = findings_of(output)
                expected = found if expected is None else expected
                if found != expected:
                    differing.append(f"gate {number} {state}, run {round_number + 1}")
            shutil.rmtree(cache, ignore_errors=True)
    return samples, differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_gate_options(parser)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(RUNGS),
                        help="lines of code of each rung (default 300000 1000000 2000000 4000000)")
    parser.add_argument("--workdir", type=Path, default=CACHE / "ladder",
                        help="where the repositories are built and kept (default benchmarks/.cache/ladder)")
    arguments = parser.parse_args()
    gates = checked_gates(parser, arguments)
    if min(arguments.sizes) < 1:
        parser.error(f"--sizes must be positive line counts, got {min(arguments.sizes)}")
    files = sources()
    rows = []
    differing: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ladder-bench-") as scratch:
        for size in sorted(arguments.sizes):
            repo, lines = build_rung(arguments.workdir, size, files)
            print(f"measuring the rung of {lines} lines of code ...", flush=True)
            git(repo, "checkout", "-q", PUSH_BRANCH)
            try:
                samples, rung_differing = measure_rung(repo, gates, arguments.runs, Path(scratch))
                rows.append((lines, samples))
                differing += [f"{lines} lines: {run}" for run in rung_differing]
            except CommandFailed as error:
                print(error, file=sys.stderr)
                return 1
            finally:
                git(repo, "checkout", "-q", "main")
    print(f"\nmedian of {arguments.runs} alternating runs, CPU seconds (wall seconds in brackets); "
          f"Python {sys.version.split()[0]}; a +{PUSH_LINES} push")
    for number, gate in enumerate(gates):
        print(f"gate {number}: {gate}")
    print(f"\n{'lines':>9} {'gate':>4} {'cold':>15} {'warm':>15} {'cold/warm':>9}")
    verdicts: list[str] = []
    for lines, samples in rows:
        verdicts = []  # of the largest rung, the last one
        for number in range(len(gates)):
            cold, warm = samples[f"{number}:cold"], samples[f"{number}:warm"]
            ratio = cold.median / warm.median
            print(f"{lines:>9} {number:>4} {cold.median:6.2f}s ({cold.wall_median:5.2f}s) "
                  f"{warm.median:6.2f}s ({warm.wall_median:5.2f}s) {ratio:8.2f}x")
            verdicts.append(f"gate {number}, {lines} lines: cold/warm <= {TARGET_RATIO:g}x "
                            f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}")
    print("\n" + "\n".join(verdicts))
    if differing:
        print("findings differ from gate 0's first cold run in: " + "; ".join(differing))
        return 1
    print("findings: the same in every run of every gate, cold and warm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
