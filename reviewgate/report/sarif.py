"""review.sarif: SARIF 2.1.0 for github/codeql-action/upload-sarif (and any SARIF viewer).

GitHub code scanning reads `ruleId`, `level`, `message.text` (plain text: it does not render
Markdown, so a finding's is taken out), a physical location relative to the repository root,
and `partialFingerprints` to track a result across runs ("SARIF support for code scanning").
Each rule has fixed descriptions, help and tags (sarif_rules.py), never a finding's text. A run
may hold at most 25,000 results (GitHub rejects more): the most severe are kept and the run's
properties count the rest. A finding on the change as a whole has no location code scanning
accepts: it is left out here and stays in the other reports. Dismissed findings carry a SARIF
suppression with the reason (`inSource` for a suppression comment), so code scanning shows them
as dismissed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewgate import __version__
from reviewgate.escaping import uri_reference
from reviewgate.file_writing import write_json
from reviewgate.findings import Finding, Severity, sort_key
from reviewgate.report.base import SinkContext
from reviewgate.report.plain_text import markdown_to_plain
from reviewgate.result import GateResult
from reviewgate.text import printable

FILE_NAME = "review.sarif"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/reviewgate/reviewgate"
# GitHub rejects a run with more results ("SARIF upload supports a maximum of 25,000 results per run").
MAX_RESULTS = 25_000


def result_level(finding: Finding, blocking: bool) -> str:
    if blocking:
        return "error"
    return "note" if finding.severity is Severity.NIT else "warning"


def sarif_result(finding: Finding, blocking: bool, rule_index: int) -> dict[str, Any]:
    assert finding.path is not None
    region: dict[str, Any] = {"startLine": finding.line or 1}
    if finding.line is not None and finding.end_line and finding.end_line >= finding.line:
        region["endLine"] = finding.end_line
    text = printable(markdown_to_plain(finding.title + (f"\n\n{finding.body}" if finding.body else "")))
    entry: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": result_level(finding, blocking),
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri_reference(finding.path), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }}],
        "partialFingerprints": {"reviewgateFindingId/v1": finding.id},
        "properties": {
            "class": finding.finding_class.value,
            "severity": finding.severity.value,
            "category": finding.category,
            "source": finding.source,
            "blocking": blocking,
        },
    }
    if finding.dismissed:
        entry["suppressions"] = [suppression(finding)]
    return entry


def suppression(finding: Finding) -> dict[str, Any]:
    """SARIF 2.1.0 §3.35: `inSource` for a `reviewgate: ignore[...]` comment in the code, `external`
    for a finding set aside elsewhere (a person's answer on the PR, another tool's suppression)."""
    record = finding.extra.get("suppression")
    kind = "inSource" if isinstance(record, Mapping) else "external"
    entry: dict[str, Any] = {"kind": kind, "status": "accepted", "justification": printable(finding.dismissed or "")}
    if isinstance(record, Mapping) and isinstance(record.get("line"), int) and finding.path is not None:
        entry["location"] = {"physicalLocation": {
            "artifactLocation": {"uri": uri_reference(finding.path), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": record["line"]},
        }}
    return entry


def build_sarif(result: GateResult) -> dict[str, Any]:
    located = [item for item in sorted(result.findings, key=sort_key) if item.path is not None]
    kept = located[:MAX_RESULTS]
    rules: dict[str, int] = {}
    rule_entries: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for finding in kept:
        identifier = finding.rule_id
        if identifier not in rules:
            # The rules' documentation only for a report with results: most pushes have none.
            from reviewgate.report.sarif_rules import rule_descriptor

            rules[identifier] = len(rule_entries)
            rule_entries.append(rule_descriptor(identifier, finding))
        results.append(sarif_result(finding, result.is_blocking(finding), rules[identifier]))
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": "reviewgate", "version": __version__,
                                "informationUri": INFORMATION_URI, "rules": rule_entries}},
            # One stable category, so code scanning closes alerts a later commit fixed.
            "automationDetails": {"id": "reviewgate/"},
            "results": results,
            "properties": {"verdict": result.verdict.decision.value,
                           "patch_sha256": result.target.patch_sha256,
                           "unlocated_findings": len(result.findings) - len(located),
                           "results_left_out": len(located) - len(kept)},
        }],
    }


class SarifSink:
    name = "sarif"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        write_json(result.output_dir / FILE_NAME, build_sarif(result))
