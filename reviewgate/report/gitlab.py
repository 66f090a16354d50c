"""codequality.json: GitLab's Code Quality report (a JSON array of Code Climate issues).

GitLab's parser stops at the first invalid entry and drops the rest, and keys entries by
`fingerprint` (duplicates collapse), so every entry is checked for the fields the schema
requires (gitlabhq app/validators/json_schemas/codeclimate.json) and fingerprints are unique.
A finding on the change as a whole has no file to show it on: it is left out here and stays
in junit.xml, summary.md and report.json.
"""

from __future__ import annotations

import hashlib
from typing import Any

from reviewgate.file_writing import write_json
from reviewgate.findings import Finding, FindingClass, Severity, sort_key
from reviewgate.report.base import SinkContext
from reviewgate.result import GateResult
from reviewgate.text import printable

FILE_NAME = "codequality.json"
# GitLab severities are info, minor, major, critical, blocker; nit has no twin, info is closest.
SEVERITIES = {
    Severity.BLOCKER: "blocker", Severity.MAJOR: "major", Severity.MINOR: "minor", Severity.NIT: "info",
}

# Code Climate issue categories (Bug Risk, Clarity, Compatibility, Complexity, Duplication,
# Performance, Security, Style): the lens where it names one, else the finding's class.
LENS_CATEGORIES = {"security": "Security", "performance": "Performance", "reuse": "Duplication"}
CLASS_CATEGORIES = {
    FindingClass.CORRECTNESS: "Bug Risk", FindingClass.SYSTEMATIC: "Complexity",
    FindingClass.READABILITY: "Clarity", FindingClass.PRODUCT_QUESTION: "Clarity",
}


def fingerprint(finding: Finding, taken: set[str]) -> str:
    """Stable across runs (from the finding id, itself stable) and unique within the report."""
    base = hashlib.sha256(f"reviewgate\x1f{finding.id}\x1f{finding.path}".encode("utf-8", "surrogateescape"))
    value = base.hexdigest()
    counter = 1
    while value in taken:
        value = hashlib.sha256(f"{base.hexdigest()}\x1f{counter}".encode()).hexdigest()
        counter += 1
    taken.add(value)
    return value


def codequality_entry(finding: Finding, blocking: bool, taken: set[str]) -> dict[str, Any]:
    assert finding.path is not None
    description = f"[{finding.rule_id}] {finding.title}"
    if blocking:
        description += " (blocks)"
    # Code Quality has no field for a suppressed issue. Leaving it out would hide that a rule was
    # silenced here; `info`, the lowest severity GitLab knows, keeps it in view without weight.
    severity = SEVERITIES[finding.severity]
    if finding.dismissed:
        description = f"({finding.dismissed}) {description}"
        severity = "info"
    return {
        "type": "issue",
        "check_name": finding.rule_id,
        "description": printable(description),
        "content": {"body": printable(finding.body)},
        "categories": [LENS_CATEGORIES.get(finding.category, CLASS_CATEGORIES[finding.finding_class])],
        "fingerprint": fingerprint(finding, taken),
        "severity": severity,
        "location": {"path": printable(finding.path), "lines": {"begin": finding.line or 1}},
    }


def build_codequality(result: GateResult) -> list[dict[str, Any]]:
    taken: set[str] = set()
    return [codequality_entry(item, result.is_blocking(item), taken)
            for item in sorted(result.findings, key=sort_key) if item.path is not None]


class CodeQualitySink:
    name = "codequality"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        write_json(result.output_dir / FILE_NAME, build_codequality(result))
