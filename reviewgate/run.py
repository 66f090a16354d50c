"""One gate run: freeze, verify, review, decide, publish. Each stage hands a plain record on."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from reviewgate import ci, progress, stopping
from reviewgate.cache_trust import ReviewCache
from reviewgate.config import Config
from reviewgate.context import Rejection, ReviewRequest, ReviewScope
from reviewgate.errors import EXIT_BLOCKED, ReviewgateError, UsageError
from reviewgate.escaping import runner_line
from reviewgate.findings import Finding, one_per_place, sort_key
from reviewgate.forge.steps import (
    abandon_check_run,
    apply_conversation,
    builtin_sources,
    conversation_notes,
    decide_rounds_for,
    rounds_notes,
)
from reviewgate.freeze.bundle import workspace_root
from reviewgate.freeze.freeze import FrozenTarget, freeze, reader_for
from reviewgate.freeze.git import GitFailure, repository_root
from reviewgate.gate import decide, unread_files
from reviewgate.own_directories import in_repository
from reviewgate.policy.changes import PolicyReview
from reviewgate.policy.confidence import apply_min_confidence
from reviewgate.policy.suppressions import apply_suppression_policy
from reviewgate.report import publish
from reviewgate.report.files import VERIFY_LOG_DIRECTORY, claim_existing_output_dir, prepare_output_dir
from reviewgate.result import GateResult
from reviewgate.review_cache import open_review_cache, review_with_cache
from reviewgate.review_stage import (
    CANCELLED_PUBLISH_SECONDS,
    cancelled_outcomes,
    cancelled_reason,
    review_all,
)
from reviewgate.reviewers import build_reviewers
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin import BuiltinReviewer
from reviewgate.reviewers.builtin.fix_marker import is_marked_as_fix
from reviewgate.reviewers.builtin.settings import check_lens_settings
from reviewgate.run_options import RunOptions, freeze_target, load_policy, load_run_config, review_policy
from reviewgate.text import printable
from reviewgate.verify.cancellation import Cancellation
from reviewgate.verify.outcome import ABSENT, VerifyOutcome
from reviewgate.verify.stage import verify_repository
from reviewgate.workspace_owner import give_tree_to_owner

if TYPE_CHECKING:
    from reviewgate.forge.conversation import Acceptance
    from reviewgate.forge.session import ForgeRun
    from reviewgate.sharding.plan import ShardSpec


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


def merge_findings(outcomes: tuple[ReviewerOutcome, ...], verify: VerifyOutcome,
                   extra: tuple[Finding, ...] = ()) -> tuple[Finding, ...]:
    merged = one_per_place((*verify.findings, *(item for outcome in outcomes for item in outcome.findings), *extra))
    return tuple(sorted(merged, key=sort_key))


def run_gate(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    """SIGTERM/SIGINT at any stage end the gate `blocked` (exit 3) with a complete report for
    this head: the verify tears down (verify/runner.py), the review stops (review_stage.py)."""
    stopping.reset()
    with Cancellation().handling_signals() as cancellation:
        if options.shard is None:
            return _run_gate(options, stdout, environ, cancellation)
        started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        # The repository's output dir, where the shard's report would have gone; outside a
        # repository the error itself is the report, written where the user pointed.
        root: Path | None
        try:
            root = workspace_root(options.start, False)
            output_dir = in_repository(root, options.output_dir)
        except (ReviewgateError, GitFailure):
            root, output_dir = None, options.output_dir
        from reviewgate.sharding.shard_run import failure_reported  # the shard modules: only with --shard

        with failure_reported(output_dir, options.shard, started_at, root):
            return _run_gate(options, stdout, environ, cancellation)


def _run_gate(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None,
              cancellation: Cancellation) -> int:
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    timings: dict[str, float] = {}
    clock = time.monotonic()
    progress.stage("freeze")
    repo = workspace_root(options.start, bool(options.bundle))
    # First: the lock, and no output of an earlier run left to pass for this one's.
    requested_output_dir = in_repository(repo, options.output_dir)
    claim_existing_output_dir(requested_output_dir, repo)
    if options.shard is not None:
        from reviewgate.sharding.shard_report import remove_shard_reports  # only with --shard

        remove_shard_reports(requested_output_dir)
    context = ci.detect(environ)
    # The policy is the target side's: base and head are resolved before anything else.
    policy = load_policy(repo, options, context)
    config = policy.config
    reviewers = build_reviewers(config)
    check_lens_settings(config)
    if options.overrides.import_sarif or options.overrides.sarif_filter is not None:
        from reviewgate.reviewers.sarif_import import build_sarif_importers  # only with --import-sarif

        reviewers += build_sarif_importers(config, options.overrides.import_sarif, options.overrides.sarif_filter,
                                           repo)
    output_dir = prepare_output_dir(requested_output_dir, repo)
    cache = open_review_cache(config, repo, os.environ if environ is None else environ)

    target = freeze_target(repo, policy, options)
    policy_review = review_policy(policy)
    timings["freeze"] = time.monotonic() - clock

    # The check run goes in_progress before the verify, which can take minutes.
    # A shard posts nothing: it reads the conversation for its reviewers, the merge publishes.
    forge = _open_forge(context, config, target, os.environ if environ is None else environ,
                        read_only=options.shard is not None)
    try:
        return _verify_review_publish(
            options, repo, config, reviewers, context, output_dir, cache, target, forge, policy_review,
            started_at=started_at, timings=timings, stdout=stdout, environ=environ, cancellation=cancellation,
        )
    except BaseException as error:
        abandon_check_run(forge, f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
        raise


def _open_forge(context: ci.CiContext, config: Config, target: FrozenTarget, environ: Mapping[str, str], *,
                read_only: bool) -> ForgeRun | None:
    """The forge clients are imported only on a forge: a local run never loads them."""
    if not (context.is_github or context.is_gitlab):
        return None
    from reviewgate.forge.session import open_forge

    return open_forge(context, config, target, environ, read_only=read_only)


def _verify_review_publish(
    options: RunOptions,
    repo: Path,
    config: Config,
    reviewers: list[Reviewer],
    context: ci.CiContext,
    output_dir: Path,
    cache: ReviewCache,
    target: FrozenTarget,
    forge: ForgeRun | None,
    policy: PolicyReview,
    *,
    started_at: str,
    timings: dict[str, float],
    stdout: TextIO,
    environ: Mapping[str, str] | None,
    cancellation: Cancellation,
) -> int:
    notes = run_notes(config, forge, policy)
    if cache.refused:
        notes.append(f"{cache.refused[0].upper()}{cache.refused[1:]}.")
    clock = time.monotonic()
    verify: VerifyOutcome = ABSENT
    shard = options.shard
    if cancellation.cancelled:  # the signal came while freezing: nothing else starts
        outcomes = cancelled_outcomes(reviewers, cancelled_reason(cancellation))
        if shard is not None:
            return _write_shard(output_dir, shard, started_at, target, outcomes, None, timings, stdout,
                                cancelled=True)
        if forge is not None:
            forge.budget.limit(CANCELLED_PUBLISH_SECONDS)
        return publish_result(
            target=target, config=config, context=context, verify=verify, outcomes=outcomes,
            output_dir=output_dir, started_at=started_at, timings=timings, notes=tuple(notes),
            stdout=stdout, forge=forge, policy=policy,
        )
    # The verify runs once: in a shard, only in the one doing the whole-change work.
    if target.mode != "bundle" and (shard is None or shard.whole_change):
        progress.stage("verify")
        verify = verify_repository(repo, config, output_dir=output_dir, ci=context, stdout=stdout,
                                   environ=environ, grant_commit=target.merge_base,
                                   guarded_commits=(target.head_sha, target.merge_base),
                                   leave_out=(cache.directory,) if cache.directory else (),
                                   allow_without_isolation=options.allow_verify_without_isolation)
        give_tree_to_owner(output_dir / VERIFY_LOG_DIRECTORY)
    timings["verify"] = time.monotonic() - clock
    marked_as_fix = target.mode != "bundle" and is_marked_as_fix(
        repo, target.head_sha, options.head or "HEAD", branch=context.head_branch)
    request = ReviewRequest(target=target, head=reader_for(target), verify=verify,
                            sections=config.sections, marked_as_fix=marked_as_fix,
                            instructions=config.review.instructions,
                            scope=_shard_scope(target, shard), cache=cache)
    request = apply_conversation(request, forge)
    clock = time.monotonic()
    if verify.cancelled:
        # CI cancelled the job during the verify: teardown ran, the gate stops here, blocked.
        outcomes = tuple(
            ReviewerOutcome(reviewer.name, ReviewerStatus.SKIPPED, reason="the gate was cancelled")
            for reviewer in reviewers
        )
    elif verify.tampered:
        # The branch's code rewrote the gate's store or installation: nothing read from it now counts.
        outcomes = tuple(
            ReviewerOutcome(reviewer.name, ReviewerStatus.SKIPPED,
                            reason="not run: the verify changed the gate's own files")
            for reviewer in reviewers
        )
    elif target.is_empty:
        notes.append(_empty_change_note(target))
        outcomes = tuple(
            ReviewerOutcome(reviewer.name, ReviewerStatus.SKIPPED, reason="empty change") for reviewer in reviewers
        )
    else:
        progress.stage("review", len(target.files))
        outcomes = review_all(reviewers, _reviewing(cache, request, shard), cancellation)
    timings["review"] = time.monotonic() - clock
    if shard is not None:
        return _write_shard(output_dir, shard, started_at, target, outcomes,
                            verify if shard.whole_change else None, timings, stdout,
                            cancelled=cancellation.cancelled or verify.cancelled)
    if forge is not None and (cancellation.cancelled or verify.cancelled):
        forge.budget.limit(CANCELLED_PUBLISH_SECONDS)  # the runner kills the job seconds after

    readers = [reviewer.name for reviewer in reviewers if isinstance(reviewer, BuiltinReviewer)]
    return publish_result(
        target=target, config=config, context=context, verify=verify, outcomes=outcomes,
        output_dir=output_dir,
        started_at=started_at, timings=timings, notes=tuple(notes), stdout=stdout,
        forge=forge, rejections=request.rejections, policy=policy,
        unread=unread_files([change.path for change in target.oversized], outcomes, readers),
    )


def _empty_change_note(target: FrozenTarget) -> str:
    """Why there is nothing to review. A head the base already holds is most often the first push
    of a new repository (or of the default branch itself): say that nothing was reviewed, not
    only that nothing blocks."""
    if target.merge_base == target.head_sha:
        return (f"Base and head have the same content: there is nothing to review. The head {target.head_sha[:12]} "
                f"is already part of the base {printable(target.base_ref)} (from {printable(target.base_source)}), "
                "as on the first push of a new repository or of the default branch: nothing was reviewed.")
    return "Base and head have the same content: there is nothing to review."


def run_notes(config: Config, forge: ForgeRun | None, policy: PolicyReview) -> list[str]:
    """What the summary says about the policy and the conversation, before any review."""
    notes: list[str] = [*policy.notes, *conversation_notes(forge)]
    if not config.review.fail_on:
        notes.append("Report-only (fail-on none): every finding is reported and none blocks; a review "
                     "that could not be done is still blocked.")
    return notes


def _shard_scope(target: FrozenTarget, shard: ShardSpec | None) -> ReviewScope | None:
    if shard is None:
        return None
    from reviewgate.sharding.plan import plan_shards  # the shard modules: only with --shard

    return plan_shards(target, shard.total).scope(shard)


def _reviewing(cache: ReviewCache, request: ReviewRequest,
               shard: ShardSpec | None) -> Callable[[Reviewer], ReviewerOutcome]:
    """How each reviewer runs: through the cache, and in a shard only where the shard owns it."""
    if shard is None:
        return lambda reviewer: review_with_cache(cache, reviewer, request, run_reviewer)
    from reviewgate.sharding.shard_run import elsewhere, runs_here  # only with --shard

    return lambda reviewer: (review_with_cache(cache, reviewer, request, run_reviewer)
                             if runs_here(reviewer, request) else elsewhere(reviewer, shard))


def _write_shard(output_dir: Path, shard: ShardSpec, started_at: str, target: FrozenTarget,
                 outcomes: tuple[ReviewerOutcome, ...], verify: VerifyOutcome | None,
                 timings: dict[str, float], stdout: TextIO, *, cancelled: bool = False) -> int:
    """A shard's end: its report, nothing published, exit 0: the merge decides, and a shard whose
    reviewers were blocked says so in the report, which makes the merge block. A cancelled shard
    could not finish: its report says so too, and it exits 3. The log says which part it took."""
    from reviewgate.sharding.plan import plan_shards  # the shard modules: only with --shard
    from reviewgate.sharding.shard_report import write_shard_report
    from reviewgate.sharding.shard_run import shard_lines

    plan = plan_shards(target, shard.total)
    report = write_shard_report(output_dir, shard, started_at=started_at, target=target,
                                plan=plan, outcomes=outcomes, verify=verify, timings=timings)
    lines = shard_lines(shard, target, plan.paths(shard), outcomes, report, cancelled=cancelled)
    stdout.write("".join(f"{runner_line(line)}\n" for line in lines))
    return EXIT_BLOCKED if cancelled else 0


def publish_result(
    *,
    target: FrozenTarget,
    config: Config,
    context: ci.CiContext,
    verify: VerifyOutcome,
    outcomes: tuple[ReviewerOutcome, ...],
    output_dir: Path,
    started_at: str,
    timings: dict[str, float],
    notes: tuple[str, ...],
    stdout: TextIO,
    forge: ForgeRun | None = None,
    rejections: tuple[Rejection, ...] = (),
    policy: PolicyReview | None = None,
    unread: tuple[str, ...] = (),
    incomplete: tuple[str, ...] = (),
) -> int:
    """Decide and publish through every sink; the exit code of the verdict. `incomplete`: why
    the review is not whole (a merge's refused or missing shards): each one blocks."""
    findings = merge_findings(outcomes, verify, policy.findings if policy else ())
    findings = apply_min_confidence(findings, config.review.min_confidence)
    # The forge's conversation is read only on a forge: a local run has no answers to apply.
    if rejections:
        from reviewgate.forge.conversation import apply_rejections

        findings = apply_rejections(findings, rejections, builtin_sources(config))
    findings, branch_suppressions = apply_suppression_policy(
        findings, config.review.branch_suppressions, config.review.fail_on)
    # A trusted person's ACCEPTED: is the last word on a finding, whichever reviewer found it.
    acceptances: tuple[Acceptance, ...] = ()
    if forge is not None:
        from reviewgate.forge.conversation import apply_acceptances, first_acceptances

        acceptances = first_acceptances(forge.conversation.acceptances)
        findings = apply_acceptances(findings, acceptances)
    verdict = decide(findings, outcomes, verify, config.review.fail_on, nothing_to_review=target.is_empty,
                     unread=(*unread, *incomplete))
    rounds = decide_rounds_for(forge, target, verdict, config.review.max_rounds)
    result = GateResult(
        target=target, config=config, ci=context, verify=verify, outcomes=outcomes, findings=findings,
        verdict=verdict, output_dir=output_dir, started_at=started_at, timings=timings,
        notes=(*notes, *rounds_notes(forge, rounds)), forge=forge, rounds=rounds, policy=policy,
        acceptances=acceptances, branch_suppressions=branch_suppressions,
    )
    publish(result, stdout)
    return verdict.exit_code


def run_verify_only(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    """`reviewgate verify`: the verify alone, with the gate's outputs and exit codes. The
    result is bound to HEAD (nothing is diffed); the verify runs even when the config
    disables it for `run`, since it was asked for by name."""
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    repo = repository_root(options.start)
    requested_output_dir = in_repository(repo, options.output_dir)
    claim_existing_output_dir(requested_output_dir, repo)
    config = load_run_config(repo, options)
    config = replace(config, verify=replace(config.verify, enabled=True))
    if not (repo / config.verify.manifest).is_file():
        # Asked for by name, an absent verify must not read as "passed" (a VERIFY: reply would).
        raise UsageError(f"verify: no manifest at {config.verify.manifest} "
                         "(add .prepcook/scripts.toml, or set [verify] manifest)")
    context = ci.detect(environ)
    output_dir = prepare_output_dir(requested_output_dir, repo)
    target = freeze(repo, base="HEAD", head="HEAD", ci=context)
    # --base REF: secrets are granted by the manifest at the merge base with REF, as in `run`;
    # without it, by the working-tree manifest (a local run of one's own checkout).
    grant_commit = freeze(repo, base=options.base, head="HEAD", ci=context).merge_base if options.base else None
    clock = time.monotonic()
    verify = verify_repository(repo, config, output_dir=output_dir, ci=context, stdout=stdout,
                               environ=environ, grant_commit=grant_commit,
                               allow_without_isolation=options.allow_verify_without_isolation)
    give_tree_to_owner(output_dir / VERIFY_LOG_DIRECTORY)
    return publish_result(
        target=target, config=config, context=context, verify=verify, outcomes=(), output_dir=output_dir,
        started_at=started_at, timings={"verify": time.monotonic() - clock},
        notes=("reviewgate verify: the verify only, no reviewer ran.",), stdout=stdout,
    )
