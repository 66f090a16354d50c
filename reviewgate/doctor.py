"""`reviewgate doctor`: is this gate able to run here? One line per check, one per problem.

Checks: the config parses, the git repository and the base resolve, the GitHub workflows that run
the gate check out the history and grant the permissions it needs, and for each
configured reviewer (doctor_reviewers.py): the key variable is set, the endpoint answers, the model is known (a
cheap call that costs no generation where the API allows it), what a Chat Completions server
other than OpenAI's own takes (one request capped at 16 tokens: the structured form, and whether
the cap is honoured), options the model will refuse (`temperature` on a reasoning model,
`reasoning_effort` on one that does not reason), and, with `independent = true`,
that the reviewer is not configured like the `[implementer]` that wrote the code (doctor
rejects identical reviewer and implementer configurations when independence is required).
Exit 0 when all is well, 2 for configuration problems, 3 when a reviewer cannot be reached.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from reviewgate.ci import detect
from reviewgate.ci.workflow_check import check_workflows
from reviewgate.config import (
    Config,
    Overrides,
    apply_overrides,
)
from reviewgate.doctor_report import DoctorReport
from reviewgate.doctor_reviewers import check_reviewer
from reviewgate.errors import BlockedError, ReviewgateError
from reviewgate.forge.doctor_checks import check_forge
from reviewgate.freeze.freeze import resolve_base
from reviewgate.freeze.git import repository_root, resolve_commit, run_git
from reviewgate.freeze.shallow import branches_note
from reviewgate.policy.source import PolicyOrigin, bundle_policy, commit_side, policy_at, uncommitted_config
from reviewgate.reviewers.builtin.lenses.process import reproduction_rule_line
from reviewgate.text import printable


@dataclass(frozen=True)
class DoctorOptions:
    start: Path = Path(".")
    base: str | None = None
    config_path: Path | None = None
    reviewers: tuple[str, ...] | None = None


def _policy(repo: Path, explicit: Path | None, base_sha: str | None, base_ref: str,
            *, local: bool) -> tuple[Config, PolicyOrigin, str | None]:
    """The config a run would use: the one at the merge base of the base and HEAD (no fetching
    here; without a merge base, at the base itself). Without a base, the working tree's. Last,
    the line about a working-tree config that is not that one (policy/source.py, uncommitted_config)."""
    head_sha = resolve_commit(repo, "HEAD")
    if base_sha is None or head_sha is None:
        return (*bundle_policy(repo, explicit), None)
    found = run_git(repo, "merge-base", base_sha, head_sha, check=False).stdout.decode("ascii", "replace").strip()
    base_side = commit_side(repo, found or base_sha, "merge base")
    config, origin = policy_at(repo, explicit, base_side, commit_side(repo, head_sha, "head"))
    # Local runs only, as in a run (run_options.load_policy): in CI the working tree is the branch's.
    return config, origin, uncommitted_config(repo, explicit, base_side, origin, base_ref) if local else None


def run_doctor(options: DoctorOptions, out: TextIO, environ: Mapping[str, str] | None = None) -> int:
    report = DoctorReport(out)
    try:
        repo = repository_root(options.start)
    except BlockedError as error:  # git itself is missing: the gate cannot run here (exit 3)
        report.unreachable(str(error))
        return report.exit_code()
    except ReviewgateError as error:
        report.config(str(error))
        return report.exit_code()
    report.ok(f"git repository at {printable(str(repo))}")
    context = detect(environ)
    base_ref, source = resolve_base(repo, options.base, context)
    base_sha = resolve_commit(repo, base_ref)
    if base_sha is None:
        report.config(f"base {base_ref!r} (from {source}) does not name a commit; {branches_note(repo)}")
    else:
        report.ok(f"base {base_ref} (from {source}) resolves")
    try:
        file_config, origin, uncommitted = _policy(repo, options.config_path, base_sha, base_ref,
                                                   local=context.provider == "local")
        config = apply_overrides(file_config, Overrides(reviewers=options.reviewers))
    except ReviewgateError as error:
        report.config(str(error))
        return report.exit_code()
    report.ok(f"config {config.source or '(defaults: no config file in force)'} parses; {origin.describe()}")
    if uncommitted is not None:
        report.note(uncommitted)
    for name in config.review.reviewers:
        check_reviewer(config, name, report)
    try:  # the opt-in directory as the base has it, as the reviews will see it
        report.note(reproduction_rule_line(repo, resolve_commit(repo, base_ref) or "HEAD", config))
    except ReviewgateError as error:
        report.config(str(error))
    try:
        check_forge(context, config, os.environ if environ is None else environ,
                    ok=report.ok, note=report.note, problem=report.unreachable)
    except ReviewgateError as error:
        report.config(str(error))
    check_workflows(repo, ok=report.ok, note=report.note, problem=report.config)
    if config.verify.enabled and (repo / config.verify.manifest).is_file():
        _check_verify_boundary(repo, report)
    return report.exit_code()


def _check_verify_boundary(repo: Path, report: DoctorReport) -> None:
    """Who the verify will run the branch's code as, and what that leaves within its reach."""
    from reviewgate.verify.principal import expected_boundary, same_user_limits

    report.ok(f"verify boundary: {expected_boundary()}")
    for limit in same_user_limits():
        report.note(f"verify boundary: {limit}")
    if os.geteuid() != 0 and expected_boundary().startswith("same user"):
        report.note("verify boundary: none, so a job whose environment holds a forge token, a reviewer's key or "
                    "the cache key has its verify blocked (exit 3) unless the workflow passes "
                    "--allow-verify-without-isolation (action input allow-verify-without-isolation)")
    if os.geteuid() != 0 and _holds_credentials(repo / ".git" / "config"):
        report.note("verify boundary: .git/config holds a credential (actions/checkout's persist-credentials, or a "
                    "token in a remote URL) that the verify, run as this user, can read: set persist-credentials: "
                    "false, or run the gate as root (the container action)")


def _holds_credentials(config: Path) -> bool:
    try:
        text = config.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return re.search(r"extraheader|://[^/\s@]+@", text) is not None
