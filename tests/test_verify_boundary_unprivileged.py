"""The boundary a gate that is not root gets, tried as a real unprivileged user: the gate made
non-dumpable hides its environment from a process of the same user, and a step in its own pid
namespace sees only its own processes.

Needs root to become that user (CI runs as root); the system's Python 3 runs the gate's
principal module from a copy of the package that user can read."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import psutil
import pytest

from testing.verify_app import python_for_the_verify

UID = 64001
pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged uid"),
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)"),
]
PACKAGE = Path(__file__).resolve().parent.parent / "reviewgate"


def _as_user(code: str, env: dict[str, str] | None = None, groups: tuple[int, ...] = ()) -> subprocess.Popen[str]:
    """`code` run by the system's Python as UID (in `groups` besides its own), with a copy of the
    package, and of psutil for a verify's teardown, on its path."""
    readable = Path(tempfile.mkdtemp(prefix="reviewgate-unprivileged-"))
    os.chmod(readable, 0o755)
    shutil.copytree(PACKAGE, readable / "reviewgate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(Path(psutil.__file__).parent, readable / "psutil", ignore=shutil.ignore_patterns("__pycache__"))
    python = python_for_the_verify()  # as root: one another uid can run
    group_option = f"--groups={','.join(str(group) for group in groups)}" if groups else "--clear-groups"
    return subprocess.Popen(
        ["setpriv", f"--reuid={UID}", f"--regid={UID}", group_option, python, "-c", textwrap.dedent(code)],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(readable), "HOME": "/tmp", **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp",
    )


def test_a_non_dumpable_gate_hides_its_environment_from_the_same_user() -> None:
    gate = _as_user("""
        import sys, time
        from reviewgate.verify.principal import make_gate_undumpable
        make_gate_undumpable()
        print("ready", flush=True)
        time.sleep(20)
    """, env={"GATE_TOKEN": "token-in-the-gate"})
    try:
        assert gate.stdout is not None and gate.stdout.readline().strip() == "ready"
        thief = _as_user(f"""
            try:
                print(open("/proc/{gate.pid}/environ", "rb").read())
            except OSError as error:
                print("refused", type(error).__name__)
        """)
        output, errors = thief.communicate(timeout=30)
        assert output.startswith("refused"), output + errors
    finally:
        gate.kill()
        gate.wait()


def test_a_step_of_an_unprivileged_gate_sees_only_its_own_processes() -> None:
    probe = _as_user("""
        import subprocess
        from reviewgate.verify.principal import boundary
        chosen = boundary()
        command = chosen.launcher.command(["/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; id -u"])
        print(chosen.kind)
        print(subprocess.run(command, capture_output=True, text=True).stdout)
    """)
    output, errors = probe.communicate(timeout=30)
    kind, *rest = output.split("\n")
    if kind == "same user":
        pytest.skip("unprivileged user namespaces are not allowed here: the same-user boundary applies")
    assert kind == "namespaces", output + errors
    count, uid = rest[0].strip(), rest[1].strip()
    assert int(count) <= 4, output  # the shell, ls, grep: not the gate, not the machine
    assert uid == str(UID)


# A verify with the "same user" boundary, forced as where `unshare` is missing or refused.
_SAME_USER_VERIFY = """
    import io, pathlib, sys, tempfile
    from reviewgate.verify import principal
    principal._unshare = lambda: None
    from reviewgate.ci.context import CiContext
    from reviewgate.verify.manifest import Manifest, Step
    from reviewgate.verify.runner import run_verify
    repo = pathlib.Path(tempfile.mkdtemp())
    (repo / "app.py").write_text("x = 1")
    manifest = Manifest(source=".prepcook/scripts.toml", test=Step("test", "echo ran", 60.0))
    environ = {"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": "token-in-the-job", "REVIEWGATE_CACHE_KEY": "key"}
    outcome = run_verify(manifest, repo=repo, output_dir=repo / "out", ci=CiContext(provider="local"),
                         stdout=io.StringIO(), environ=environ, allow_without_isolation=ALLOW)
    print(principal.boundary().kind)
    print(outcome.status.value)
    print(outcome.reason)
    print(*outcome.notes, sep="\\n")
"""


@pytest.mark.parametrize("allowed", [False, True])
def test_no_boundary_and_credentials_in_the_job_block_the_verify_unless_the_workflow_allows_it(allowed: bool) -> None:
    probe = _as_user(_SAME_USER_VERIFY.replace("ALLOW", str(allowed)))
    output, errors = probe.communicate(timeout=50)
    kind, status, reason, *_ = output.split("\n")
    assert kind == "same user", output + errors
    if allowed:
        assert status == "passed", output + errors
        return
    assert status == "blocked", output + errors
    assert "GITHUB_TOKEN, REVIEWGATE_CACHE_KEY are in the job's environment" in reason
    assert "--allow-verify-without-isolation" in reason and "container action" in reason
    assert "token-in-the-job" not in output


def test_a_verify_that_cannot_drop_the_users_groups_says_which_it_keeps() -> None:
    import grp

    try:
        disk = grp.getgrnam("disk").gr_gid
    except KeyError:
        pytest.skip("no disk group here")
    probe = _as_user(_SAME_USER_VERIFY.replace("ALLOW", "True"), groups=(disk,))
    output, errors = probe.communicate(timeout=50)
    assert "the verify keeps the gate user's supplementary groups disk (a normal user cannot drop them): " \
        "disk means root" in output, output + errors


# A step that leaves two processes behind as the attacker would: one that clears its environment
# (no run cookie) and leaves its session, to rewrite the outputs after the gate exited; one that
# also keeps forking and letting its parent exit (never the pid a list names).
_HOP = """
import os, sys, time
if os.fork():
    sys.exit(0)
os.setsid()
end = time.monotonic() + 30
while time.monotonic() < end:
    time.sleep(0.003)
    if os.fork():
        os._exit(0)
"""
_ESCAPING_VERIFY = """
    import io, os, pathlib, sys, tempfile, time
    import psutil
    from reviewgate.verify import principal
    principal._unshare = lambda: None
    from reviewgate.ci.context import CiContext
    from reviewgate.verify.manifest import Manifest, Step
    from reviewgate.verify.runner import run_verify
    repo = pathlib.Path(tempfile.mkdtemp())
    marker = repo / "late"
    (repo / "hop.py").write_text(HOP)
    done = repo / "gate-exited"
    run = (f"env -i setsid /bin/sh -c 'until [ -e {done} ]; do sleep 0.1; done; echo rewritten > {marker}' "
           ">/dev/null 2>&1 & "
           f"env -i {sys.executable} hop.py; echo started")
    manifest = Manifest(source=".prepcook/scripts.toml", test=Step("test", run, 60.0))
    outcome = run_verify(manifest, repo=repo, output_dir=repo / "out", ci=CiContext(provider="local"),
                         stdout=io.StringIO(), environ={"PATH": "/usr/bin:/bin"})
    print(principal.boundary().kind)
    print(outcome.status.value, outcome.reason)
    done.touch()
    time.sleep(1)
    others = [p.pid for p in psutil.process_iter(["uids"]) if p.info["uids"].real == os.getuid() and p.pid != os.getpid()]
    print("left", others)
    print("late" if marker.exists() else "nothing late")
"""


def test_what_a_step_leaves_behind_without_namespaces_is_killed_at_teardown() -> None:
    probe = _as_user(_ESCAPING_VERIFY.replace("HOP", repr(_HOP)))
    output, errors = probe.communicate(timeout=50)
    assert output.count("\n") >= 4, output + errors
    kind, status, left, late, *_ = output.split("\n")
    assert kind == "same user", output + errors
    assert status.startswith("passed"), output + errors
    assert left == "left []" and late == "nothing late", output + errors

