"""What `run --shard I/N` does differently from a run: review its part of the plan, run the
whole-change work only in shard 1, and write a shard report instead of publishing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from reviewgate.context import ReviewRequest
from reviewgate.escaping import one_line
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.own_directories import symlink_on_the_way
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.sharding.plan import WHOLE_CHANGE_SHARD, ShardSpec
from reviewgate.sharding.shard_report import write_failed_shard_report
from reviewgate.text import printable, short_sha


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
