"""One gate run: freeze, verify, review, decide, publish. Each stage hands a plain record on."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, TextIO

from reviewgate import ci
from reviewgate.config import Config, Overrides, apply_overrides, load_config
from reviewgate.context import ReviewRequest
from reviewgate.exclusions import ExclusionRules
from reviewgate.findings import Finding, sort_key
from reviewgate.gate import decide
from reviewgate.git import TreeReader, repository_root
from reviewgate.report import publish
from reviewgate.report.files import prepare_output_dir
from reviewgate.result import GateResult
from reviewgate.reviewers import build_reviewers
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin.fix_marker import is_marked_as_fix
from reviewgate.reviewers.builtin.settings import check_lens_settings
from reviewgate.reviewers.sarif_import import build_sarif_importers
from reviewgate.target import FrozenTarget, freeze
from reviewgate.verify.outcome import ABSENT, VerifyOutcome


@dataclass(frozen=True)
class RunOptions:
    start: Path = Path(".")
    base: str | None = None
    head: str = "HEAD"
    config_path: Path | None = None
    output_dir: Path = Path(".reviewgate")
    overrides: Overrides = field(default_factory=Overrides)


def load_run_config(repo: Path, options: RunOptions) -> Config:
    return apply_overrides(load_config(repo, options.config_path), options.overrides)


def freeze_target(repo: Path, config: Config, options: RunOptions, context: ci.CiContext) -> FrozenTarget:
    rules = ExclusionRules(exclude=config.review.exclude, include=config.review.include)
    return freeze(repo, base=options.base, head=options.head, ci=context, rules=rules)


def run_reviewer(reviewer: Reviewer, request: ReviewRequest) -> ReviewerOutcome:
    """A reviewer that raises could not review: blocked with the reason, never approval."""
    started = time.monotonic()
    try:
        return reviewer.review(request)
    except Exception as error:  # noqa: BLE001 - any failure of a reviewer blocks, with its reason
        return ReviewerOutcome(
            reviewer=reviewer.name,
            status=ReviewerStatus.BLOCKED,
            reason=f"reviewer failed: {type(error).__name__}: {error}",
            duration_seconds=time.monotonic() - started,
        )


def merge_findings(outcomes: tuple[ReviewerOutcome, ...], verify: VerifyOutcome) -> tuple[Finding, ...]:
    merged: dict[str, Finding] = {}
    for finding in (*verify.findings, *(item for outcome in outcomes for item in outcome.findings)):
        merged.setdefault(finding.id, finding)
    return tuple(sorted(merged.values(), key=sort_key))


def run_gate(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    timings: dict[str, float] = {}
    clock = time.monotonic()
    repo = repository_root(options.start)
    config = load_run_config(repo, options)
    reviewers = build_reviewers(config)
    check_lens_settings(config)
    reviewers += build_sarif_importers(config, options.overrides.import_sarif, options.overrides.sarif_filter, repo)
    context = ci.detect(environ)
    output_dir = prepare_output_dir(options.output_dir)

    target = freeze_target(repo, config, options, context)
    timings["freeze"] = time.monotonic() - clock

    verify: VerifyOutcome = ABSENT
    notes: list[str] = []
    request = ReviewRequest(target=target, head=TreeReader(repo, target.head_sha), verify=verify,
                            sections=config.sections,
                            marked_as_fix=is_marked_as_fix(repo, target.head_sha, options.head))
    clock = time.monotonic()
    if target.is_empty:
        notes.append("Base and head have the same content: there is nothing to review.")
        outcomes = tuple(
            ReviewerOutcome(reviewer.name, ReviewerStatus.SKIPPED, reason="empty change") for reviewer in reviewers
        )
    else:
        outcomes = tuple(run_reviewer(reviewer, request) for reviewer in reviewers)
    timings["review"] = time.monotonic() - clock

    findings = merge_findings(outcomes, verify)
    verdict = decide(findings, outcomes, verify, config.review.fail_on)
    result = GateResult(
        target=target, config=config, ci=context, verify=verify, outcomes=outcomes, findings=findings,
        verdict=verdict, output_dir=output_dir, started_at=started_at, timings=timings, notes=tuple(notes),
    )
    publish(result, stdout)
    return verdict.exit_code
