"""One verify's steps in order, as the verify's principal in its own copy of the tree: setup,
build, the app started and checked ready, seed, reproduce, test, and teardown, which always runs;
then the outcome put together from what ran. run_verify (runner.py) checks what must hold before
any of it starts."""

from __future__ import annotations

import errno
import os
import secrets
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reviewgate.config import DEFAULT_LOG_LIMIT
from reviewgate.findings import Finding
from reviewgate.text import printable
from reviewgate.verify.cancellation import POLL_SECONDS, Cancellation
from reviewgate.verify.environment import step_environment
from reviewgate.verify.failure import step_finding
from reviewgate.verify.junit_import import read_junit
from reviewgate.verify.logs import CiLog, SecretMasker, StepLog, log_tail
from reviewgate.verify.manifest import STEP_ORDER, Manifest, Step
from reviewgate.verify.outcome import ReproductionStatus, StepResult, VerifyOutcome, VerifyStatus
from reviewgate.verify.principal import Sandbox
from reviewgate.verify.processes import KILL_WAIT_SECONDS, kill_escaped, spawn, terminate_tree, wait_ports_free
from reviewgate.verify.readiness import ReadyResult, wait_ready
from reviewgate.verify.sweep import EMPTY_UID_SECONDS

# What a verify blocked by the gate's own writes (a full disk) tells the user to do.
RUNNER_SIDE = "the runner's side, not the branch's: free space on the runner and re-run"
# A foreground step past its timeout, cancelled, or leaving background processes behind:
# SIGTERM to its group, this long, then SIGKILL.
STEP_GRACE = 5.0
# After a second signal the runner's SIGKILL is seconds away: the start group gets this long.
HURRIED_GRACE = 1.0
# The app's start output is shown in the CI log after teardown, at most this much of its end.
START_LOG_ECHO_BYTES = 1024 * 1024


@dataclass(frozen=True)
class _Failure:
    step: str
    title: str
    detail: str
    command: str
    log: Path | None


class VerifyRun:
    """One verify run's state: what ran, the first failure, the start process."""

    def __init__(
        self,
        manifest: Manifest,
        repo: Path,
        log_dir: Path,
        ci_log: CiLog,
        masker: SecretMasker,
        environ: Mapping[str, str],
        secret_names: tuple[str, ...],
        cancellation: Cancellation,
        sandbox: Sandbox,
        log_limit: int = DEFAULT_LOG_LIMIT,
    ) -> None:
        self.manifest = manifest
        self.repo = repo
        self.sandbox = sandbox
        self.log_dir = log_dir
        self.ci_log = ci_log
        self.masker = masker
        self.environ = environ
        self.secret_names = secret_names
        self.cookie = secrets.token_hex(16)
        self.log_limit = log_limit
        self.cancellation = cancellation
        self.results: dict[str, StepResult] = {}
        self.failure: _Failure | None = None
        self.interrupted_step: str | None = None
        self.start_process: subprocess.Popen[bytes] | None = None
        self.start_log: StepLog | None = None
        self.start_clock = 0.0
        self.imported: tuple[tuple[str, str, bool, str], ...] = ()
        self.notes: list[str] = []
        self.survivors: list[str] = []
        self.write_errors: list[str] = []  # the gate's own files it could not write (a full disk)

    # -- helpers ---------------------------------------------------------------------------
    def _relative(self, path: Path) -> str:
        return printable(str(path))

    def _cwd(self, cwd: str | None) -> Path:
        """Steps run in the verify's own copy of the tree, never in the gate's checkout: a `cwd`
        that is a link out of it (committed by the branch) is an OSError."""
        tree = self.sandbox.tree
        if not cwd:
            return tree
        if os.path.lexists(tree / cwd) and not self.sandbox.contains(tree / cwd):
            raise OSError(errno.EXDEV, "leads outside the verify's tree through a link", cwd)
        return tree / cwd

    def _fail(self, step: str, title: str, detail: str, command: str, log: Path | None) -> None:
        if self.failure is None:
            self.failure = _Failure(step, self.masker.mask(title), self.masker.mask(detail), command, log)

    def _record(
        self,
        name: str,
        command: str,
        exit_code: int | None,
        started: float,
        log: Path | None,
        passed: bool,
        detail: str = "",
    ) -> None:
        self.results[name] = StepResult(
            name=name,
            command=self.masker.mask(command),
            exit_code=exit_code,
            duration_seconds=time.monotonic() - started,
            log_path=self._relative(log) if log else None,
            passed=passed,
            detail=self.masker.mask(detail),
        )

    def _wait(self, process: subprocess.Popen[bytes], timeout: float, cancellable: bool) -> str:
        """ "exited", "timeout" or "cancelled"; polls so a signal to the gate is seen quickly."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                process.wait(timeout=POLL_SECONDS)
                return "exited"
            except subprocess.TimeoutExpired:
                pass
            if self.cancellation.hurried or (cancellable and self.cancellation.cancelled):
                return "cancelled"
            if time.monotonic() >= deadline:
                return "timeout"

    def _log(self, name: str, echo: bool = True) -> StepLog:
        return StepLog(self.log_dir / f"{name}.log", self.masker, self.ci_log if echo else None, self.log_limit)

    def _closed(self, name: str, log: StepLog) -> None:
        """After a log is closed: say in the notes when its output was cut to the limit, and keep
        what kept it from being written (a full disk blocks the verify)."""
        if log.write_error is not None:
            self.write_errors.append(f"writing {log.path.name}: {(log.write_error.strerror or str(log.write_error)).lower()}")
        if log.left_out:
            self.notes.append(
                f"{name}: {log.left_out} bytes of output left out of {log.path.name} and the CI log "
                f"(the first and last {self.log_limit // 2} bytes are kept)"
            )

    def _environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        return self.sandbox.environment(
            step_environment(self.environ, self.manifest, extra, self.secret_names, self.cookie))

    # -- steps -----------------------------------------------------------------------------
    def run_step(self, step: Step, cancellable: bool = True) -> bool:
        log = self._log(step.name)
        log_path = log.path
        self.ci_log.begin(step.name, f"verify: {step.name}: {step.run}")
        started = time.monotonic()
        env = self._environment(step.env)
        try:
            process = spawn(step.run, self._cwd(step.cwd), env, self.sandbox.launcher)
        except OSError as error:
            detail = f"could not start in {step.cwd or '.'}: {error.strerror or error}"
            log.note(detail)
            log.close()
            self.ci_log.end(f"verify: {step.name}: {detail}")
            self._record(step.name, step.run, None, started, log_path, False, detail)
            self._fail(step.name, f"verify: {step.name} could not start", detail, step.run, log_path)
            return False
        assert process.stdout is not None
        log.follow(process.stdout)
        state = self._wait(process, step.timeout, cancellable)
        # Whatever the step left running in its group goes now: it would hold the log pipe open
        # and could hold a declared port (long-running services belong in `start`).
        leftovers = terminate_tree(process, HURRIED_GRACE if self.cancellation.hurried else STEP_GRACE)
        if leftovers and state == "exited":
            log.note(f"ended {len(leftovers)} process(es) the step left running: {'; '.join(leftovers)}")
        log.close()
        self._closed(step.name, log)
        exit_code = process.returncode if state == "exited" else None
        if state == "exited" and exit_code == 0:
            passed, detail = self._import_junit(step, started)
        elif state == "exited":
            passed, detail = False, f"exit code {exit_code}"
            if step.junit:
                self._import_junit(step, started)
        elif state == "timeout":
            passed, detail = False, f"timed out after {step.timeout:g} s"
        else:
            passed, detail = False, f"cancelled ({self.cancellation.signal_name})"
            self.interrupted_step = self.interrupted_step or step.name
        self.ci_log.end(
            f"verify: {step.name}: {'passed' if passed else detail} ({time.monotonic() - started:.1f} s)"
        )
        self._record(step.name, step.run, exit_code, started, log_path, passed, detail)
        if not passed and state != "cancelled":
            title = f"verify: {step.name} failed ({detail})"
            self._fail(step.name, title, detail, step.run, log_path)
        return passed

    def _import_junit(self, step: Step, started: float) -> tuple[bool, str]:
        """Exit 0 passes, unless the app's own JUnit results (when `junit` is set) say a test failed."""
        if not step.junit:
            return True, ""
        wall_start = time.time() - (time.monotonic() - started)
        # Read only if the open file lies in the tree, wherever links in its path lead.
        imported = read_junit(self.sandbox.tree / (step.cwd or "") / step.junit, self.masker, within=self.sandbox.tree,
                              written_after=wall_start - 1)
        self.imported = imported.cases
        if imported.problem:
            self.notes.append(f"{step.name}: {imported.problem}")
        if imported.failed:
            return False, f"exit code 0, but {imported.failed} test(s) failed in {step.junit}"
        return True, ""

    def start_app(self) -> bool:
        start = self.manifest.start
        assert start is not None
        # Not echoed live: it runs beside the next steps' groups. It is shown after teardown.
        self.start_log = self._log("start", echo=False)
        log_path = self.start_log.path
        self.ci_log.line(
            f"verify: start: {start.run} (in the background; output in {self._relative(log_path)})"
        )
        self.start_clock = time.monotonic()
        try:
            self.start_process = spawn(
                start.run,
                self._cwd(start.cwd),
                self._environment(start.env),
                self.sandbox.launcher,
                keep_alive=True,
            )
        except OSError as error:
            detail = f"could not start in {start.cwd or '.'}: {error.strerror or error}"
            self.start_log.note(detail)
            self.start_log.close()
            self._record("start", start.run, None, self.start_clock, log_path, False, detail)
            self._fail("start", "verify: start could not start", detail, start.run, log_path)
            return False
        assert self.start_process.stdout is not None
        self.start_log.follow(self.start_process.stdout)
        return True

    def check_ready(self) -> bool:
        check = self.manifest.ready
        assert check is not None
        log = self._log("ready")
        log_path = log.path
        self.ci_log.begin("ready", f"verify: ready: {check.describe()}")
        started = time.monotonic()
        try:
            cwd = self._cwd(check.cwd)
        except OSError as error:
            result = ReadyResult(False, f"could not start in {check.cwd}: {error.strerror or error}", 0)
        else:
            result = wait_ready(
                check,
                start=self.start_process,
                cwd=cwd,
                env=self._environment(check.env),
                log=log,
                cancellation=self.cancellation,
                launcher=self.sandbox.launcher,
            )
        if not result.ready:
            log.note(result.detail)
        log.close()
        self._closed("ready", log)
        self.ci_log.end(
            f"verify: ready: {'ready' if result.ready else result.detail} "
            f"({time.monotonic() - started:.1f} s)"
        )
        self._record("ready", check.describe(), None, started, log_path, result.ready, result.detail)
        start = self.manifest.start
        if result.start_exit_code is not None and start is not None and self.start_log is not None:
            self.start_log.close(KILL_WAIT_SECONDS)  # the output is complete once the pipe ends
            detail = f"exited with code {result.start_exit_code} before the ready check passed"
            self._record(
                "start",
                start.run,
                result.start_exit_code,
                self.start_clock,
                self.start_log.path,
                False,
                detail,
            )
            self._fail(
                "start",
                f"verify: start failed (exit code {result.start_exit_code} before ready)",
                detail,
                start.run,
                self.start_log.path,
            )
        elif self.cancellation.cancelled and not result.ready:
            self.interrupted_step = "ready"
        elif not result.ready:
            self._fail(
                "ready",
                f"verify: ready check did not pass within {check.timeout:g} s",
                result.detail,
                check.describe(),
                self.start_log.path if self.start_log else log_path,
            )
        return result.ready

    def stand_up_and_test(self) -> None:
        manifest = self.manifest
        for step in (manifest.setup, manifest.build):
            if step is not None and (self.cancellation.cancelled or not self.run_step(step)):
                return
        if manifest.start is not None and (self.cancellation.cancelled or not self.start_app()):
            return
        if manifest.ready is not None and (self.cancellation.cancelled or not self.check_ready()):
            return
        for step in (manifest.seed, manifest.reproduce, manifest.test):
            if step is not None and (self.cancellation.cancelled or not self.run_step(step)):
                return

    # -- teardown --------------------------------------------------------------------------
    def teardown(self) -> None:
        """Always: the manifest's teardown (bounded; only a second signal cuts it short), then
        the start group."""
        if self.manifest.teardown is not None:
            self.run_step(self.manifest.teardown, cancellable=False)
        start = self.manifest.start
        if self.start_process is not None and start is not None and self.start_log is not None:
            still_running = self.start_process.poll() is None
            grace = min(start.grace, HURRIED_GRACE) if self.cancellation.hurried else start.grace
            self.survivors += [self.masker.mask(item) for item in terminate_tree(self.start_process, grace)]
            self.start_log.close(KILL_WAIT_SECONDS)
            self._closed("start", self.start_log)
            if "start" not in self.results:
                detail = (
                    "stopped at teardown"
                    if still_running
                    else f"exited with code {self.start_process.returncode}"
                )
                self._record(
                    "start",
                    start.run,
                    None if still_running else self.start_process.returncode,
                    self.start_clock,
                    self.start_log.path,
                    True,
                    detail,
                )
            self._echo_start_log()
        self._kill_escaped()
        for description in self.sandbox.kill_leftovers():
            line = f"process left running as the verify's user killed: {self.masker.mask(description)}"
            self.ci_log.line(f"verify: teardown: {line}")
            self.notes.append(line)
        busy = wait_ports_free(self.manifest.ports, KILL_WAIT_SECONDS)
        self.survivors += [f"port {port} still in use after teardown" for port in busy]
        if self.survivors:
            self.ci_log.line(f"verify: teardown left behind: {'; '.join(self.survivors)}")
            detail = f"left behind: {'; '.join(self.survivors)}"
            self._fail(
                "teardown",
                f"verify: teardown left {len(self.survivors)} process(es) or port(s) behind",
                detail,
                start.run if start else "",
                None,
            )

    def _kill_escaped(self) -> None:
        """What left the process group and tree (setsid, a double fork from any step) still
        carries the run cookie: stopped now, each named in the notes; one that outlives
        SIGKILL is a survivor."""
        grace = HURRIED_GRACE if self.cancellation.hurried else STEP_GRACE
        for description, gone in kill_escaped(self.cookie, grace):
            line = f"escaped process {self.masker.mask(description)} " + ("killed" if gone else "survived SIGKILL")
            self.ci_log.line(f"verify: teardown: {line}")
            if gone:
                self.notes.append(line)
            else:
                self.survivors.append(line)

    def _echo_start_log(self) -> None:
        assert self.start_log is not None
        self.ci_log.begin("start", "verify: start (the app's output)")
        self.ci_log.write(log_tail(self.start_log.path, lines=1 << 30, limit=START_LOG_ECHO_BYTES) + "\n")
        self.ci_log.end(f"verify: start output in {self._relative(self.start_log.path)}")

    # -- outcome ---------------------------------------------------------------------------
    def outcome(self, duration: float) -> VerifyOutcome:
        steps = tuple(self.results[name] for name in STEP_ORDER if name in self.results)
        reproduction = ReproductionStatus.ABSENT
        if "reproduce" in self.results:
            reproduction = (
                ReproductionStatus.PASSED if self.results["reproduce"].passed else ReproductionStatus.FAILED
            )
        base = VerifyOutcome(
            status=VerifyStatus.PASSED,
            reason=f"{len(steps)} step(s) passed",
            manifest=self.manifest.source,
            steps=steps,
            reproduction=reproduction,
            imported_tests=self.imported,
            survivors=tuple(self.survivors),
            duration_seconds=duration,
            notes=tuple(self.masker.mask(note) for note in (*self.sandbox.notes, *self.notes)),
            boundary=self.sandbox.boundary.describe(),
        )
        if self.sandbox.occupied:
            left = "; ".join(self.masker.mask(item) for item in self.sandbox.occupied[:5])
            closed = "; the checkout's .git stays closed to other users" if self.sandbox.boundary.uid else ""
            reason = (f"{len(self.sandbox.occupied)} process(es) the verify started still ran after "
                      f"{EMPTY_UID_SECONDS:g} s of SIGKILL at teardown ({left}){closed}")
            return base._replace(status=VerifyStatus.BLOCKED, reason=reason)
        if self.write_errors:
            reason = f"the verify's logs could not be written ({'; '.join(self.write_errors)}): {RUNNER_SIDE}"
            return base._replace(status=VerifyStatus.BLOCKED, reason=reason)
        if self.cancellation.cancelled:
            where = f" during {self.interrupted_step}" if self.interrupted_step else ""
            reason = f"cancelled ({self.cancellation.signal_name}){where}; teardown ran"
            return base._replace(status=VerifyStatus.BLOCKED, reason=reason, cancelled=True)
        if self.failure is not None:
            return base._replace(
                status=VerifyStatus.FAILED,
                reason=self.failure.title.removeprefix("verify: "),
                findings=(self._finding(self.failure),),
            )
        return base

    def _finding(self, failure: _Failure) -> Finding:
        return step_finding(
            manifest=self.manifest.source,
            step=failure.step,
            title=failure.title,
            detail=failure.detail,
            command=self.masker.mask(failure.command),
            log_path=self._relative(failure.log) if failure.log else None,
            tail=log_tail(failure.log) if failure.log else "",
        )
