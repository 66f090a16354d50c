"""The gate on a real, large repository: the Django 5.2 source distribution. One command:

    python benchmarks/django_benchmark.py                      # 3 alternating runs of each case
    python benchmarks/django_benchmark.py --gate-path /work/main --gate-path .   # two gates side by side

It downloads the Django 5.2 sdist with `pip download --no-binary :all: --no-deps 'django==5.2.*'`
(once, under benchmarks/.cache/, gitignored), unpacks it into a git repository whose `main` is the
release, and commits four changes on branches of their own:

- `one-line`: one docstring line of django/utils/text.py reworded;
- `lines-200`, `lines-20k`, `lines-100k`: that many added lines of real code, modules of the running
  Python's standard library (tests and lib2to3 left out) vendored under django/utils/ or
  django/contrib/vendored/ with a header line each. The choice is deterministic for one Python
  version (it is printed).

For each change it times, alternating and in the same run: the floor (Python start-up, `git diff`
of the change and reading every changed file, in one process), each gate (`reviewgate run
--reviewer builtin --no-verify` as a subprocess, with PYTHONPATH the gate's checkout) cold (an
empty --cache-dir) and warm (the same --cache-dir again), and jscpd 5.3.2 over the whole
repository (bytecode is cached under benchmarks/.cache/pycache, as an installed package has it).
It prints the medians with ratios against jscpd and the floor, and the peak memory
(the most the process tree held at once, sampled, shared pages counted once; or ru_maxrss when larger). Targets: the
one-line change warm at most 0.1x jscpd and under 5x the floor; +20k at most 0.5x jscpd; +100k at
most 1x jscpd; peak memory below 500 MB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))

from benchmarks.measure import (  # noqa: E402
    CACHE,
    CommandFailed,
    ensure_jscpd,
    jscpd_command,
    python_environment,
    run_measured,
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
}
CHANGES = {"one-line": 1, "lines-200": 200, "lines-20k": 20_000, "lines-100k": 100_000}
# Target ratios against jscpd (warm gate), by change; and the one-line change against the floor.
JSCPD_TARGETS = {"one-line": 0.1, "lines-20k": 0.5, "lines-100k": 1.0}
FLOOR_TARGET = 5.0
MEMORY_TARGET_MB = 500.0
# Standard library parts that are not ordinary modules: tests, Python 2 fixtures, bundled wheels.
SKIPPED_PARTS = frozenset({"test", "tests", "idlesaves", "lib2to3", "site-packages", "ensurepip", "__pycache__"})
FLOOR_SCRIPT = """
import subprocess, sys
subprocess.run(["git", "diff", "main...HEAD"], check=True, capture_output=True)
names = subprocess.run(
    ["git", "diff", "--name-only", "--diff-filter=AMR", "-z", "main...HEAD"], check=True, capture_output=True
).stdout.decode().split("\\0")
for name in filter(None, names):
    with open(name, "rb") as handle:
        handle.read()
"""


def git(repo: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **IDENTITY}, check=True, capture_output=True
    )
    return completed.stdout.decode()


def download_sdist() -> Path:
    folder = CACHE / "django-sdist"
    found = sorted(folder.glob("django-5.2*.tar.gz"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
             "django==5.2.*", "--dest", str(folder)],
            check=True,
            capture_output=True,
        )
        found = sorted(folder.glob("django-5.2*.tar.gz"))
    return found[-1]


def standard_library_modules() -> list[tuple[str, str]]:
    """(path under the standard library, text) of its ordinary modules, in path order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if SKIPPED_PARTS & set(relative.parts) or relative.name.startswith("test_"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
            compile(text, str(path), "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        found.append((relative.as_posix(), text))
    return found


def pick(modules: list[tuple[str, str]], lines: int, skip: int) -> list[tuple[str, str]]:
    """Modules in path order, from the `skip`-th, whose line counts add up to about `lines`."""
    chosen, total = [], 0
    for path, text in modules[skip:]:
        count = text.count("\n")
        if total + count <= lines * 1.02:
            chosen.append((path, text))
            total += count
        if total >= lines * 0.98:
            break
    return chosen


def commit_change(repo: Path, branch: str, lines: int, modules: list[tuple[str, str]]) -> None:
    git(repo, "checkout", "-q", "-B", branch, "main")
    if lines == 1:
        target = repo / "django" / "utils" / "text.py"
        text = target.read_text(encoding="utf-8").split("\n")
        number = next(index for index, line in enumerate(text) if line.strip().startswith('"""') and " the " in line)
        text[number] = text[number].replace(" the ", " the given ", 1)
        target.write_text("\n".join(text), encoding="utf-8")
    else:
        folder = "django/utils/vendored" if lines < 1000 else "django/contrib/vendored"
        for path, source in pick(modules, lines, skip=len(modules) // 3 if lines < 1000 else 0):
            destination = repo / folder / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(f"# Vendored from the Python {sys.version_info[0]}.{sys.version_info[1]} "
                                   f"standard library.\n{source}", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{branch}")


def build_repository(workdir: Path) -> Path:
    sdist = download_sdist()
    repo = workdir / sdist.name.removesuffix(".tar.gz")
    marker = repo / ".git" / "benchmark-ready"
    if marker.exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(workdir, filter="data")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", sdist.name)
    modules = standard_library_modules()
    for branch, lines in CHANGES.items():
        commit_change(repo, branch, lines, modules)
    git(repo, "checkout", "-q", "main")
    marker.write_text("", encoding="utf-8")
    return repo


@dataclass
class Samples:
    seconds: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)

    def add(self, seconds: float, peak_mb: float) -> None:
        self.seconds.append(seconds)
        self.peak_mb.append(peak_mb)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")

    @property
    def peak(self) -> float:
        return max(self.peak_mb, default=float("nan"))


def gate_command(output: Path, cache: Path) -> list[str]:
    return [
        sys.executable, "-m", "reviewgate", "run", "--base", "main", "--reviewer", "builtin", "--no-verify",
        "--output-dir", str(output), "--cache-dir", str(cache),
    ]


def measure_change(
    repo: Path, branch: str, gates: list[Path], jscpd: Path | None, runs: int, scratch: Path
) -> dict[str, Samples]:
    git(repo, "checkout", "-q", branch)
    samples: dict[str, Samples] = {}
    for number, gate in enumerate(gates):  # untimed: bytecode written, files in the page cache
        run_measured(gate_command(scratch / "warm-up", scratch / f"warm-up-{number}"), repo, python_environment(gate))
    for round_number in range(runs):
        seconds, peak = run_measured([sys.executable, "-c", FLOOR_SCRIPT], repo, python_environment())
        samples.setdefault("floor", Samples()).add(seconds, peak)
        for number, gate in enumerate(gates):
            env = python_environment(gate)
            cache = scratch / f"cache-{number}-{round_number}"
            shutil.rmtree(cache, ignore_errors=True)
            for state in ("cold", "warm"):
                output = scratch / f"out-{number}-{state}"
                seconds, peak = run_measured(gate_command(output, cache), repo, env)
                samples.setdefault(f"{number}:{state}", Samples()).add(seconds, peak)
        if jscpd is not None:
            seconds, peak = run_measured(jscpd_command(jscpd, scratch / "jscpd"), repo)
            samples.setdefault("jscpd", Samples()).add(seconds, peak)
    git(repo, "checkout", "-q", "main")
    return samples


def added_lines(repo: Path, branch: str) -> int:
    rows = git(repo, "diff", "--numstat", f"main...{branch}").splitlines()
    return sum(int(row.split("\t")[0]) for row in rows if row.split("\t")[0].isdigit())


def ratio(value: float, against: float) -> str:
    return f"{value / against:6.2f}x" if against and against == against else "    n/a"


def report(results: dict[str, dict[str, Samples]], sizes: dict[str, int], gates: list[Path], runs: int) -> None:
    print(f"\nmedian of {runs} alternating runs; Python {sys.version.split()[0]}; {os.cpu_count()} cores")
    for number, gate in enumerate(gates):
        print(f"gate {number}: {gate}")
    print(
        f"\n{'change':<11} {'added':>7} {'gate':>4} {'floor':>7} {'cold':>7} {'warm':>7} {'jscpd':>7} "
        f"{'warm/jscpd':>10} {'warm/floor':>10} {'gate MB':>8} {'jscpd MB':>8}"
    )
    verdicts = []
    for branch, samples in results.items():
        floor = samples["floor"].median
        jscpd = samples.get("jscpd", Samples())
        for number in range(len(gates)):
            cold, warm = samples[f"{number}:cold"], samples[f"{number}:warm"]
            peak = max(cold.peak, warm.peak)
            print(
                f"{branch:<11} {sizes[branch]:>7} {number:>4} {floor:6.3f}s {cold.median:6.2f}s {warm.median:6.2f}s "
                f"{jscpd.median:6.2f}s {ratio(warm.median, jscpd.median):>10} {ratio(warm.median, floor):>10} "
                f"{peak:8.0f} {jscpd.peak:8.0f}"
            )
            if branch in JSCPD_TARGETS and jscpd.seconds:
                met = warm.median / jscpd.median <= JSCPD_TARGETS[branch]
                verdicts.append(f"gate {number} {branch}: warm/jscpd <= {JSCPD_TARGETS[branch]:g}x "
                                f"{'met' if met else 'NOT met'}")
            if branch == "one-line":
                met = warm.median / floor < FLOOR_TARGET
                verdicts.append(f"gate {number} {branch}: warm/floor < {FLOOR_TARGET:g}x {'met' if met else 'NOT met'}")
            verdicts.append(f"gate {number} {branch}: peak < {MEMORY_TARGET_MB:g} MB "
                            f"{'met' if peak < MEMORY_TARGET_MB else 'NOT met'}")
    print()
    print("\n".join(verdicts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="alternating runs of each measurement (default 3)")
    parser.add_argument(
        "--gate-path", type=Path, action="append",
        help="a reviewgate checkout to measure (repeatable; default: the one holding this benchmark)",
    )
    parser.add_argument("--changes", nargs="+", choices=list(CHANGES), default=list(CHANGES),
                        help="which changes to measure (default: all four)")
    parser.add_argument("--no-jscpd", action="store_true", help="leave the jscpd comparison out")
    parser.add_argument("--workdir", type=Path, default=CACHE / "django-bench",
                        help="where the repository is built and kept (default benchmarks/.cache/django-bench)")
    arguments = parser.parse_args()
    if arguments.runs < 1:
        parser.error(f"--runs must be at least 1, got {arguments.runs}")
    gates = [path.resolve() for path in arguments.gate_path or [BENCHMARKS.parent]]
    for gate in gates:
        if not (gate / "reviewgate" / "__main__.py").is_file():
            parser.error(f"--gate-path {gate}: no reviewgate package there")
    repo = build_repository(arguments.workdir)
    jscpd = None if arguments.no_jscpd else ensure_jscpd()
    results: dict[str, dict[str, Samples]] = {}
    sizes = {branch: added_lines(repo, branch) for branch in arguments.changes}
    with tempfile.TemporaryDirectory(prefix="django-bench-") as scratch:
        for branch in arguments.changes:
            print(f"measuring {branch} ({sizes[branch]} added lines) ...", flush=True)
            try:
                results[branch] = measure_change(repo, branch, gates, jscpd, arguments.runs, Path(scratch))
            except CommandFailed as error:
                print(error, file=sys.stderr)
                return 1
    report(results, sizes, gates, arguments.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
