"""`reviewgate merge DIR...`: the shards' reports into one verdict, published as a run publishes
it (every sink, the check run, the PR comment, step outputs), by the only job that writes.

The merge runs in a checkout of the same change: it reads the policy at the merge base and
freezes the change itself, as a run does, so it can tell a report of this exact change and
plan from one of another head, patch or plan, and publish the outputs a single run would.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from reviewgate import ci
from reviewgate.forge.session import open_forge
from reviewgate.forge.steps import builtin_sources
from reviewgate.freeze.bundle import workspace_root
from reviewgate.gate import unread_files
from reviewgate.report.files import claim_existing_output_dir, prepare_output_dir
from reviewgate.run_options import RunOptions, freeze_target, load_policy, review_policy
from reviewgate.sharding.combine import combine
from reviewgate.sharding.shard_report import load_shard_reports
from reviewgate.verdict_stage import GateRun, Reviewed, check_run_abandoned_on_error, publish_result, run_notes


@dataclass(frozen=True)
class MergeOptions:
    locations: tuple[Path, ...]  # shard report files, or directories holding them
    run: RunOptions  # the checkout, refs, config and output dir, as for `run`


def run_merge(options: MergeOptions, stdout: TextIO, environ: Mapping[str, str] | None = None) -> int:
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run = options.run
    clock = time.monotonic()
    repo = workspace_root(run.start, False)
    claim_existing_output_dir(run.output_dir, repo)
    context = ci.detect(environ)
    policy = load_policy(repo, run, context)
    config = policy.config
    output_dir = prepare_output_dir(run.output_dir, repo)
    target = freeze_target(repo, policy, run)
    policy_review = review_policy(policy)
    timings = {"freeze": time.monotonic() - clock}

    reports, unreadable = load_shard_reports(options.locations)
    combined = combine(reports, target)
    problems = [*unreadable, *combined.problems]
    if not reports:
        problems.append("no shard report to merge: every shard is missing")
    ran = {outcome.reviewer for outcome in combined.outcomes}
    unrun = [name for name in config.review.reviewers if name not in ran]
    if combined.outcomes and unrun:
        problems.append(f"the policy's reviewer(s) {', '.join(unrun)} ran in no shard: give the shards and the "
                        "merge the same --reviewer flags and config")
    forge = open_forge(context, config, target, os.environ if environ is None else environ)
    with check_run_abandoned_on_error(forge):
        notes = run_notes(config, forge, policy_review)
        if combined.plan is not None:
            notes.append(f"Merged from {combined.plan.total} shard(s) of plan {combined.plan.sha256[:12]}; "
                         "the verify and the whole-change lenses ran in shard 1.")
        if target.is_empty:
            notes.append("Base and head have the same content: there is nothing to review.")
        gate = GateRun(target=target, config=config, context=context, output_dir=output_dir, started_at=started_at,
                       forge=forge, policy=policy_review)
        reviewed = Reviewed(
            verify=combined.verify, outcomes=combined.outcomes, timings={**timings, **combined.timings},
            notes=tuple(notes), rejections=forge.conversation.rejections if forge is not None else (),
            unread=unread_files([change.path for change in target.oversized], combined.outcomes,
                                builtin_sources(config)),
            incomplete=tuple(f"merge: {item}" for item in problems),
        )
        return publish_result(gate, reviewed, stdout)
