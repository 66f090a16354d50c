"""Run the verify: preconditions, then setup, build, start, ready, seed, reproduce, test, and
teardown, which always runs (stand_up.py).

A precondition that fails (a secret unset, a port taken) is the setup's side: BLOCKED, nothing
runs. A step that fails is the branch's side: FAILED with one blocker finding. SIGTERM/SIGINT
during the verify: the running step is stopped, teardown runs, the outcome is BLOCKED.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TextIO

from reviewgate.ci.context import CiContext
from reviewgate.config import DEFAULT_LOG_LIMIT
from reviewgate.errors import UsageError
from reviewgate.text import printable
from reviewgate.verify.cancellation import Cancellation
from reviewgate.verify.environment import (
    SecretGrant,
    check_preconditions,
    credentials_in,
    passed_secret_names,
)
from reviewgate.verify.logs import CiLog, SecretMasker
from reviewgate.verify.manifest import STEP_ORDER, Manifest
from reviewgate.verify.outcome import VerifyOutcome, VerifyStatus
from reviewgate.verify.principal import boundary, verify_sandbox
from reviewgate.verify.stand_up import RUNNER_SIDE, VerifyRun

LOG_DIRECTORY = "verify"
# Errors writing the gate's own files that are the runner's state, not the branch's doing.
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT)
def _disk_trouble(error: OSError, manifest: Manifest, started: float) -> VerifyOutcome:
    """The verify could not go on because the gate could not write (a full disk): blocked."""
    where = f" ({printable(str(error.filename))})" if error.filename else ""
    return VerifyOutcome(status=VerifyStatus.BLOCKED, manifest=manifest.source,
                         reason=f"{(error.strerror or str(error)).lower()}{where} during the verify: {RUNNER_SIDE}",
                         duration_seconds=time.monotonic() - started)


def _clear_old_logs(log_dir: Path) -> None:
    """Step logs of an earlier run in the same output dir would pass for this run's. Only our
    own `<step>.log` files go: the output dir may be one the user shares with other files."""
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"--output-dir: cannot create {log_dir}: {error.strerror or error}") from error
    for name in STEP_ORDER:
        (log_dir / f"{name}.log").unlink(missing_ok=True)


def exposed_without_isolation(environ: Mapping[str, str], reviewer_keys: Collection[str]) -> str | None:
    """Why the verify may not run here: no boundary at all (the gate's user, no namespaces, so
    any step can read the job's credentials in the /proc of the runner's processes) while the
    job holds credentials. None when there is a boundary or nothing to take."""
    if os.geteuid() == 0 or boundary().kind != "same user":
        return None
    exposed = credentials_in(environ, reviewer_keys)
    if not exposed:
        return None
    return (f"the verify would run the branch's code as this same user without namespaces while "
            f"{', '.join(exposed)} {'is' if len(exposed) == 1 else 'are'} in the job's environment (a process of this "
            "user can read it from /proc); use the container action, run the gate as root, or run the verify in a "
            "job without secrets; or accept this with --allow-verify-without-isolation (action input "
            "allow-verify-without-isolation); nothing was started.")


def run_verify(
    manifest: Manifest,
    *,
    repo: Path,
    output_dir: Path,
    ci: CiContext,
    stdout: TextIO,
    environ: Mapping[str, str] | None = None,
    grant: SecretGrant | None = None,
    log_limit: int = DEFAULT_LOG_LIMIT,
    leave_out: tuple[Path, ...] = (),
    allow_without_isolation: bool = False,
) -> VerifyOutcome:
    """Run the manifest on a copy of `repo` (less `.git`, the output dir and `leave_out`) as the
    verify's own principal (verify/principal.py); logs in `<output_dir>/verify/`, streamed to
    `stdout`. Without a `grant`, the manifest's own `secrets` are granted (a local run by name).
    `allow_without_isolation`: run even with no boundary while the job holds credentials."""
    env = os.environ if environ is None else environ
    grant = grant or SecretGrant(granted=frozenset(manifest.secrets))
    started = time.monotonic()
    secret_names = passed_secret_names(manifest, grant)
    masker = SecretMasker(env.get(name, "") for name in secret_names)
    ci_log = CiLog(stdout, ci, masker)
    problem = check_preconditions(manifest, grant, env) or \
        (None if allow_without_isolation else exposed_without_isolation(env, grant.reviewer_keys))
    if problem is not None:
        ci_log.line(f"verify: blocked: {problem}")
        return VerifyOutcome(
            status=VerifyStatus.BLOCKED,
            reason=problem,
            manifest=manifest.source,
            duration_seconds=time.monotonic() - started,
            notes=grant.notes,
        )
    log_dir = output_dir / LOG_DIRECTORY
    _clear_old_logs(log_dir)
    try:
        with Cancellation().handling_signals() as cancellation, \
                verify_sandbox(repo, (output_dir, *leave_out)) as sandbox:
            verify = VerifyRun(manifest, repo, log_dir, ci_log, masker, env, secret_names, cancellation, sandbox,
                             log_limit)
            try:
                verify.stand_up_and_test()
            finally:
                verify.teardown()
            outcome = verify.outcome(time.monotonic() - started)
    except OSError as error:
        if error.errno not in _DISK_ERRORS:
            raise
        ci_log.line(f"verify: blocked: {error.strerror}")
        outcome = _disk_trouble(error, manifest, started)
    return outcome._replace(notes=(*grant.notes, *outcome.notes))
