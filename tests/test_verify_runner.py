"""The verify against real processes: a small http.server app, stood up, tested, torn down."""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from reviewgate.ci.context import CiContext
from reviewgate.findings import FindingClass, Severity
from reviewgate.tomlfile import read_toml
from reviewgate.verify.manifest import parse_manifest
from reviewgate.verify.outcome import ReproductionStatus, VerifyOutcome, VerifyStatus
from reviewgate.verify.processes import port_is_free
from reviewgate.verify.runner import run_verify
from testing.repo import write_files
from testing.verify_app import PYTHON, app_files, free_port

pytestmark = pytest.mark.timeout(60)

SECRET = "s3cr3t-value-for-tests"
ENVIRONMENT = {"APP_SECRET": SECRET, "PATH": "/usr/bin:/bin"}


def run_app(
    tmp_path: Path,
    files: dict[str, str] | None = None,
    *,
    ci: CiContext | None = None,
    environ: dict[str, str] | None = None,
    **options: object,
) -> tuple[VerifyOutcome, str, Path]:
    """Write the app (and `files`) into tmp_path/app-repo, run its manifest, return the outcome,
    what was streamed to the CI log and the output dir."""
    repo = tmp_path / "app-repo"
    repo.mkdir(exist_ok=True)
    port = options.pop("port", None) or free_port()
    write_files(repo, {**app_files(int(port), **options), **(files or {})})  # type: ignore[arg-type]
    manifest = parse_manifest(read_toml(repo / ".prepcook/scripts.toml"), ".prepcook/scripts.toml")
    stdout = io.StringIO()
    output_dir = tmp_path / "out"
    outcome = run_verify(
        manifest,
        repo=repo,
        output_dir=output_dir,
        ci=ci or CiContext(provider="local"),
        stdout=stdout,
        environ=ENVIRONMENT if environ is None else environ,
    )
    return outcome, stdout.getvalue(), output_dir


def processes_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if text in " ".join(process.info["cmdline"] or ()) and process.status() != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


@pytest.fixture
def listener() -> Iterator[tuple[socket.socket, int]]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock, sock.getsockname()[1]
    sock.close()


def test_happy_path_stands_up_tests_and_tears_down(tmp_path: Path) -> None:
    port = free_port()
    outcome, log, output_dir = run_app(tmp_path, port=port)
    assert outcome.status is VerifyStatus.PASSED, outcome.reason
    assert [step.name for step in outcome.steps] == [
        "setup",
        "build",
        "start",
        "ready",
        "seed",
        "test",
        "teardown",
    ]
    assert all(step.passed for step in outcome.steps)
    assert outcome.findings == () and outcome.survivors == ()
    assert outcome.reproduction is ReproductionStatus.ABSENT
    assert port_is_free(port)
    assert not processes_mentioning(f"app/server.py {port}")
    test_log = (output_dir / "verify/test.log").read_text()
    assert "health said ok" in test_log and "env ci" in test_log
    assert "serving on" in (output_dir / "verify/start.log").read_text()
    assert "tearing down" in log


def test_failing_test_is_one_blocker_finding_and_teardown_still_runs(tmp_path: Path) -> None:
    port = free_port()
    failing = f"{PYTHON} -c \"print('assertion failed: expected 2'); raise SystemExit(1)\""
    outcome, _, output_dir = run_app(tmp_path, port=port, test=failing)
    assert outcome.status is VerifyStatus.FAILED
    (finding,) = outcome.findings
    assert (finding.finding_class, finding.category, finding.severity) == (
        FindingClass.CORRECTNESS,
        "verify",
        Severity.BLOCKER,
    )
    assert "test" in finding.title and "exit code 1" in finding.title
    assert "assertion failed: expected 2" in finding.body
    assert outcome.steps[-1].name == "teardown" and outcome.steps[-1].passed
    assert (output_dir / "verify/teardown.log").read_text().strip() == "tearing down"
    assert port_is_free(port)


def test_app_that_crashes_on_start_fails_at_once_with_its_exit_code(tmp_path: Path) -> None:
    crash = f"{PYTHON} -c \"print('cannot bind database'); raise SystemExit(4)\""
    started = time.monotonic()
    outcome, _, _ = run_app(tmp_path, start=crash, ready_timeout=30)
    assert time.monotonic() - started < 10  # not the 30 s ready timeout
    assert outcome.status is VerifyStatus.FAILED
    (finding,) = outcome.findings
    assert "start" in finding.title and "exit code 4" in finding.title
    assert "cannot bind database" in finding.body
    start = next(step for step in outcome.steps if step.name == "start")
    assert start.exit_code == 4 and not start.passed
    assert "test" not in [step.name for step in outcome.steps]


def test_ready_check_that_never_passes_fails_after_its_timeout(tmp_path: Path) -> None:
    port = free_port()
    outcome, _, _ = run_app(tmp_path, port=port, ready_timeout=1)
    assert outcome.status is VerifyStatus.PASSED  # control: the right path is ready
    repo = tmp_path / "app-repo"
    manifest = (repo / ".prepcook/scripts.toml").read_text().replace("/health", "/not-health")
    outcome, _, _ = run_app(tmp_path, port=port, ready_timeout=1, files={".prepcook/scripts.toml": manifest})
    assert outcome.status is VerifyStatus.FAILED
    (finding,) = outcome.findings
    assert "ready check did not pass within 1 s" in finding.title
    assert "HTTP 404" in outcome.reason or "HTTP 404" in finding.body
    assert port_is_free(port)


def test_port_taken_before_start_blocks_and_runs_nothing(
    tmp_path: Path, listener: tuple[socket.socket, int]
) -> None:
    _, port = listener
    outcome, log, output_dir = run_app(tmp_path, port=port)
    assert outcome.status is VerifyStatus.BLOCKED
    assert f"port(s) already in use before start: {port}" in outcome.reason
    assert "not the branch's" in outcome.reason and "re-run" in outcome.reason
    assert outcome.findings == () and outcome.steps == ()
    assert not (output_dir / "verify").exists()
    assert "blocked" in log


def test_missing_secret_blocks_with_its_name(tmp_path: Path) -> None:
    outcome, _, _ = run_app(tmp_path, environ={"APP_SECRET": "", "PATH": "/usr/bin:/bin"})
    assert outcome.status is VerifyStatus.BLOCKED
    assert "secret(s) not set or empty: APP_SECRET" in outcome.reason
    assert outcome.steps == ()


def test_grandchildren_of_start_do_not_survive_teardown(tmp_path: Path) -> None:
    first, second = free_port(), free_port()
    start = f"sh -c '{PYTHON} -m http.server {first} & {PYTHON} -m http.server {second} & wait'"
    extra_ports = f"ports = [{first}, {second}]\n"
    repo = tmp_path / "app-repo"
    repo.mkdir()
    text = app_files(first, start=start)[".prepcook/scripts.toml"]
    text = text.replace(f"ports = [{first}]\n", extra_ports).replace(
        f"localhost:{first}/health", f"localhost:{second}/"
    )
    text = text.replace("app_test.py", "-c pass ")
    outcome, _, _ = run_app(tmp_path, port=first, files={".prepcook/scripts.toml": text})
    assert outcome.status is VerifyStatus.PASSED, outcome.reason
    assert outcome.survivors == ()
    assert port_is_free(first) and port_is_free(second)
    assert not processes_mentioning(f"http.server {first}") and not processes_mentioning(
        f"http.server {second}"
    )


# A daemon that leaves the session and ignores SIGTERM, holding a port when given one.
STUBBORN_DAEMON = """\
import signal, socket, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if len(sys.argv) > 2:
    server = socket.socket()
    server.bind(("127.0.0.1", int(sys.argv[2])))
    server.listen()
open(sys.argv[1] + ".ready", "w").close()
time.sleep(600)
"""


def stubborn_daemon(marker: str, port: int | None = None) -> str:
    """A command that starts the daemon in its own session and returns at once: it is neither
    in the step's process group nor a descendant of anything the verify still holds."""
    # It waits for the daemon to be up, so teardown on a loaded machine cannot come first.
    return (f"(setsid {PYTHON} daemon.py {marker} {port or ''} >/dev/null 2>&1 &); "
            f"while [ ! -e {marker}.ready ]; do sleep 0.05; done")


@pytest.mark.parametrize("step", ["start", "setup"])
def test_a_setsid_daemon_that_ignores_sigterm_is_found_killed_and_named(tmp_path: Path, step: str) -> None:
    port, escaped = free_port(), free_port()
    marker = f"escaped-daemon-{step}-{escaped}"
    manifest = app_files(port)[".prepcook/scripts.toml"].replace(
        f"ports = [{port}]", f"ports = [{port}, {escaped}]"
    )
    if step == "start":
        start = f"{stubborn_daemon(marker, escaped)}; exec {PYTHON} app/server.py {port}"
        manifest = app_files(port, start=start)[".prepcook/scripts.toml"].replace(
            f"ports = [{port}]", f"ports = [{port}, {escaped}]"
        )
    else:
        manifest = manifest.replace('run = "echo setting up"', f"run = {stubborn_daemon(marker, escaped)!r}")
    try:
        outcome, log, _ = run_app(
            tmp_path, port=port, files={".prepcook/scripts.toml": manifest, "daemon.py": STUBBORN_DAEMON}
        )
        assert not processes_mentioning(marker), "the escaped daemon outlived teardown"
        assert outcome.status is VerifyStatus.PASSED, outcome.reason
        assert port_is_free(escaped) and outcome.survivors == ()
        if "pid namespace" in outcome.boundary:
            return  # it could not escape: the kernel ended it with its step's namespace
        (note,) = [note for note in outcome.notes if note.startswith(("escaped process pid ", "process left"))]
        assert marker in note and note.endswith(" killed") or "killed:" in note
        assert f"verify: teardown: {note}" in log
    finally:
        for process in processes_mentioning(marker):
            process.kill()


def test_command_not_found_fails_with_127_and_the_shells_message(tmp_path: Path) -> None:
    outcome, _, output_dir = run_app(tmp_path, test="no-such-command-reviewgate")
    assert outcome.status is VerifyStatus.FAILED
    test = next(step for step in outcome.steps if step.name == "test")
    assert test.exit_code == 127
    assert "not found" in (output_dir / "verify/test.log").read_text()


def test_step_past_its_timeout_is_stopped_and_fails(tmp_path: Path) -> None:
    # A duration no other test uses: the check below looks at every process on the machine.
    text = app_files(free_port(), test="sleep 30.4217")[".prepcook/scripts.toml"].replace(
        "timeout = 30", "timeout = 0.5"
    )
    started = time.monotonic()
    outcome, _, _ = run_app(tmp_path, files={".prepcook/scripts.toml": text})
    assert time.monotonic() - started < 15
    assert outcome.status is VerifyStatus.FAILED
    assert "timed out after 0.5 s" in outcome.findings[0].title
    assert not processes_mentioning("sleep 30.4217")


JUNIT_WITH_A_FAILURE = """<?xml version="1.0"?>
<testsuites><testsuite name="app" tests="2">
<testcase classname="tests.test_api" name="test_ok"/>
<testcase classname="tests.test_api" name="test_total"><failure message="expected 3, got 4"/></testcase>
</testsuite></testsuites>
"""


def test_app_junit_is_imported_and_its_failures_fail_the_step(tmp_path: Path) -> None:
    writer = f"{PYTHON} write_junit.py"
    text = app_files(free_port(), test=writer)[".prepcook/scripts.toml"] + ""
    text = text.replace("timeout = 30", 'timeout = 30\njunit = "results/junit.xml"')
    script = (
        "import pathlib\npathlib.Path('results').mkdir(exist_ok=True)\n"
        f"pathlib.Path('results/junit.xml').write_text({JUNIT_WITH_A_FAILURE!r})\n"
    )
    outcome, _, _ = run_app(tmp_path, files={".prepcook/scripts.toml": text, "write_junit.py": script})
    assert outcome.status is VerifyStatus.FAILED
    assert ("app", "tests.test_api.test_ok", True, "") in outcome.imported_tests
    assert ("app", "tests.test_api.test_total", False, "expected 3, got 4") in outcome.imported_tests
    assert "1 test(s) failed in results/junit.xml" in outcome.findings[0].title


def test_reproduce_step_outcome_is_recorded(tmp_path: Path) -> None:
    outcome, _, _ = run_app(tmp_path, extra='\n[reproduce]\nrun = "echo reproduced: fixed"\n')
    assert outcome.status is VerifyStatus.PASSED
    assert outcome.reproduction is ReproductionStatus.PASSED
    assert [step.name for step in outcome.steps].index("reproduce") == 5


def test_github_log_groups_fence_the_apps_output(tmp_path: Path) -> None:
    noisy = f"{PYTHON} -c \"print('::error::forged by the app'); print('::endgroup::')\""
    outcome, log, _ = run_app(tmp_path, test=noisy, ci=CiContext(provider="github"))
    assert outcome.status is VerifyStatus.PASSED
    lines = log.splitlines()
    forged = lines.index("::error::forged by the app")
    opened = max(index for index in range(forged) if lines[index].startswith("::stop-commands::"))
    token = lines[opened].removeprefix("::stop-commands::")
    assert len(token) >= 32 and lines[opened - 1] == "::group::verify: test: " + noisy
    closed = lines.index(f"::{token}::")
    assert closed > forged and lines[closed + 1] == "::endgroup::"


def test_gitlab_log_sections_wrap_each_step(tmp_path: Path) -> None:
    forging = f"{PYTHON} -c \"print(chr(27) + '[0Ksection_end:1:reviewgate_verify_test' + chr(13))\""
    outcome, log, _ = run_app(tmp_path, test=forging, ci=CiContext(provider="gitlab"))
    assert outcome.status is VerifyStatus.PASSED
    assert ":reviewgate_verify_test[collapsed=true]\r\x1b[0Kverify: test: " in log
    assert (
        log.count("\x1b[0Ksection_start:") == log.count("\x1b[0Ksection_end:") == 7
    )  # 6 steps + start output
    assert "\x1b[0Ksection_end:1:" not in log and "section_end:1:reviewgate_verify_test" in log


def test_secret_never_reaches_logs_or_the_ci_log(tmp_path: Path) -> None:
    outcome, log, output_dir = run_app(tmp_path)
    assert outcome.status is VerifyStatus.PASSED
    assert SECRET not in log and "secret is ***" in log
    for path in (output_dir / "verify").iterdir():
        assert SECRET not in path.read_text(), path


def test_start_that_daemonizes_and_exits_0_is_still_waited_for_and_torn_down(tmp_path: Path) -> None:
    port = free_port()
    daemonizing = f"{PYTHON} -c 'import time; time.sleep(0.3)'; {PYTHON} app/server.py {port} & exit 0"
    outcome, _, _ = run_app(tmp_path, port=port, start=daemonizing)
    assert outcome.status is VerifyStatus.PASSED, outcome.reason
    start = next(step for step in outcome.steps if step.name == "start")
    # In a pid namespace of its own the start's namespace lives on with the app: stopped at teardown.
    assert start.passed and (start.exit_code == 0 or "pid namespace" in outcome.boundary)
    assert port_is_free(port) and not processes_mentioning(f"app/server.py {port}")


def test_only_our_old_step_logs_are_cleared_from_the_output_dir(tmp_path: Path) -> None:
    keep = tmp_path / "out/verify/notes.txt"
    keep.parent.mkdir(parents=True)
    keep.write_text("the user's file")
    stale = tmp_path / "out/verify/reproduce.log"
    stale.write_text("from an earlier run")
    outcome, _, _ = run_app(tmp_path)
    assert outcome.status is VerifyStatus.PASSED
    assert keep.read_text() == "the user's file" and not stale.exists()
