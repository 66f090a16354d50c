"""Attacks a branch can make on the gate through its verify manifest and its app, each built as
the attacker would: a committed shared library in the manifest's env, a process that never keeps
its pid, a JUnit path that is a FIFO, a step directory that is a link out of the tree.

Most need root (the verify then runs the app as a dedicated uid, as in the container action)."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from reviewgate.ci.context import CiContext
from reviewgate.verify.manifest import DEFAULT_TIMEOUTS, Manifest, StartStep, Step
from reviewgate.verify.outcome import VerifyOutcome
from reviewgate.verify.runner import run_verify
from testing.cli import run_cli
from testing.repo import make_repo, write_files

pytestmark = pytest.mark.timeout(120)
_needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the verify then runs as a separate uid")
Test = TypeVar("Test", bound=Callable[..., None])


def as_root(test: Test) -> Test:
    """What such a test proves is the kernel's (a dedicated uid, its processes, a full disk), the
    same on every Python: CI's 3.10 pass leaves it out."""
    return pytest.mark.interpreter_independent(_needs_root(test))  # type: ignore[no-any-return]
ENVIRONMENT = {"PATH": "/usr/bin:/bin"}

# Loaded into every program started with it: notes its euid, and whether it could read the
# gate's /proc/<pid>/environ (where the job's token is).
_HIJACK = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void hijack(void) {
    char line[256];
    int gate = open("/proc/" GATE_PID "/environ", O_RDONLY);
    snprintf(line, sizeof line, "euid=%d gate-environ=%s\n", (int)geteuid(), gate >= 0 ? "read" : "refused");
    int marker = open(MARKER, O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (marker >= 0) { write(marker, line, strlen(line)); close(marker); }
}
"""


def world_writable_directory() -> Path:
    """A directory the verify's uid can write its findings to."""
    directory = Path(tempfile.mkdtemp(prefix="reviewgate-attack-"))
    os.chmod(directory, 0o777)
    return directory


def build_hijack_library(directory: Path, marker: Path, gate_pid: int) -> bytes:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc to build the attacker's shared library")
    source, library = directory / "k.c", directory / "k.so"
    source.write_text(_HIJACK)
    subprocess.run(["gcc", "-shared", "-fPIC", f'-DMARKER="{marker}"', f'-DGATE_PID="{gate_pid}"',
                    "-o", str(library), str(source)], check=True)
    marker.touch()
    os.chmod(marker, 0o666)
    return library.read_bytes()


def run_manifest(repo: Path, manifest: Manifest, tmp_path: Path,
                 environ: dict[str, str] | None = None) -> tuple[VerifyOutcome, str]:
    stdout = io.StringIO()
    outcome = run_verify(manifest, repo=repo, output_dir=tmp_path / "out", ci=CiContext(provider="local"),
                         stdout=stdout, environ=ENVIRONMENT if environ is None else environ)
    return outcome, stdout.getvalue()


def step(name: str, run: str, **options: object) -> Step:
    return Step(name=name, run=run, timeout=DEFAULT_TIMEOUTS.get(name, 60.0), **options)  # type: ignore[arg-type]


@as_root
def test_a_manifest_env_that_preloads_a_committed_library_is_refused_before_anything_runs(tmp_path: Path) -> None:
    world = world_writable_directory()
    marker = world / "marker"
    # The gate is the CLI's process, not known here: any pid the library could read as root will do.
    library = build_hijack_library(world, marker, 1)
    manifest = '[test]\nrun = "true"\n[test.env]\nLD_PRELOAD = "./k.so"\n'
    branch = make_repo(tmp_path, {"app.py": "x = 1\n"}, {".prepcook/scripts.toml": manifest, "k.so": library})
    result = run_cli(branch.path, "verify")
    assert result.returncode == 2, result.stdout + result.stderr
    assert ".prepcook/scripts.toml: test.env.LD_PRELOAD" in result.stderr
    assert "inside the step's `run`" in result.stderr
    assert marker.read_text() == "", "the branch's library ran"


@pytest.mark.parametrize("name", ["LD_AUDIT", "GCONV_PATH", "BASH_ENV", "PYTHONSTARTUP", "MALLOC_TRACE", "GLIBC_TUNABLES"])
def test_every_loader_variable_in_a_manifest_env_is_a_config_error(tmp_path: Path, name: str) -> None:
    manifest = f'[env]\n{name} = "./x"\n[test]\nrun = "true"\n'
    branch = make_repo(tmp_path, {"app.py": "x = 1\n"}, {".prepcook/scripts.toml": manifest})
    result = run_cli(branch.path, "verify")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f".prepcook/scripts.toml: env.{name}" in result.stderr and len(result.stderr.strip().splitlines()) == 1


@as_root
def test_the_step_environment_reaches_no_launcher_running_as_root(tmp_path: Path) -> None:
    """The manifest check aside: whatever the step's environment holds is applied only after the
    uid switch, for foreground steps and the start step's keep-alive init alike."""
    world = world_writable_directory()
    marker = world / "marker"
    library = build_hijack_library(world, marker, os.getpid())
    repo = tmp_path / "repo"
    write_files(repo, {"app.py": "x = 1\n"})
    (repo / "k.so").write_bytes(library)
    preload = {"LD_PRELOAD": str(world / "k.so"), "PYTHONPATH": str(world)}
    (world / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('python as %d\\n' % __import__('os').geteuid())\n")
    manifest = Manifest(
        source=".prepcook/scripts.toml",
        env=preload,
        start=StartStep(run="sleep 30", env=preload, grace=1.0),
        test=step("test", "true", env=preload),
    )
    outcome, log = run_manifest(repo, manifest, tmp_path)
    assert outcome.status.value == "passed", log
    lines = marker.read_text().splitlines()
    assert lines, "the step's own shell got no LD_PRELOAD: the environment must still reach the step"
    assert not [line for line in lines if "euid=0" in line or "as 0" in line], lines
    assert not [line for line in lines if "gate-environ=read" in line], lines


# Leaves its process group and its tree, clears its environment (so no run cookie), then forks
# and lets its parent exit every few milliseconds: never the pid a list of processes names. All
# the while it tries the checkout's .git/config and keeps what it read.
_HOPPER = r"""
import os, sys, time
loot, config = sys.argv[1], sys.argv[2]
if os.fork():
    sys.exit(0)
os.setsid()
hop = '''
import os, sys, time
loot, config = sys.argv[1], sys.argv[2]
end = time.monotonic() + 40
while time.monotonic() < end:
    try:
        with open(config) as source, open(loot, "a") as kept:
            kept.write(source.read())
    except OSError:
        pass
    time.sleep(0.003)
    if os.fork():
        os._exit(0)
'''
os.execve(sys.executable, [sys.executable, "-c", hop, loot, config], {})
"""
TOKEN = "forge-token-value-7f3a9c"


@pytest.fixture
def without_pid_namespaces(monkeypatch: pytest.MonkeyPatch) -> object:
    """The boundary a root gate gets where `unshare` is missing or refused (a container without
    CAP_SYS_ADMIN): a separate uid, no pid namespace."""
    from reviewgate.verify import principal

    monkeypatch.setattr(principal, "_unshare", lambda: None)
    principal._boundary_for.cache_clear()
    yield
    principal._boundary_for.cache_clear()


def verify_uid(outcome: VerifyOutcome) -> int:
    return int(outcome.boundary.split("(uid ", 1)[1].split(")", 1)[0])


@as_root
def test_a_process_that_keeps_changing_its_pid_does_not_outlive_teardown(
    tmp_path: Path, without_pid_namespaces: object
) -> None:
    from reviewgate.verify.sweep import empty_uid, processes_of
    from testing.repo import git
    from testing.verify_app import PYTHON

    world = world_writable_directory()  # the checkout where the verify's uid could reach it
    loot = world / "loot"
    branch = make_repo(world, {"app.py": "x = 1\n"}, {"hop.py": _HOPPER})
    git(branch.path, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    manifest = Manifest(source=".prepcook/scripts.toml", test=step(
        "test", f"{PYTHON} hop.py {loot} {branch.path}/.git/config; sleep 1"))
    outcome, log = run_manifest(branch.path, manifest, tmp_path)
    uid = verify_uid(outcome)
    try:
        assert "own pid namespace" not in outcome.boundary
        left = [process.pid for process in processes_of(uid)]
        time.sleep(1)  # a survivor would read the config now that .git has its mode back
        assert not left and not processes_of(uid), left
        assert outcome.status.value == "passed", (outcome.reason, log)
        assert TOKEN not in (loot.read_text() if loot.exists() else "")
        assert stat.S_IMODE((branch.path / ".git").stat().st_mode) & 0o005, ".git's mode came back"
    finally:
        empty_uid(uid)


def test_git_stays_closed_to_others_while_a_process_of_the_verify_uid_is_left(tmp_path: Path) -> None:
    from reviewgate.verify.principal import _closed_to_others

    store = tmp_path / ".git"
    store.mkdir(mode=0o755)
    os.chmod(store, 0o755)
    with _closed_to_others(store, True, lambda: False):
        assert stat.S_IMODE(store.stat().st_mode) == 0o750
    assert stat.S_IMODE(store.stat().st_mode) == 0o750, "reopened while the verify's uid still ran"
    os.chmod(store, 0o755)
    with _closed_to_others(store, True, lambda: True):
        pass
    assert stat.S_IMODE(store.stat().st_mode) == 0o755


@pytest.mark.parametrize(("made", "said"), [
    ("mkfifo results.xml", "results.xml is not a regular file"),
    ("ln -s /etc/passwd results.xml", "results.xml is a link"),
    ("printf '<testsuite/>' > real.xml; ln -s real.xml results.xml", "results.xml is a link"),
    ("truncate -s 17M results.xml", "results.xml is 17825792 bytes, over the 16777216 bytes read back"),
])
@pytest.mark.timeout(60)
def test_a_junit_path_that_is_not_a_small_regular_file_is_not_read(tmp_path: Path, made: str, said: str) -> None:
    repo = tmp_path / "repo"
    write_files(repo, {"app.py": "x = 1\n"})
    manifest = Manifest(source=".prepcook/scripts.toml", test=step("test", made, junit="results.xml"))
    started = time.monotonic()
    outcome, log = run_manifest(repo, manifest, tmp_path)
    assert outcome.status.value == "passed", (outcome.reason, log)
    assert [note for note in outcome.notes if said in note and "not imported" in note], outcome.notes
    assert outcome.imported_tests == ()
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("where", ["test", "ready"])
def test_a_step_directory_that_is_a_link_out_of_the_tree_runs_nothing_there(tmp_path: Path, where: str) -> None:
    from reviewgate.verify.manifest import ReadyCheck

    world = world_writable_directory()
    marker = world / "ran-in"
    repo = tmp_path / "repo"
    write_files(repo, {"app.py": "x = 1\n"})
    (repo / "outside").symlink_to(world)
    command = f"pwd -P > {marker}"
    manifest = Manifest(
        source=".prepcook/scripts.toml",
        ready=ReadyCheck(run=command, cwd="outside", timeout=3) if where == "ready" else None,
        test=step("test", command, cwd="outside") if where == "test" else step("test", "true"))
    outcome, log = run_manifest(repo, manifest, tmp_path)
    assert outcome.status.value == "failed", log
    assert "leads outside the verify's tree" in outcome.findings[0].body, outcome.findings[0].body
    assert not marker.exists(), marker.read_text()


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 16 MiB tmpfs: a disk the app can fill."""
    mount = Path(tempfile.mkdtemp(prefix="reviewgate-small-disk-"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs", str(mount)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        mount.rmdir()


@as_root
def test_a_full_disk_during_the_verify_blocks_with_the_reason_and_the_outputs(small_disk: Path) -> None:
    temp = small_disk / "tmp"
    temp.mkdir(mode=0o1777)
    os.chmod(temp, 0o1777)
    manifest = '[test]\nrun = "head -c 40000000 /dev/zero > filler; seq 1 200000"\ntimeout = 60\n'
    branch = make_repo(small_disk, {"app.py": "x = 1\n"}, {".prepcook/scripts.toml": manifest})
    started = time.monotonic()
    result = run_cli(branch.path, "verify", env={"TMPDIR": str(temp)})
    assert result.returncode == 3, result.stdout + result.stderr
    assert time.monotonic() - started < 50, "the step hung on a log nobody read"
    report = result.report()
    assert report["verify"]["status"] == "blocked"
    assert "no space left on device" in report["verify"]["reason"], report["verify"]["reason"]
    assert "internal error" not in result.stderr


@as_root
def test_a_disk_too_full_for_the_verify_s_copy_blocks_with_the_reason(small_disk: Path) -> None:
    temp = small_disk / "tmp"
    temp.mkdir()
    branch = make_repo(small_disk, {"app.py": "x = 1\n"}, {".prepcook/scripts.toml": '[test]\nrun = "true"\n'})
    (branch.path / "dependencies.bin").write_bytes(b"\0" * 9 * 1024 * 1024)  # an earlier CI step's
    result = run_cli(branch.path, "verify", env={"TMPDIR": str(temp)})
    assert result.returncode == 3, result.stdout + result.stderr
    reason = result.report()["verify"]["reason"]
    assert reason.startswith("no space left on device") and "during the verify" in reason, reason


def test_outputs_on_a_full_disk_end_in_a_blocked_run_that_says_so(tmp_path: Path, small_disk: Path) -> None:
    (small_disk / "out" / "verify").mkdir(parents=True)  # made before the disk filled up
    (small_disk / "filler").write_bytes(b"\0" * 15 * 1024 * 1024)
    with (small_disk / "filler").open("ab", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass
    branch = make_repo(tmp_path, {"app.py": "x = 1\n"}, {".prepcook/scripts.toml": '[test]\nrun = "echo ran"\n'})
    result = run_cli(branch.path, "verify", "--output-dir", str(small_disk / "out"))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "no space left on device" in result.stderr and "internal error" not in result.stderr, result.stderr


@as_root
def test_a_uid_lock_directory_another_user_made_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewgate.verify import principal

    planted = tmp_path / "reviewgate-verify-uids"
    planted.mkdir(mode=0o777)
    os.chown(planted, 64001, 64001)
    monkeypatch.setattr(principal, "_LOCK_DIRECTORY", planted)
    lease = principal._UidLease()
    with pytest.raises(OSError, match="not a directory of the gate's own"):
        lease.acquire()
    lease.release()
    assert not list(planted.iterdir())


_HOLD_A_UID = (
    "import sys\n"
    "from reviewgate.verify.principal import _UidLease\n"
    "print(_UidLease().acquire(), flush=True)\n"
    "sys.stdin.read()\n"
)


@as_root
def test_two_gates_with_different_temp_dirs_never_lease_the_same_uid(tmp_path: Path) -> None:
    """Teardown kills every process of the leased uid: a second gate given another TMPDIR (a
    runner's per-job temp dir) must still see the first one's lease, or it kills that run's app."""
    leased = []
    holders = []
    for name in ("first", "second"):
        temp = tmp_path / name
        temp.mkdir()
        holder = subprocess.Popen([sys.executable, "-c", _HOLD_A_UID], env={**os.environ, "TMPDIR": str(temp)},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout is not None
        leased.append(int(holder.stdout.readline()))
    for holder in holders:
        holder.communicate("", timeout=30)
    assert leased[0] != leased[1]


def test_the_step_environment_reaches_the_step_exactly_through_the_shim(tmp_path: Path) -> None:
    """The shim re-exports each value: quotes, `$`, backticks and line breaks arrive unchanged and
    run nothing."""
    world = world_writable_directory()
    value = "it's \"quoted\" $HOME `touch " + str(world / "ran") + "` $(id)\nsecond line\\"
    repo = tmp_path / "repo"
    write_files(repo, {"app.py": "x = 1\n"})
    seen = world / "seen"
    manifest = Manifest(source=".prepcook/scripts.toml", env={"TRICKY": value},
                        test=step("test", f"printf %s \"$TRICKY\" > {seen}"))
    outcome, log = run_manifest(repo, manifest, tmp_path)
    assert outcome.status.value == "passed", log
    assert seen.read_text() == value
    assert not (world / "ran").exists()


def test_doctor_names_the_opt_in_where_the_verify_has_no_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without_pid_namespaces: object
) -> None:
    """As a normal user where `unshare` is refused (the euid is made to read as one)."""
    from reviewgate.doctor import DoctorReport, _check_verify_boundary

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    out = io.StringIO()
    _check_verify_boundary(tmp_path, DoctorReport(out))
    said = out.getvalue()
    assert "ok: verify boundary: same user" in said, said
    assert "--allow-verify-without-isolation (action input allow-verify-without-isolation)" in said


@as_root
def test_without_setpriv_the_start_itself_switches_uid_and_the_step_environment_still_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewgate.verify import principal

    monkeypatch.setattr(principal, "_setpriv", lambda: None)
    principal._boundary_for.cache_clear()
    try:
        world = world_writable_directory()
        repo = tmp_path / "repo"
        write_files(repo, {"app.py": "x = 1\n"})
        manifest = Manifest(source=".prepcook/scripts.toml", env={"GREETING": "hello"},
                            test=step("test", f"echo \"$GREETING $(id -u) $(id -G)\" > {world / 'seen'}"))
        outcome, log = run_manifest(repo, manifest, tmp_path)
    finally:
        principal._boundary_for.cache_clear()
    assert outcome.status.value == "passed", log
    uid = verify_uid(outcome)
    assert (world / "seen").read_text().split() == ["hello", str(uid), str(uid)]
