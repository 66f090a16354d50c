"""The gate on a real, large repository: the Django 5.2 source distribution. One command:

    nice -n 5 python benchmarks/django_benchmark.py            # 3 alternating runs of each case
    nice -n 5 python benchmarks/django_benchmark.py --gate-path /work/main --gate-path .   # two gates side by side

It downloads the Django 5.2 sdist with `pip download --no-binary :all: --no-deps 'django==5.2.19'`
(once, under benchmarks/.cache/, gitignored), unpacks it into a git repository whose `main` is the
release, and commits eight changes on branches of their own, of three shapes:

- `one-line`: one docstring line of django/utils/text.py reworded;
- `lines-200`, `lines-20k`, `lines-100k`: that many added lines of real code in new files, modules
  of the running Python's standard library (tests and lib2to3 left out) vendored under
  django/utils/ or django/contrib/vendored/ with a header line each. The choice is deterministic
  for one Python version (it is printed);
- `appended-100k`, `appended-300k`: that many lines of generated functions (the statements of
  builtin_benchmark.py, seeded by path) appended to 450 existing modules of django/ (every
  `__init__`, migration and test module left out, spread in path order): large changes to files
  the repository already has, each file read, diffed and parsed with its old lines too;
- `new-modules-100k`, `new-modules-300k`: the same generated functions (same seeds) in 450 new
  modules of a new package, django/generated/, named after the modules they would be appended to:
  the other shape of a large branch, every file new.

For each change it measures, alternating and in the same run: the floor (Python start-up, `git diff`
of the change and reading every changed file, in one process), each gate (`reviewgate run
--reviewer builtin --no-verify` as a subprocess, with PYTHONPATH the gate's checkout) cold (an
empty --cache-dir) and warm (the same --cache-dir again), and jscpd 5.3.2 over the whole
repository (bytecode is cached under benchmarks/.cache/pycache, as an installed package has it).
Cold is what a CI run without a restored cache gets; warm is a second push of the same change
reviewed again with the caches the first left (the DRY pack, the chunks), but with the builtin
reviewer's stored outcome of that change removed first: a push of a new commit cannot reuse it, so
a warm run that reused it would time a lookup, not a review. `--reuse-outcomes` keeps it (what a
re-run of a CI job on the same commits gets).
It prints the medians of CPU time (user + system of the process and the workers it waited for:
on a loaded machine far steadier than wall time, which is printed beside it) with ratios against
jscpd and the floor, and the peak memory (the most the process tree held at once, sampled,
shared pages counted once; or ru_maxrss when larger), taken in the untimed first run of each: the
sampler takes a third to a half of a core and slows the command it samples (jscpd, whose heap its
reads hold up, more than the gate), so the timed runs are not sampled. The system part of the warm gate's and
jscpd's CPU is printed too: jscpd holds over 1 GB, and on a machine booted minutes before, its page
faults cost several times what they cost later (its CPU 6.2 s then, 4.2 s 20 minutes on, the
gate's the same), which moves every ratio against it; jscpd gets an untimed run first, as each gate
does. With `--jscpd-renamed`, jscpd also runs with `--ignore-identifiers --ignore-literals`, the
mode in which it finds what the DRY lens finds (copies under new names and literals; by default it
finds only copies token for token), and a second table gives the warm gate against it. Every gate
run's findings (report.json) are
compared with the first gate's first cold run of the same change: a speedup must not change them,
and a difference is printed and makes the command exit 1. Targets: the one-line change warm at most
0.1x jscpd, at most 4x the floor and at most 0.18 s of CPU; +20k at most 0.5x jscpd; +100k (both
shapes) at most 1x jscpd; +300k (both) at most 1.5x jscpd; peak memory at most 400 MB. The jscpd targets
are in wall time (medians of the warm gate and of jscpd, each free to use every core; the CPU
ratio is printed beside each verdict) and against jscpd's default mode. On a shared machine run
it under `nice` and print `uptime` before and after: wall ratios move with the load.

With `--interleaved N` the command measures instead N pairs of runs per gate and change: each
gate's warm run beside a jscpd run, gate by gate, round by round (gate 0, jscpd, gate 1,
jscpd, ...; odd rounds the mirror: jscpd, gate 1, jscpd, gate 0), after an untimed first run of each (its peak memory sampled, its cache the warm runs'
cache). It prints each pair's wall and CPU and its wall ratio, then per gate the median ratio, the
lowest and highest, the medians of wall and CPU, the median of the pairs' CPU ratios (steadier
than any wall ratio where the load changes within seconds), and the load average before and after
the pairs.
jscpd's wall drifts with the host by about ±10% within minutes, and so do ratios of medians taken
minutes apart; a pair's two runs see nearly the same host, so the spread of the pairs' ratios shows
how far their median can be trusted. The target verdict reads the median ratio (and says whether
the highest one meets it too):

    python benchmarks/django_benchmark.py --interleaved 5 --changes appended-300k
    python benchmarks/django_benchmark.py --interleaved 3 --gate-path OLD --gate-path NEW --changes appended-300k
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))

from benchmarks.interleaved_runs import (  # noqa: E402
    interleave,
    load_average,
    pair_lines,
    summarise,
    summary_lines,
)
from benchmarks.measure import (  # noqa: E402
    CACHE,
    DJANGO_RELEASE,
    DJANGO_VERSION,
    JSCPD_RENAMED_FLAGS,
    CommandFailed,
    Measured,
    ensure_jscpd,
    findings_of,
    forget_outcomes,
    jscpd_command,
    python_environment,
    run_timed,
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
CHANGES = {
    "one-line": 1, "lines-200": 200, "lines-20k": 20_000, "lines-100k": 100_000,
    "appended-100k": 100_000, "appended-300k": 300_000,
    "new-modules-100k": 100_000, "new-modules-300k": 300_000,
}
APPENDED_PREFIX = "appended-"
NEW_MODULES_PREFIX = "new-modules-"
APPENDED_MODULES = 450
# Target ratios against jscpd (warm gate, wall time: what a CI job waits, both using the runner's
# cores), by change; the one-line change against the floor and in seconds (CPU).
JSCPD_TARGETS = {
    "one-line": 0.1, "lines-20k": 0.5, "lines-100k": 1.0, "appended-100k": 1.0, "appended-300k": 1.5,
    "new-modules-100k": 1.0, "new-modules-300k": 1.5,
}
FLOOR_TARGET = 4.0
ONE_LINE_TARGET_SECONDS = 0.18
MEMORY_TARGET_MB = 400.0
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
    found = sorted(folder.glob(f"django-{DJANGO_VERSION}.tar.gz"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
             DJANGO_RELEASE, "--dest", str(folder)],
            check=True,
            capture_output=True,
        )
        found = sorted(folder.glob(f"django-{DJANGO_VERSION}.tar.gz"))
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


def appended_targets(repo: Path) -> list[Path]:
    """APPENDED_MODULES existing modules of django/, spread evenly over them in path order."""
    modules = sorted(
        path for path in (repo / "django").rglob("*.py")
        if path.name != "__init__.py" and not {"migrations", "tests", "test"} & set(path.relative_to(repo).parts)
    )
    step = len(modules) / APPENDED_MODULES
    return [modules[int(number * step)] for number in range(min(APPENDED_MODULES, len(modules)))]


def add_generated(repo: Path, lines: int, *, new_modules: bool) -> None:
    """About `lines` lines of generated functions, seeded by path: appended to existing modules, or
    each module's share written to a new module of django/generated/ named after it."""
    from benchmarks.builtin_benchmark import PYTHON, source_file  # only when the branch is built

    targets = appended_targets(repo)
    body = replace(PYTHON, header=lambda _package: [])
    for target in targets:
        relative = target.relative_to(repo).as_posix()
        generated = source_file(random.Random(f"{relative}:{lines}"), lines // len(targets), body)
        if new_modules:
            destination = repo / "django" / "generated" / relative.removeprefix("django/")
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(f"# Generated helpers.\n{generated}", encoding="utf-8")
        else:
            with target.open("a", encoding="utf-8") as handle:
                handle.write(f"\n\n# Generated helpers.\n{generated}")


def commit_change(repo: Path, branch: str, lines: int, modules: list[tuple[str, str]]) -> None:
    git(repo, "checkout", "-q", "-B", branch, "main")
    if branch.startswith((APPENDED_PREFIX, NEW_MODULES_PREFIX)):
        add_generated(repo, lines, new_modules=branch.startswith(NEW_MODULES_PREFIX))
    elif lines == 1:
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
    if not marker.exists():
        shutil.rmtree(repo, ignore_errors=True)
        workdir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as archive:
            archive.extractall(workdir, filter="data")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", sdist.name)
    existing = set(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split())
    missing = [branch for branch in CHANGES if branch not in existing]  # a repository built by an older version
    if not missing:
        return repo
    modules = standard_library_modules()
    for branch in missing:
        commit_change(repo, branch, CHANGES[branch], modules)
    git(repo, "checkout", "-q", "main")
    marker.write_text("", encoding="utf-8")
    return repo


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Samples:
    seconds: list[float] = field(default_factory=list)  # CPU
    wall: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    system: list[float] = field(default_factory=list)  # of `seconds`, the kernel's

    def add(self, measured: Measured) -> None:
        self.seconds.append(measured.cpu)
        self.wall.append(measured.wall)
        self.peak_mb.append(measured.peak_mb)
        self.system.append(measured.system)

    @property
    def median(self) -> float:
        """The median CPU time."""
        return _median(self.seconds)

    @property
    def wall_median(self) -> float:
        return _median(self.wall)

    @property
    def system_median(self) -> float:
        return _median(self.system)

    @property
    def peak(self) -> float:
        return max(self.peak_mb, default=float("nan"))


def gate_command(output: Path, cache: Path) -> list[str]:
    return [
        sys.executable, "-m", "reviewgate", "run", "--base", "main", "--reviewer", "builtin", "--no-verify",
        "--output-dir", str(output), "--cache-dir", str(cache),
    ]


def measure_change(
    repo: Path, branch: str, gates: list[Path], jscpd: Path | None, runs: int, scratch: Path, renamed: bool = False,
    reuse: bool = False,
) -> tuple[dict[str, Samples], list[str]]:
    """The samples of the floor, each gate cold and warm, and jscpd (`jscpd`, and `renamed` in
    the mode that finds renamed copies when asked), and the gate runs whose findings differ from
    the first gate's first cold run."""
    modes = {"jscpd": (), **({"renamed": JSCPD_RENAMED_FLAGS} if renamed else {})}
    git(repo, "checkout", "-q", branch)
    samples: dict[str, Samples] = {}
    expected: str | None = None
    differing: list[str] = []
    # Untimed: bytecode written, files in the page cache. Peak memory is sampled in these runs
    # alone: the sampler takes half a core from the command it samples (measure.run_timed), so
    # the timed runs below are not sampled.
    for number, gate in enumerate(gates):
        samples.setdefault(f"{number}:memory", Samples()).add(
            run_timed(gate_command(scratch / "warm-up", scratch / f"warm-up-{number}"), repo, python_environment(gate)))
    if jscpd is not None:  # untimed too, as the gates: its program and the files read once
        for mode, flags in modes.items():
            samples.setdefault(f"{mode}:memory", Samples()).add(
                run_timed(jscpd_command(jscpd, scratch / "jscpd", *flags), repo))
    for round_number in range(runs):
        measured = run_timed([sys.executable, "-c", FLOOR_SCRIPT], repo, python_environment(), sample_memory=False)
        samples.setdefault("floor", Samples()).add(measured)
        for number, gate in enumerate(gates):
            env = python_environment(gate)
            cache = scratch / f"cache-{number}-{round_number}"
            shutil.rmtree(cache, ignore_errors=True)
            for state in ("cold", "warm"):
                output = scratch / f"out-{number}-{state}"
                if state == "warm":
                    forget_outcomes(cache, reuse)
                samples.setdefault(f"{number}:{state}", Samples()).add(
                    run_timed(gate_command(output, cache), repo, env, sample_memory=False))
                found = findings_of(output)
                expected = found if expected is None else expected
                if found != expected:
                    differing.append(f"{branch}: gate {number} {state}, run {round_number + 1}")
        if jscpd is not None:
            for mode, flags in modes.items():
                samples.setdefault(mode, Samples()).add(
                    run_timed(jscpd_command(jscpd, scratch / "jscpd", *flags), repo, sample_memory=False))
    git(repo, "checkout", "-q", "main")
    return samples, differing


def measure_interleaved(
    repo: Path, branch: str, gates: list[Path], jscpd: Path, pairs: int, scratch: Path, reuse: bool = False
) -> tuple[list[str], list[str]]:
    """`pairs` rounds of (gate 0 warm, jscpd, gate 1 warm, jscpd, ...): the rows of each pair and of
    each gate's summary, and the gate runs whose findings differ from gate 0's first run. Each gate
    gets an untimed first run into a cache of its own (its peak memory sampled there); every timed
    run is warm in that cache."""
    git(repo, "checkout", "-q", branch)
    peaks, runs, expected, differing = [], [], None, []
    for number, gate in enumerate(gates):
        cache, output = scratch / f"interleaved-cache-{number}", scratch / f"interleaved-out-{number}"
        shutil.rmtree(cache, ignore_errors=True)
        command, env = gate_command(output, cache), python_environment(gate)
        peaks.append(run_timed(command, repo, env).peak_mb)
        expected = findings_of(output) if expected is None else expected

        def timed(number: int = number, command: list[str] = command, env: dict[str, str] = env,
                  output: Path = output, expected: str | None = expected, cache: Path = cache) -> Measured:
            forget_outcomes(cache, reuse)
            measured = run_timed(command, repo, env, sample_memory=False)
            if findings_of(output) != expected:
                differing.append(f"{branch}: gate {number}, an interleaved run")
            return measured

        runs.append(timed)
    jscpd_run = jscpd_command(jscpd, scratch / "jscpd")
    run_timed(jscpd_run, repo, sample_memory=False)  # untimed, as each gate's first run
    load_before = load_average()
    measured = interleave(runs, lambda: run_timed(jscpd_run, repo, sample_memory=False), pairs)
    git(repo, "checkout", "-q", "main")
    summaries = [summarise(measured, number) for number in range(len(gates))]
    lines = [f"{branch}: load average {load_before} before the pairs, {load_average()} after",
             *pair_lines(branch, measured), "",
             *summary_lines(branch, summaries, peaks, JSCPD_TARGETS.get(branch)), ""]
    return lines, differing


def added_lines(repo: Path, branch: str) -> int:
    rows = git(repo, "diff", "--numstat", f"main...{branch}").splitlines()
    return sum(int(row.split("\t")[0]) for row in rows if row.split("\t")[0].isdigit())


def ratio(value: float, against: float) -> str:
    return f"{value / against:6.2f}x" if against and against == against else "    n/a"


def report(results: dict[str, dict[str, Samples]], sizes: dict[str, int], gates: list[Path], runs: int) -> None:
    print(f"\nmedian of {runs} alternating runs, CPU seconds (warm wall seconds beside them); "
          f"Python {sys.version.split()[0]}; {os.cpu_count()} cores")
    for number, gate in enumerate(gates):
        print(f"gate {number}: {gate}")
    print(
        f"\n{'change':<13} {'added':>7} {'gate':>4} {'floor':>7} {'cold':>7} {'warm':>7} {'jscpd':>7} "
        f"{'cold/warm':>9} {'warm/jscpd':>10} {'warm/floor':>10} {'warm wall':>9} {'jscpd wall':>10} {'wall/jscpd':>10} "
        f"{'gate MB':>8} {'jscpd MB':>8} {'warm sys':>8} {'jscpd sys':>9}"
    )
    verdicts = []
    for branch, samples in results.items():
        floor = samples["floor"].median
        jscpd = samples.get("jscpd", Samples())
        jscpd_peak = max(samples.get("jscpd:memory", Samples()).peak, jscpd.peak)
        for number in range(len(gates)):
            cold, warm = samples[f"{number}:cold"], samples[f"{number}:warm"]
            peak = max(samples[f"{number}:memory"].peak, cold.peak, warm.peak)
            print(
                f"{branch:<13} {sizes[branch]:>7} {number:>4} {floor:6.3f}s {cold.median:6.2f}s {warm.median:6.2f}s "
                f"{jscpd.median:6.2f}s {ratio(cold.median, warm.median):>9} {ratio(warm.median, jscpd.median):>10} "
                f"{ratio(warm.median, floor):>10} {warm.wall_median:8.2f}s {jscpd.wall_median:9.2f}s "
                f"{ratio(warm.wall_median, jscpd.wall_median):>10} {peak:8.0f} {jscpd_peak:8.0f} "
                f"{warm.system_median:7.2f}s {jscpd.system_median:8.2f}s"
            )
            if branch in JSCPD_TARGETS and jscpd.seconds:
                met = warm.wall_median / jscpd.wall_median <= JSCPD_TARGETS[branch]
                verdicts.append(f"gate {number} {branch}: warm wall/jscpd wall <= {JSCPD_TARGETS[branch]:g}x "
                                f"{'met' if met else 'NOT met'} (CPU {warm.median / jscpd.median:.2f}x)")
            if branch == "one-line":
                met = warm.median / floor <= FLOOR_TARGET
                verdicts.append(f"gate {number} {branch}: warm/floor <= {FLOOR_TARGET:g}x {'met' if met else 'NOT met'}")
                met = warm.median <= ONE_LINE_TARGET_SECONDS
                verdicts.append(f"gate {number} {branch}: warm <= {ONE_LINE_TARGET_SECONDS:g} s "
                                f"{'met' if met else 'NOT met'}")
            verdicts.append(f"gate {number} {branch}: peak <= {MEMORY_TARGET_MB:g} MB "
                            f"{'met' if peak <= MEMORY_TARGET_MB else 'NOT met'}")
    if any("renamed" in samples for samples in results.values()):
        print(f"\nagainst jscpd {' '.join(JSCPD_RENAMED_FLAGS)} (renamed copies, as the DRY lens finds them)")
        print(f"{'change':<13} {'gate':>4} {'warm':>7} {'renamed':>8} {'warm/renamed':>12} {'renamed MB':>10} {'renamed sys':>11}")
        for branch, samples in results.items():
            renamed = samples.get("renamed", Samples())
            for number in range(len(gates)):
                warm = samples[f"{number}:warm"]
                renamed_peak = max(samples.get("renamed:memory", Samples()).peak, renamed.peak)
                print(f"{branch:<13} {number:>4} {warm.median:6.2f}s {renamed.median:7.2f}s "
                      f"{ratio(warm.median, renamed.median):>12} {renamed_peak:10.0f} {renamed.system_median:10.2f}s")
    print()
    print("\n".join(verdicts))


def add_gate_options(parser: argparse.ArgumentParser) -> None:
    """`--runs` and `--gate-path`, as every benchmark that measures gates side by side takes them."""
    parser.add_argument("--runs", type=int, default=3, help="alternating runs of each measurement (default 3)")
    parser.add_argument(
        "--gate-path", type=Path, action="append",
        help="a reviewgate checkout to measure (repeatable; default: the one holding this benchmark)",
    )


def checked_gates(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> list[Path]:
    """The checkouts `--gate-path` names (this one by default), each checked to hold reviewgate;
    a `--runs` under 1 or a folder without the package exits 2 naming the option."""
    if arguments.runs < 1:
        parser.error(f"--runs must be at least 1, got {arguments.runs}")
    gates: list[Path] = [path.resolve() for path in arguments.gate_path or [BENCHMARKS.parent]]
    for gate in gates:
        if not (gate / "reviewgate" / "__main__.py").is_file():
            parser.error(f"--gate-path {gate}: no reviewgate package there")
    return gates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_gate_options(parser)
    parser.add_argument("--changes", nargs="+", choices=list(CHANGES), default=list(CHANGES),
                        help="which changes to measure (default: all six)")
    parser.add_argument("--no-jscpd", action="store_true", help="leave the jscpd comparison out")
    parser.add_argument("--jscpd-renamed", action="store_true",
                        help="also run jscpd with --ignore-identifiers --ignore-literals (it finds renamed copies "
                             "then, as the DRY lens does; 2.6 GB and about 15 s of CPU at +300k)")
    parser.add_argument("--interleaved", type=int, metavar="PAIRS",
                        help="instead of the alternating runs: PAIRS rounds of each gate's warm run, each followed "
                             "by a jscpd run, with each pair's wall ratio, their median and range")
    parser.add_argument("--workdir", type=Path, default=CACHE / "django-bench",
                        help="where the repository is built and kept (default benchmarks/.cache/django-bench)")
    parser.add_argument("--reuse-outcomes", action="store_true",
                        help="let a warm run reuse the builtin reviewer's stored outcome of the same change (a CI "
                             "job re-run); by default it is removed before each timed warm run, so a warm run reviews")
    arguments = parser.parse_args()
    if arguments.no_jscpd and arguments.jscpd_renamed:
        parser.error("--jscpd-renamed needs the jscpd comparison: drop --no-jscpd")
    if arguments.interleaved is not None and (arguments.interleaved < 1 or arguments.no_jscpd):
        parser.error("--interleaved needs at least 1 pair and the jscpd comparison")
    if arguments.interleaved is not None and arguments.jscpd_renamed:
        parser.error("--interleaved pairs each gate with jscpd's default mode: drop --jscpd-renamed")
    gates = checked_gates(parser, arguments)
    if arguments.interleaved is not None:
        return interleaved_main(gates, arguments.changes, arguments.interleaved, arguments.workdir,
                                arguments.reuse_outcomes)
    repo = build_repository(arguments.workdir)
    jscpd = None if arguments.no_jscpd else ensure_jscpd()
    results: dict[str, dict[str, Samples]] = {}
    differing: list[str] = []
    sizes = {branch: added_lines(repo, branch) for branch in arguments.changes}
    with tempfile.TemporaryDirectory(prefix="django-bench-") as scratch:
        for branch in arguments.changes:
            print(f"measuring {branch} ({sizes[branch]} added lines) ...", flush=True)
            try:
                results[branch], found_differing = measure_change(
                    repo, branch, gates, jscpd, arguments.runs, Path(scratch), arguments.jscpd_renamed,
                    arguments.reuse_outcomes,
                )
                differing += found_differing
            except CommandFailed as error:
                print(error, file=sys.stderr)
                return 1
    report(results, sizes, gates, arguments.runs)
    if differing:
        print("findings differ from gate 0's first cold run of the change in: " + "; ".join(differing))
        return 1
    print("findings: the same in every run of every gate, cold and warm, change by change")
    return 0


def interleaved_main(gates: list[Path], changes: list[str], pairs: int, workdir: Path, reuse: bool = False) -> int:
    """`--interleaved`: each change's pairs and summary printed as the change ends."""
    repo = build_repository(workdir)
    jscpd = ensure_jscpd()
    if jscpd is None:
        return 1
    differing: list[str] = []
    print(f"{pairs} interleaved pairs per gate and change, wall ratios gate/jscpd; Python "
          f"{sys.version.split()[0]}; {os.cpu_count()} cores")
    for number, gate in enumerate(gates):
        print(f"gate {number}: {gate}")
    with tempfile.TemporaryDirectory(prefix="django-bench-") as scratch:
        for branch in changes:
            print(f"\nmeasuring {branch} ({added_lines(repo, branch)} added lines) ...", flush=True)
            try:
                lines, found_differing = measure_interleaved(repo, branch, gates, jscpd, pairs, Path(scratch), reuse)
            except CommandFailed as error:
                print(error, file=sys.stderr)
                return 1
            print("\n".join(lines), flush=True)
            differing += found_differing
    if differing:
        print("findings differ from gate 0's first run of the change in: " + "; ".join(differing))
        return 1
    print("findings: the same in every run of every gate, change by change")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
