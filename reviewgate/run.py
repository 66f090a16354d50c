"""One gate run: freeze, verify, review, decide, publish. Each stage hands a plain record on:
the freeze a `RunFrame`, the verify and the review a `Reviewed`, which the verdict stage
(verdict_stage.py) decides and publishes. A shard (sharding/shard_run.py) runs the same stages
over its part of the change and writes a shard report instead of publishing."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO

from reviewgate import ci, progress, stopping
from reviewgate.cache_trust import ReviewCache
from reviewgate.config import Config
from reviewgate.context import ReviewRequest, ReviewScope
from reviewgate.errors import UsageError
from reviewgate.forge.steps import apply_conversation
from reviewgate.freeze.bundle import workspace_root
from reviewgate.freeze.freeze import FrozenTarget, freeze, reader_for
from reviewgate.freeze.git import repository_root
from reviewgate.gate import unread_files
from reviewgate.own_directories import in_repository
from reviewgate.report.files import VERIFY_LOG_DIRECTORY, claim_existing_output_dir, prepare_output_dir
from reviewgate.review_cache import open_review_cache, review_with_cache
from reviewgate.review_stage import CANCELLED_PUBLISH_SECONDS, cancelled_outcomes, cancelled_reason, review_all
from reviewgate.reviewers import build_reviewers
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin import BuiltinReviewer
from reviewgate.reviewers.builtin.fix_marker import is_marked_as_fix
from reviewgate.reviewers.builtin.settings import check_lens_settings
from reviewgate.run_options import RunOptions, freeze_target, load_policy, load_run_config, review_policy
from reviewgate.text import printable
from reviewgate.verdict_stage import GateRun, Reviewed, check_run_abandoned_on_error, publish_result, run_notes
from reviewgate.verify.cancellation import Cancellation
from reviewgate.verify.outcome import ABSENT, VerifyOutcome
from reviewgate.verify.stage import verify_repository
from reviewgate.workspace_owner import give_tree_to_owner

if TYPE_CHECKING:
    from reviewgate.forge.session import ForgeRun

# An outcome for a reviewer that does not run in this process (a shard's whole-change reviewers,
# in the shard that does that work), or None when it runs here.
ReviewedElsewhere = Callable[[Reviewer, ReviewRequest], "ReviewerOutcome | None"]


class RunFrame(NamedTuple):
    """One run once its change is frozen: what the verify and the review read, fixed from here on."""

    gate: GateRun
    options: RunOptions
    repo: Path
    reviewers: tuple[Reviewer, ...]
    cache: ReviewCache
    notes: tuple[str, ...]  # the policy's, the conversation's and the cache's, before any review
    freeze_seconds: float
    stdout: TextIO
    environ: Mapping[str, str] | None
    cancellation: Cancellation


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


def run_gate(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    """SIGTERM/SIGINT at any stage end the gate `blocked` (exit 3) with a complete report for
    this head: the verify tears down (verify/stand_up.py), the review stops (review_stage.py)."""
    stopping.reset()
    with Cancellation().handling_signals() as cancellation:
        frame = open_run(options, stdout, environ, cancellation)
        with check_run_abandoned_on_error(frame.gate.forge):
            reviewed = review_change(frame)
            forge = frame.gate.forge
            if forge is not None and (cancellation.cancelled or reviewed.verify.cancelled):
                forge.budget.limit(CANCELLED_PUBLISH_SECONDS)  # the runner kills the job seconds after
            return publish_result(frame.gate, reviewed, stdout)


def started_now() -> str:
    """The time in UTC to the second, as `datetime.now(timezone.utc).isoformat(timespec="seconds")`
    writes it, without loading datetime (a module a one-line change's run has no other use for)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def open_run(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None, cancellation: Cancellation,
             *, read_only: bool = False, claimed: Callable[[Path], None] | None = None) -> RunFrame:
    """The freeze stage: the output dir claimed (`claimed` is then called with it, before anything
    can fail on the config), the policy read at the target side, the reviewers built, the change
    frozen, and the forge opened (`read_only`: it reads the conversation, posts nothing)."""
    started_at = started_now()
    clock = time.monotonic()
    progress.stage("freeze")
    repo = workspace_root(options.start, bool(options.bundle))
    # First: the lock, and no output of an earlier run left to pass for this one's.
    requested_output_dir = in_repository(repo, options.output_dir)
    claim_existing_output_dir(requested_output_dir, repo)
    if claimed is not None:
        claimed(requested_output_dir)
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
    variables = os.environ if environ is None else environ
    cache = open_review_cache(config, repo, variables)
    target = freeze_target(repo, policy, options, for_review=True)
    policy_review = review_policy(policy)
    freeze_seconds = time.monotonic() - clock
    # The check run goes in_progress before the verify, which can take minutes.
    forge = _open_forge(context, config, target, variables, read_only=read_only)
    gate = GateRun(target=target, config=config, context=context, output_dir=output_dir, started_at=started_at,
                   forge=forge, policy=policy_review)
    notes = run_notes(config, forge, policy_review)
    if cache.refused:
        notes.append(f"{cache.refused[0].upper()}{cache.refused[1:]}.")
    return RunFrame(gate=gate, options=options, repo=repo, reviewers=tuple(reviewers), cache=cache,
                    notes=tuple(notes), freeze_seconds=freeze_seconds, stdout=stdout, environ=environ,
                    cancellation=cancellation)


def _open_forge(context: ci.CiContext, config: Config, target: FrozenTarget, environ: Mapping[str, str], *,
                read_only: bool) -> ForgeRun | None:
    """The forge clients are imported only on a forge: a local run never loads them."""
    if not (context.is_github or context.is_gitlab):
        return None
    from reviewgate.forge.session import open_forge

    return open_forge(context, config, target, environ, read_only=read_only)


def review_change(frame: RunFrame, *, verify: bool = True, scope: ReviewScope | None = None,
                  reviewed_elsewhere: ReviewedElsewhere | None = None) -> Reviewed:
    """The verify (unless `verify` is false or the change is a bundle), then every reviewer over the
    change (or its `scope`). A signal that came while freezing starts nothing: every reviewer is
    blocked as cancelled."""
    gate, cache = frame.gate, frame.cache
    notes = list(frame.notes)
    timings = {"freeze": frame.freeze_seconds}
    if frame.cancellation.cancelled:
        return Reviewed(verify=ABSENT, timings=timings, notes=tuple(notes),
                        outcomes=cancelled_outcomes(frame.reviewers, cancelled_reason(frame.cancellation)))
    clock = time.monotonic()
    verified = _verify(frame) if verify and gate.target.mode != "bundle" else ABSENT
    timings["verify"] = time.monotonic() - clock
    target = gate.target
    marked_as_fix = target.mode != "bundle" and is_marked_as_fix(
        frame.repo, target.head_sha, frame.options.head or "HEAD", branch=gate.context.head_branch)
    request = ReviewRequest(target=target, head=reader_for(target), verify=verified,
                            sections=gate.config.sections, marked_as_fix=marked_as_fix,
                            instructions=gate.config.review.instructions, scope=scope, cache=cache)
    request = apply_conversation(request, gate.forge)
    clock = time.monotonic()
    outcomes = _review(frame, request, reviewed_elsewhere, notes)
    timings["review"] = time.monotonic() - clock
    readers = [reviewer.name for reviewer in frame.reviewers if isinstance(reviewer, BuiltinReviewer)]
    return Reviewed(verify=verified, outcomes=outcomes, timings=timings, notes=tuple(notes),
                    rejections=request.rejections,
                    unread=unread_files([change.path for change in target.oversized], outcomes, readers))


def _verify(frame: RunFrame) -> VerifyOutcome:
    gate = frame.gate
    progress.stage("verify")
    outcome = verify_repository(frame.repo, gate.config, output_dir=gate.output_dir, ci=gate.context,
                                stdout=frame.stdout, environ=frame.environ, grant_commit=gate.target.merge_base,
                                guarded_commits=(gate.target.head_sha, gate.target.merge_base),
                                leave_out=(frame.cache.directory,) if frame.cache.directory else (),
                                allow_without_isolation=frame.options.allow_verify_without_isolation)
    give_tree_to_owner(gate.output_dir / VERIFY_LOG_DIRECTORY)
    return outcome


def _review(frame: RunFrame, request: ReviewRequest, reviewed_elsewhere: ReviewedElsewhere | None,
            notes: list[str]) -> tuple[ReviewerOutcome, ...]:
    """Every reviewer's outcome; none runs after a cancelled or tampering verify, or on an empty change."""
    target = frame.gate.target
    if request.verify.cancelled:
        # CI cancelled the job during the verify: teardown ran, the gate stops here, blocked.
        return _skipped(frame.reviewers, "the gate was cancelled")
    if request.verify.tampered:
        # The branch's code rewrote the gate's store or installation: nothing read from it now counts.
        return _skipped(frame.reviewers, "not run: the verify changed the gate's own files")
    if target.is_empty:
        notes.append(_empty_change_note(target))
        return _skipped(frame.reviewers, "empty change")
    progress.stage("review", len(target.files))

    def review_one(reviewer: Reviewer) -> ReviewerOutcome:
        outcome = None if reviewed_elsewhere is None else reviewed_elsewhere(reviewer, request)
        if outcome is not None:
            return outcome
        return review_with_cache(frame.cache, reviewer, request, run_reviewer)

    return review_all(frame.reviewers, review_one, frame.cancellation)


def _skipped(reviewers: tuple[Reviewer, ...], reason: str) -> tuple[ReviewerOutcome, ...]:
    return tuple(ReviewerOutcome(reviewer.name, ReviewerStatus.SKIPPED, reason=reason) for reviewer in reviewers)


def _empty_change_note(target: FrozenTarget) -> str:
    """Why there is nothing to review. A head the base already holds is most often the first push
    of a new repository (or of the default branch itself): say that nothing was reviewed, not
    only that nothing blocks."""
    if target.merge_base == target.head_sha:
        return (f"Base and head have the same content: there is nothing to review. The head {target.head_sha[:12]} "
                f"is already part of the base {printable(target.base_ref)} (from {printable(target.base_source)}), "
                "as on the first push of a new repository or of the default branch: nothing was reviewed.")
    return "Base and head have the same content: there is nothing to review."


def run_verify_only(options: RunOptions, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    """`reviewgate verify`: the verify alone, with the gate's outputs and exit codes. The
    result is bound to HEAD (nothing is diffed); the verify runs even when the config
    disables it for `run`, since it was asked for by name."""
    started_at = started_now()
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
    gate = GateRun(target=target, config=config, context=context, output_dir=output_dir, started_at=started_at)
    return publish_result(gate, Reviewed(verify=verify, outcomes=(), timings={"verify": time.monotonic() - clock},
                                         notes=("reviewgate verify: the verify only, no reviewer ran.",)), stdout)
