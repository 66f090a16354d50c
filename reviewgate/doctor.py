"""`reviewgate doctor`: is this gate able to run here? One line per check, one per problem.

Checks: the config parses, the git repository and the base resolve, the GitHub workflows that run
the gate check out the history and grant the permissions it needs, and for each
configured reviewer: the key variable is set, the endpoint answers, the model is known (a
cheap call that costs no generation where the API allows it), and, with `independent = true`,
that the reviewer is not configured like the `[implementer]` that wrote the code (seed 001:
doctor rejects "identical reviewer/implementer configurations when independence is required").
Exit 0 when all is well, 2 for configuration problems, 3 when a reviewer cannot be reached.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from reviewgate.ci import detect
from reviewgate.ci.workflow_check import check_workflows
from reviewgate.config import (
    CONFIG_FILE,
    Config,
    Overrides,
    ReviewerSettings,
    TableReader,
    apply_overrides,
)
from reviewgate.errors import EXIT_APPROVED, EXIT_BLOCKED, EXIT_USAGE, ReviewgateError
from reviewgate.escaping import runner_line
from reviewgate.forge.doctor_checks import check_forge
from reviewgate.policy.source import PolicyOrigin, bundle_policy, commit_side, policy_at
from reviewgate.reviewers import anthropic, missing_settings, openai, providers
from reviewgate.reviewers.builtin.process import reproduction_rule_line
from reviewgate.reviewers.model.http import RetryPolicy, TransportBlocked, get_json, post_json
from reviewgate.reviewers.model.options import ModelOptions, parse_options
from reviewgate.reviewers.model.verification import verifier_settings
from reviewgate.target.freeze import resolve_base
from reviewgate.target.git import repository_root, resolve_commit, run_git
from reviewgate.target.shallow import branches_note
from reviewgate.text import printable

IMPLEMENTER_KEYS = ("provider", "model", "base_url")
MODEL_PROVIDERS = ("openai", "anthropic", "command")


@dataclass(frozen=True)
class DoctorOptions:
    start: Path = Path(".")
    base: str | None = None
    config_path: Path | None = None
    reviewers: tuple[str, ...] | None = None


@dataclass
class DoctorReport:
    """Problems by kind: configuration ones exit 2, unreachable reviewers exit 3."""

    out: TextIO
    config_problems: int = 0
    reach_problems: int = 0

    def ok(self, text: str) -> None:
        self.out.write(f"ok: {runner_line(text)}\n")

    def config(self, text: str) -> None:
        self.config_problems += 1
        self.out.write(f"problem: {runner_line(text)}\n")

    def note(self, text: str) -> None:
        """Worth knowing, not a problem: the gate runs as it is."""
        self.out.write(f"note: {runner_line(text)}\n")

    def unreachable(self, text: str) -> None:
        self.reach_problems += 1
        self.out.write(f"problem: {runner_line(text)}\n")

    def exit_code(self) -> int:
        if self.config_problems:
            return EXIT_USAGE
        return EXIT_BLOCKED if self.reach_problems else EXIT_APPROVED


def _key(
    settings: ReviewerSettings, variable: str | None, options: ModelOptions, report: DoctorReport
) -> str | None | bool:
    """The key, None when none is needed, False when it is missing (reported)."""
    if variable is None:
        return None
    key = os.environ.get(variable)
    if key:
        report.ok(f"reviewer {settings.name}: ${variable} is set")
        return key
    if options.on_missing_key == "skip":
        report.ok(
            f"reviewer {settings.name}: ${variable} is not set; it will be skipped (on_missing_key = skip)"
        )
    else:
        report.unreachable(f"reviewer {settings.name}: the key variable ${variable} is not set")
    return False


def _model_ids(data: Any) -> list[str]:
    items = data.get("data") if isinstance(data, dict) else None
    return [str(item.get("id")) for item in items or [] if isinstance(item, dict)]


def _check_openai(
    settings: ReviewerSettings, options: ModelOptions, key: str | None, report: DoctorReport
) -> None:
    headers = openai.headers(options, key)
    url = openai.endpoint(settings, options, "/models")
    status, data = get_json(url, headers, settings.timeout)
    if status in (401, 403):
        report.unreachable(f"reviewer {settings.name}: HTTP {status} from {url}: the key was refused")
    elif status == 200 and settings.model in _model_ids(data):
        report.ok(f"reviewer {settings.name}: {url} lists model {settings.model}")
    elif status == 200 and _model_ids(data):
        report.unreachable(f"reviewer {settings.name}: {url} does not list model {settings.model!r}")
    else:  # no model list here (Azure deployments, some proxies): one token of generation instead
        body = {
            "model": settings.model,
            "messages": [{"role": "user", "content": "ping"}],
            options.max_tokens_parameter: 1,
        }
        chat = openai.endpoint(settings, options, "/chat/completions")
        try:
            post_json(
                chat,
                headers,
                body,
                timeout=settings.timeout,
                policy=RetryPolicy(0),
                key_variable=openai.key_variable(settings),
            )
        except TransportBlocked as error:
            report.unreachable(f"reviewer {settings.name}: {error}")
        else:
            report.ok(f"reviewer {settings.name}: {chat} answers for model {settings.model}")


def _check_anthropic(
    settings: ReviewerSettings, options: ModelOptions, key: str | None, report: DoctorReport
) -> None:
    url = anthropic.endpoint(settings, f"/v1/models/{settings.model}")
    status, _ = get_json(url, anthropic.headers(options, key), settings.timeout)
    if status == 200:
        report.ok(f"reviewer {settings.name}: model {settings.model} is known at {url}")
    elif status == 404:
        report.unreachable(
            f"reviewer {settings.name}: model {settings.model!r} is unknown (HTTP 404 from {url})"
        )
    else:
        report.unreachable(f"reviewer {settings.name}: HTTP {status} from {url}")


def _check_command(settings: ReviewerSettings, options: ModelOptions, report: DoctorReport) -> None:
    program = options.command[0]
    if shutil.which(program) is None:
        report.unreachable(f"reviewer {settings.name}: command {program!r} is not found or not executable")
    else:
        report.ok(f"reviewer {settings.name}: command {program!r} found")


def _check_independence(config: Config, settings: ReviewerSettings, report: DoctorReport) -> None:
    table: Mapping[str, Any] = config.sections.get("implementer", {})
    reader = TableReader(config.source or CONFIG_FILE, "implementer.", table)
    reader.warn_unknown(IMPLEMENTER_KEYS)
    implementer = {key: reader.string(key, None) for key in IMPLEMENTER_KEYS}
    if not implementer["model"]:
        report.config(
            f"reviewer {settings.name}: independent = true, but no [implementer] table names the "
            "implementer's provider and model to compare with"
        )
        return
    mine = {"provider": settings.provider, "model": settings.model, "base_url": settings.base_url}
    if all(implementer[key] in (None, mine[key]) for key in IMPLEMENTER_KEYS):
        report.config(
            f"reviewer {settings.name}: configured like the implementer ({settings.provider} "
            f"{settings.model}); an independent reviewer must differ from what wrote the code"
        )
    else:
        report.ok(f"reviewer {settings.name}: differs from the implementer ({implementer['model']})")


def _check_reviewer(config: Config, name: str, report: DoctorReport) -> None:
    settings = config.reviewer(name)
    factory = providers.get(settings.provider)
    if factory is None:
        report.config(
            f"reviewer {name}: unknown provider {settings.provider!r}; "
            f"expected one of {', '.join(sorted(providers))}"
        )
        return
    missing = missing_settings(config, name)
    if missing is not None:
        report.config(str(missing))
        return
    try:
        options = parse_options(settings) if settings.provider in MODEL_PROVIDERS else None
        if options is None:
            factory(settings)
    except ReviewgateError as error:
        report.config(str(error))
        return
    if options is None:
        report.ok(f"reviewer {name}: {settings.provider}, needs no key and no network")
        return
    if options.independent:
        _check_independence(config, settings, report)
    if options.verify_findings and options.verifier not in (None, name):
        assert options.verifier is not None
        try:  # the reviewer that takes the second look must exist and be reachable too
            verifier_settings(config, settings, options.verifier)
        except ReviewgateError as error:
            report.config(str(error))
            return
        if options.verifier not in config.review.reviewers:
            _check_reviewer(config, options.verifier, report)
    variable = {"openai": openai.key_variable, "anthropic": anthropic.key_variable}.get(
        settings.provider, lambda item: item.api_key_env or None
    )(settings)
    key = _key(settings, variable, options, report)
    if key is False:
        return
    assert key is None or isinstance(key, str)
    try:
        if settings.provider == "openai":
            _check_openai(settings, options, key, report)
        elif settings.provider == "anthropic":
            _check_anthropic(settings, options, key, report)
        else:
            _check_command(settings, options, report)
    except TransportBlocked as error:
        report.unreachable(f"reviewer {name}: {printable(str(error))}")


def _policy(repo: Path, explicit: Path | None, base_sha: str | None) -> tuple[Config, PolicyOrigin]:
    """The config a run would use: the one at the merge base of the base and HEAD (no fetching
    here; without a merge base, at the base itself). Without a base, the working tree's."""
    head_sha = resolve_commit(repo, "HEAD")
    if base_sha is None or head_sha is None:
        return bundle_policy(repo, explicit)
    found = run_git(repo, "merge-base", base_sha, head_sha, check=False).stdout.decode("ascii", "replace").strip()
    merge_base = found or base_sha
    return policy_at(repo, explicit, commit_side(repo, merge_base, "merge base"), commit_side(repo, head_sha, "head"))


def run_doctor(options: DoctorOptions, out: TextIO, environ: Mapping[str, str] | None = None) -> int:
    report = DoctorReport(out)
    try:
        repo = repository_root(options.start)
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
        file_config, origin = _policy(repo, options.config_path, base_sha)
        config = apply_overrides(file_config, Overrides(reviewers=options.reviewers))
    except ReviewgateError as error:
        report.config(str(error))
        return report.exit_code()
    report.ok(f"config {config.source or '(defaults: no config file)'} parses; {origin.describe()}")
    for name in config.review.reviewers:
        _check_reviewer(config, name, report)
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
    return report.exit_code()
