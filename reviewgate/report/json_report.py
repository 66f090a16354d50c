"""report.json: the immutable record of one gate run (schema: schemas/report.schema.json)."""

from __future__ import annotations

import json
from typing import Any

from reviewgate import __version__
from reviewgate.file_writing import write_text
from reviewgate.findings import Finding
from reviewgate.freeze.diff import FileChange
from reviewgate.report.base import SinkContext
from reviewgate.result import GateResult
from reviewgate.text import printable

SCHEMA_VERSION = 1
FILE_NAME = "report.json"


def _file_json(change: FileChange) -> dict[str, Any]:
    return {
        "path": printable(change.path),
        "old_path": printable(change.old_path) if change.old_path else None,
        "status": change.status.value,
        "binary": change.is_binary,
        "added_lines": change.stats.added_lines,
    }


def _finding_json(finding: Finding, blocking: bool) -> dict[str, Any]:
    data = finding.to_json()
    if finding.path is not None:
        data["path"] = printable(finding.path)
    data["blocking"] = blocking
    return data


def build_report(result: GateResult) -> dict[str, Any]:
    target = result.target
    usage_totals = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
    for outcome in result.outcomes:
        usage_totals["requests"] += outcome.usage.requests
        usage_totals["input_tokens"] += outcome.usage.input_tokens
        usage_totals["output_tokens"] += outcome.usage.output_tokens
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "reviewgate", "version": __version__},
        "started_at": result.started_at,
        "ci": {"provider": result.ci.provider, "event": result.ci.event_name, "run_url": result.ci.run_url},
        "target": {
            **target.identity(),
            "files": [_file_json(change) for change in target.files],
            "excluded": [{"path": printable(item.path), "reason": item.reason} for item in target.excluded],
        },
        "policy": {
            "reviewers": list(result.config.review.reviewers),
            "fail_on": [str(rule) for rule in result.config.review.fail_on],
            **(result.policy.to_json() if result.policy else {}),
        },
        "verify": result.verify.to_json(),
        "reviewers": [outcome.to_json() for outcome in result.outcomes],
        "findings": [_finding_json(item, result.is_blocking(item)) for item in result.findings],
        "verdict": result.verdict.decision.value,
        "route": result.verdict.route.value if result.verdict.route else None,
        "reasons": list(result.verdict.reasons),
        "usage": usage_totals,
        "timings": {name: round(value, 3) for name, value in result.timings.items()},
        "notes": list(result.notes),
        "rounds": result.rounds.to_json() if result.rounds else None,
        "accepted": [item.to_json(item.finding_id in result.accepted_ids()) for item in result.acceptances],
        "suppressed_by_change": [item.to_json() for item in result.branch_suppressions],
    }


class JsonReportSink:
    name = "json"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        text = json.dumps(build_report(result), indent=2, ensure_ascii=False) + "\n"
        write_text(result.output_dir / FILE_NAME, text)
