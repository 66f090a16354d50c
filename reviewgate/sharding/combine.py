"""Check shard reports against the change the merge froze, and combine the ones that pass.

A report is refused, with a line saying which shard and why, when the shard could not run, when
it reviewed another head, merge base or patch, followed another plan, came twice, or ran other
reviewers than shard 1; a shard of the plan with no report is missing. Any refusal blocks the
merged verdict: part of the change would otherwise go unreviewed.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from reviewgate.findings import sort_key
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus, Usage
from reviewgate.sharding.plan import WHOLE_CHANGE_SHARD, ShardPlan, ShardSpec, plan_shards
from reviewgate.sharding.shard_report import ShardReport
from reviewgate.verify.outcome import ABSENT, VerifyOutcome

# What must match between a report and the merge's own freeze, with the words for a mismatch.
_IDENTITY = (("head_sha", "head"), ("merge_base", "merge base"), ("patch_sha256", "patch hash"))


@dataclass(frozen=True)
class Combined:
    outcomes: tuple[ReviewerOutcome, ...]
    verify: VerifyOutcome
    problems: tuple[str, ...]  # each blocks the verdict
    plan: ShardPlan | None
    timings: dict[str, float] = field(default_factory=dict)


def expected_total(reports: Sequence[ShardReport]) -> int | None:
    """N as most reports say it (ties: the smaller N, so the refusal names the odd ones out)."""
    if not reports:
        return None
    counts = Counter(report.shard.total for report in reports)
    return min(counts, key=lambda total: (-counts[total], total))


def refusal(report: ShardReport, target: FrozenTarget, plan: ShardPlan) -> str | None:
    if report.status != "ok":
        return f"{report.label} could not run: {report.reason or 'no reason given'}"
    if report.shard.total != plan.total:
        return f"{report.label} is of a {report.shard.total}-shard plan, the other shards of a {plan.total}-shard one"
    for key, words in _IDENTITY:
        theirs, ours = report.target.get(key), getattr(target, key)
        if theirs != ours:
            return f"{report.label} reviewed {words} {theirs}, not {words} {ours} that this merge froze"
    if (report.plan_sha256 != plan.sha256 or report.paths != plan.paths(report.shard)
            or report.whole_change != report.shard.whole_change):
        return (f"{report.label} followed another plan (plan hash {report.plan_sha256[:12] or 'none'}, expected "
                f"{plan.sha256[:12]}): its files are not the ones this change gives shard {report.shard}")
    return None


def _reviewer_names(report: ShardReport) -> tuple[str, ...]:
    return tuple(item.reviewer for item in report.outcomes)


def accepted_reports(reports: Sequence[ShardReport], target: FrozenTarget
                     ) -> tuple[list[ShardReport], list[str], ShardPlan | None]:
    """The reports that may be combined, one per shard; a line per refused report or missing shard."""
    total = expected_total(reports)
    if total is None:
        return [], [], None
    plan = plan_shards(target, total)
    problems: list[str] = []
    by_index: dict[int, ShardReport] = {}
    seen: set[int] = set()
    for report in sorted(reports, key=lambda item: (item.shard.index, str(item.source))):
        why = refusal(report, target, plan)
        if why is None and report.shard.index in by_index:
            why = f"{report.label}: shard {report.shard} was given twice (also {by_index[report.shard.index].source})"
        if why is not None:
            problems.append(why)
            if report.shard.total == total:
                seen.add(report.shard.index)
            continue
        by_index[report.shard.index] = report
        seen.add(report.shard.index)
    problems += [f"shard {index}/{total}: no report (the job did not run, failed before writing it, "
                 "or its artifact was not passed to the merge)"
                 for index in range(1, total + 1) if index not in seen]
    accepted = [by_index[index] for index in sorted(by_index)]
    if accepted:
        reference = by_index.get(WHOLE_CHANGE_SHARD, accepted[0])
        names = _reviewer_names(reference)
        for report in list(accepted):
            if _reviewer_names(report) != names:
                problems.append(f"{report.label} ran reviewers ({', '.join(_reviewer_names(report))}), shard "
                                f"{reference.shard} ran ({', '.join(names)}): every shard needs the same reviewers")
                accepted.remove(report)
    return accepted, problems, plan


def combine_outcomes(name: str, parts: Sequence[tuple[ShardSpec, ReviewerOutcome]]) -> ReviewerOutcome:
    """One reviewer's outcome over the shards: blocked if any shard's was, else ok if any shard's
    was, else skipped; findings, usage, questions and notes from every shard."""
    statuses = {outcome.status for _, outcome in parts}
    status = next(item for item in (ReviewerStatus.BLOCKED, ReviewerStatus.OK, ReviewerStatus.SKIPPED)
                  if item in statuses)
    if status is ReviewerStatus.BLOCKED:
        reasons = [f"shard {shard}: {outcome.reason}" for shard, outcome in parts if outcome.status is status]
    else:
        reasons = _unique(outcome.reason for _, outcome in parts if outcome.status is status and outcome.reason)
    ran = [outcome for _, outcome in parts if outcome.status is ReviewerStatus.OK]
    return ReviewerOutcome(
        reviewer=name,
        status=status,
        findings=tuple(sorted((item for _, outcome in parts for item in outcome.findings), key=sort_key)),
        reason="; ".join(reasons),
        product_questions=tuple(_unique(item for _, outcome in parts for item in outcome.product_questions)),
        summary="\n\n".join(outcome.summary for _, outcome in parts if outcome.summary),
        usage=functools.reduce(Usage.plus, (outcome.usage for _, outcome in parts), Usage()),
        duration_seconds=sum(outcome.duration_seconds for _, outcome in parts),
        dropped=sum(outcome.dropped for _, outcome in parts),
        not_reviewed=tuple(item for _, outcome in parts for item in outcome.not_reviewed),
        notes=tuple(item for _, outcome in parts for item in outcome.notes),
        cached=bool(ran) and all(outcome.cached for outcome in ran),
    )


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def combine(reports: Sequence[ShardReport], target: FrozenTarget) -> Combined:
    accepted, problems, plan = accepted_reports(reports, target)
    names = _reviewer_names(accepted[0]) if accepted else ()
    outcomes = tuple(
        combine_outcomes(name, [(report.shard, outcome) for report in accepted
                                for outcome in report.outcomes if outcome.reviewer == name])
        for name in names
    )
    whole = next((report for report in accepted if report.shard.whole_change), None)
    verify = (whole.verify if whole is not None else None) or ABSENT
    timings = {"review": max((report.timings.get("review", 0.0) for report in accepted), default=0.0)}
    if whole is not None and "verify" in whole.timings:
        timings["verify"] = whole.timings["verify"]
    return Combined(outcomes, verify, tuple(problems), plan, timings)
