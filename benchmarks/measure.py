"""What the speed benchmarks share: timing a command with its peak memory, jscpd installed on
first use, the environment a measured Python runs in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
CACHE = BENCHMARKS / ".cache"
# The Django release the large-change and renamed-copy figures are measured on: a newer 5.2
# release is other code (another draw of definitions, other copies).
DJANGO_VERSION = "5.2.19"
DJANGO_RELEASE = f"django=={DJANGO_VERSION}"
JSCPD_VERSION = "5.3.2"
# jscpd's mode that ignores identifier and literal values, so renamed copies match too.
JSCPD_RENAMED_FLAGS = ("--ignore-identifiers", "--ignore-literals")
# The words generated and renamed code is named with: plain domain words, as real code reads.
IDENTIFIER_WORDS = (
    "account order invoice cart price total user session token entry batch record payload setting "
    "limit count offset page result value state event message client server stream buffer window "
    "handler worker task plan route ledger item line report queue job"
).split()


def forget_outcomes(cache: Path, reuse: bool = False) -> None:
    """The builtin reviewer's stored outcomes removed from a gate's `--cache-dir` before a timed
    run, unless they are to be reused: the gate keeps the outcome of a change for the same change
    reviewed again (reviewgate/outcome_cache.py), so a second run of the same change would time a
    lookup, not a review (a push of a new commit cannot reuse it). The directory's name is the
    gate's own (`builtin-outcomes`), not imported: a gate path measured may predate it."""
    if not reuse:
        shutil.rmtree(cache / "builtin-outcomes", ignore_errors=True)


def findings_of(output: Path) -> str:
    """A gate run's findings (its report.json) as one canonical text, to compare runs with: a
    speedup must not change them."""
    report = json.loads((output / "report.json").read_text(encoding="utf-8"))
    return json.dumps(sorted(json.dumps(item, sort_keys=True) for item in report.get("findings") or []))


class CommandFailed(Exception):
    """A measured command exited with an error code."""


def python_environment(gate: Path | None = None) -> dict[str, str]:
    """Bytecode cached under benchmarks/.cache/pycache (an installed package has its .pyc files; a
    checkout run with PYTHONDONTWRITEBYTECODE compiles every module on every run), and the
    reviewgate checkout `gate` on PYTHONPATH when given."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    if gate is not None:
        env["PYTHONPATH"] = str(gate)
    return env


def _tree_memory(pid: int) -> int:
    """Bytes a process and its descendants hold now, each page shared between them (forked workers)
    counted once in proportion (PSS; RSS where the system gives no PSS); 0 when psutil is missing
    or the process ended."""
    try:
        import psutil
    except ImportError:
        return 0
    total = 0
    try:
        process = psutil.Process(pid)
        for member in [process, *process.children(recursive=True)]:
            try:
                total += getattr(member.memory_full_info(), "pss", 0) or member.memory_info().rss
            except psutil.AccessDenied:
                total += member.memory_info().rss
    except psutil.Error:
        pass
    return total


def run_measured(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1)
) -> tuple[float, float]:
    """Wall seconds and peak memory in MB of one command (see `run_timed`)."""
    measured = run_timed(command, cwd, env, ok)
    return measured.wall, measured.peak_mb


@dataclass(frozen=True)
class Measured:
    wall: float  # seconds
    cpu: float  # user + system seconds of the command and the processes it waited for
    peak_mb: float
    # Of `cpu`, the kernel's: mostly page faults for a program that allocates much (jscpd holds
    # over 1 GB), several times larger on a machine booted minutes before, which moves the ratios
    # against it.
    system: float


def run_timed(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1),
    *, sample_memory: bool = True,
) -> Measured:
    """Wall and CPU seconds and peak memory in MB of one command. CPU time (the child's rusage,
    which counts the workers it waited for) is the steadier measure on a loaded machine. Peak
    memory is the most its process tree held at once (sampled every 10 ms with psutil, shared
    pages counted once), or the child's own ru_maxrss when that is larger. Sampling costs this
    process several ms of CPU a sample (the kernel walks every page of the tree for its PSS, holding
    up the command's own changes to its memory map): a third to a half of a core on a large tree,
    which slows the command measured. Without `sample_memory` the wall time is the command's alone
    and the peak is ru_maxrss only (the largest single process)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampled = 0
    while True:
        pid, status, usage = os.wait4(process.pid, 0 if not sample_memory else os.WNOHANG)
        if pid:
            break
        sampled = max(sampled, _tree_memory(process.pid))
        time.sleep(0.01)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode not in ok:
        raise CommandFailed(f"{' '.join(command[:4])} exited {process.returncode} in {cwd}:\n{error[-2000:]}")
    return Measured(elapsed, usage.ru_utime + usage.ru_stime, max(sampled / 2**20, usage.ru_maxrss / 1024),
                    usage.ru_stime)


def ensure_jscpd() -> Path | None:
    """jscpd at JSCPD_VERSION, installed on first use into benchmarks/.cache/ (npm, into a temporary
    prefix moved in place once complete); None without npm."""
    prefix = CACHE / f"jscpd-{JSCPD_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "jscpd"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: the jscpd comparison is left out")
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jscpd-install-", dir=CACHE) as temporary:
        subprocess.run(
            [npm, "install", "--prefix", temporary, "--no-audit", "--no-fund", f"jscpd@{JSCPD_VERSION}"],
            check=True,
            capture_output=True,
        )
        shutil.rmtree(prefix, ignore_errors=True)
        shutil.move(temporary, prefix)
        Path(temporary).mkdir()  # the context manager removes it again
    return binary if binary.exists() else None


def jscpd_command(jscpd: Path, output: Path, *flags: str) -> list[str]:
    """jscpd over the current directory, its JSON report in `output`, the git directory left out."""
    return [str(jscpd), *flags, "--silent", "--reporters", "json", "--output", str(output), "--ignore", "**/.git/**", "."]
