"""A shard's report: everything `reviewgate merge` needs from one `run --shard I/N` job, and the
only thing that job writes (`shard-I-of-N.json` in its output dir).

It names the exact change it reviewed (head SHA, merge base, canonical patch hash) and the plan
it followed (plan hash, its paths), so the merge can refuse a report of another change or plan.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewgate import __version__
from reviewgate.file_writing import write_json
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.reviewers.base import ReviewerOutcome
from reviewgate.sharding.plan import ShardPlan, ShardSpec
from reviewgate.verify.outcome import VerifyOutcome

KIND = "reviewgate-shard-report"
FORMAT = 1
FILE_PATTERN = "shard-*-of-*.json"


def file_name(shard: ShardSpec) -> str:
    return f"shard-{shard.index}-of-{shard.total}.json"


@dataclass(frozen=True)
class ShardReport:
    source: Path
    shard: ShardSpec
    status: str  # ok | failed (the shard itself could not run)
    reason: str = ""
    target: dict[str, Any] = field(default_factory=dict)
    plan_sha256: str = ""
    paths: tuple[str, ...] = ()
    whole_change: bool = False
    outcomes: tuple[ReviewerOutcome, ...] = ()
    verify: VerifyOutcome | None = None  # None: the verify did not run in this shard
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"shard {self.shard} ({self.source})"


def _outcome_json(outcome: ReviewerOutcome) -> dict[str, Any]:
    return {**outcome.to_json(), "findings": [item.to_json() for item in outcome.findings]}


def write_shard_report(
    output_dir: Path,
    shard: ShardSpec,
    *,
    started_at: str,
    target: FrozenTarget,
    plan: ShardPlan,
    outcomes: Iterable[ReviewerOutcome],
    verify: VerifyOutcome | None,
    timings: dict[str, float],
) -> Path:
    outcomes = tuple(outcomes)
    usage = {
        "requests": sum(item.usage.requests for item in outcomes),
        "input_tokens": sum(item.usage.input_tokens for item in outcomes),
        "output_tokens": sum(item.usage.output_tokens for item in outcomes),
        "cost": sum(item.usage.cost or 0.0 for item in outcomes),
    }
    document = {
        **_header(shard, started_at, "ok", ""),
        "target": target.identity(),
        "plan": {"sha256": plan.sha256, "paths": list(plan.paths(shard)), "whole_change": shard.whole_change},
        "reviewers": [_outcome_json(item) for item in outcomes],
        "usage": usage,
        "verify": verify.to_record() if verify is not None else None,
        "timings": {name: round(value, 3) for name, value in timings.items()},
    }
    path = output_dir / file_name(shard)
    write_json(path, document, exact=True)  # the merge compares its paths with the ones it freezes
    return path


def remove_shard_reports(output_dir: Path) -> None:
    """A shard's start: no report of an earlier run (another N, another change) left beside its
    own to be uploaded with it."""
    if output_dir.is_dir():
        for stale in output_dir.glob(FILE_PATTERN):
            stale.unlink(missing_ok=True)


def write_failed_shard_report(output_dir: Path, shard: ShardSpec, *, started_at: str, reason: str) -> None:
    """The shard could not run (bad config, git failure, internal error): a report that says
    so, for the merge to block on with the reason rather than miss silently."""
    write_json(output_dir / file_name(shard), _header(shard, started_at, "failed", reason))


def _header(shard: ShardSpec, started_at: str, status: str, reason: str) -> dict[str, Any]:
    return {
        "kind": KIND,
        "format": FORMAT,
        "tool": {"name": "reviewgate", "version": __version__},
        "started_at": started_at,
        "shard": {"index": shard.index, "total": shard.total},
        "status": status,
        "reason": reason,
    }


class NotAShardReport(ValueError):
    pass


def parse_shard_report(source: Path, document: Any) -> ShardReport:
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise NotAShardReport("not a reviewgate shard report")
    if document.get("format") != FORMAT:
        raise NotAShardReport(f"shard report format {document.get('format')!r}, this reviewgate reads {FORMAT}")
    try:
        shard = ShardSpec(int(document["shard"]["index"]), int(document["shard"]["total"]))
        if not 1 <= shard.index <= shard.total:
            raise NotAShardReport(f"shard {shard} is not I/N with 1 <= I <= N")
        plan = document.get("plan") or {}
        verify = document.get("verify")
        return ShardReport(
            source=source,
            shard=shard,
            status=str(document["status"]),
            reason=str(document.get("reason") or ""),
            target=dict(document.get("target") or {}),
            plan_sha256=str(plan.get("sha256") or ""),
            paths=tuple(str(item) for item in plan.get("paths", [])),
            whole_change=bool(plan.get("whole_change", False)),
            outcomes=tuple(ReviewerOutcome.from_json(item) for item in document.get("reviewers", [])),
            verify=VerifyOutcome.from_record(verify) if verify is not None else None,
            timings={str(name): float(value) for name, value in (document.get("timings") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, NotAShardReport):
            raise
        raise NotAShardReport(f"malformed shard report ({type(error).__name__}: {error})") from None


def find_report_files(locations: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """Each location is a report file or a directory searched (recursively: one artifact per
    subdirectory, as actions/download-artifact lays them out) for `shard-*-of-*.json`."""
    files: list[Path] = []
    problems: list[str] = []
    for location in locations:
        if location.is_dir():
            found = sorted(location.rglob(FILE_PATTERN))
            if not found:
                problems.append(f"{location}: no shard report ({FILE_PATTERN}) in this directory")
            files += found
        elif location.is_file():
            files.append(location)
        else:
            problems.append(f"{location}: no such file or directory")
    return files, problems


def load_shard_reports(locations: Sequence[Path]) -> tuple[list[ShardReport], list[str]]:
    """The reports found, and one line per location or file that gave none."""
    files, problems = find_report_files(locations)
    reports: list[ShardReport] = []
    for path in files:
        try:
            reports.append(parse_shard_report(path, json.loads(path.read_text(encoding="utf-8"))))
        except OSError as error:
            problems.append(f"{path}: cannot be read ({error.strerror or error})")
        except ValueError as error:  # JSON errors and NotAShardReport
            problems.append(f"{path}: {error}")
    return reports, problems
