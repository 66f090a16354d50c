"""`run --shard I/N`: the run's stages (run.py) over one part of the plan, the whole-change work
only in shard 1, and a shard report written instead of publishing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from reviewgate import stopping
from reviewgate.context import ReviewRequest
from reviewgate.errors import EXIT_BLOCKED, ReviewgateError
from reviewgate.escaping import one_line, runner_line
from reviewgate.freeze.bundle import workspace_root
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.freeze.git import GitFailure
from reviewgate.own_directories import in_repository, symlink_on_the_way
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.run import RunFrame, open_run, review_change
from reviewgate.run_options import RunOptions
from reviewgate.sharding.plan import WHOLE_CHANGE_SHARD, ShardSpec, plan_shards
from reviewgate.sharding.shard_report import remove_shard_reports, write_failed_shard_report, write_shard_report
from reviewgate.text import printable, short_sha
from reviewgate.verdict_stage import check_run_abandoned_on_error
from reviewgate.verify.cancellation import Cancellation


def run_shard(options: RunOptions, shard: ShardSpec, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    """A shard's end: its report, nothing published, exit 0: the merge decides, and a shard whose
    reviewers were blocked says so in the report, which makes the merge block. A cancelled shard
    could not finish: its report says so too, and it exits 3. The log says which part it took."""
    stopping.reset()
    with Cancellation().handling_signals() as cancellation:
        started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        # The repository's output dir, where the shard's report would have gone; outside a
        # repository the error itself is the report, written where the user pointed.
        root: Path | None
        try:
            root = workspace_root(options.start, False)
            output_dir = in_repository(root, options.output_dir)
        except (ReviewgateError, GitFailure):
            root, output_dir = None, options.output_dir
        with failure_reported(output_dir, shard, started_at, root):
            # A shard posts nothing: it reads the conversation for its reviewers, the merge publishes.
            frame = open_run(options, stdout, environ, cancellation, read_only=True, claimed=remove_shard_reports)
            with check_run_abandoned_on_error(frame.gate.forge):
                return _review_part(frame, shard, stdout)


def _review_part(frame: RunFrame, shard: ShardSpec, stdout: TextIO) -> int:
    target = frame.gate.target
    plan = plan_shards(target, shard.total)
    cancelled_while_freezing = frame.cancellation.cancelled
    # The verify runs once: only in the shard doing the whole-change work.
    reviewed = review_change(
        frame, verify=shard.whole_change, scope=plan.scope(shard),
        reviewed_elsewhere=lambda reviewer, request: None if runs_here(reviewer, request) else elsewhere(reviewer, shard))
    cancelled = frame.cancellation.cancelled or reviewed.verify.cancelled
    report = write_shard_report(frame.gate.output_dir, shard, started_at=frame.gate.started_at, target=target,
                                plan=plan, outcomes=reviewed.outcomes, timings=reviewed.timings,
                                verify=reviewed.verify if shard.whole_change and not cancelled_while_freezing else None)
    lines = shard_lines(shard, target, plan.paths(shard), reviewed.outcomes, report, cancelled=cancelled)
    stdout.write("".join(f"{runner_line(line)}\n" for line in lines))
    return EXIT_BLOCKED if cancelled else 0


def runs_here(reviewer: Reviewer, request: ReviewRequest) -> bool:
    """A reviewer that cannot split its work by file (imported SARIF, any other) reviews the whole
    change, in the shard that does the whole-change work."""
    return request.whole_change or bool(getattr(reviewer, "reviews_by_file", False))


def elsewhere(reviewer: Reviewer, shard: ShardSpec) -> ReviewerOutcome:
    return ReviewerOutcome(reviewer.name, ReviewerStatus.SKIPPED,
                           reason=f"reviews the whole change, in shard {WHOLE_CHANGE_SHARD}/{shard.total}")


@contextlib.contextmanager
def failure_reported(output_dir: Path, shard: ShardSpec, started_at: str, repo: Path | None) -> Iterator[None]:
    """A shard that could not run still leaves a report saying why, so the merge blocks with the
    reason instead of only missing the shard; the error then ends the command as usual. Never
    through a symlink in the repository `repo` (the run refused that output dir)."""
    try:
        yield
    except BaseException as error:
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        if repo is None or symlink_on_the_way(repo, output_dir) is None:
            with contextlib.suppress(OSError):  # an unwritable output dir: the merge reports it missing
                write_failed_shard_report(output_dir, shard, started_at=started_at, reason=reason)
        raise


def shard_lines(shard: ShardSpec, target: FrozenTarget, paths: tuple[str, ...],
                outcomes: tuple[ReviewerOutcome, ...], report: Path, *, cancelled: bool) -> list[str]:
    """What a shard prints: its part of the change, each reviewer's outcome and where its report
    is; the verdict is the merge's, so none is given here."""
    lines = [f"reviewgate: shard {shard} of {printable(target.base_ref)}...{printable(target.head_ref)} "
             f"(merge-base {short_sha(target.merge_base)}, head {short_sha(target.head_sha)}): "
             f"{len(paths)} of {len(target.files)} file(s) here"
             + (", and the whole-change work" if shard.whole_change else "")]
    for outcome in outcomes:
        detail = f": {one_line(outcome.reason)}" if outcome.reason else ""
        lines.append(f"  reviewer {outcome.reviewer}: {outcome.status.value}{detail} "
                     f"({len(outcome.findings)} finding(s))")
    ending = "cancelled: the report says so and the merge blocks" if cancelled else (
        f"`reviewgate merge` combines the {shard.total} shard reports into the verdict; this shard publishes nothing")
    lines.append(f"shard report: {printable(str(report))}; {ending}")
    return lines
