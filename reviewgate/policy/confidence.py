"""`[review] min_confidence`: a finding whose reviewer gave it a confidence below the minimum is
reported, marked, and does not block."""

from __future__ import annotations

from collections.abc import Iterable

from reviewgate.findings import Finding


def confidence_of(finding: Finding) -> float | None:
    value = finding.extra.get("confidence")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def apply_min_confidence(findings: Iterable[Finding], minimum: float) -> tuple[Finding, ...]:
    """The findings, those below `minimum` dismissed with the reason (they stay in the report)."""
    result: list[Finding] = []
    for finding in findings:
        confidence = confidence_of(finding)
        if finding.dismissed is None and confidence is not None and confidence < minimum:
            finding = finding.with_changes(
                dismissed=f"confidence {confidence:.2f} is below [review] min_confidence {minimum:.2f}")
        result.append(finding)
    return tuple(result)
