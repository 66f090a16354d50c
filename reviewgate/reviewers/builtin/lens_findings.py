"""Builtin findings: the one constructor every lens reports through."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from reviewgate.findings import ADVISORY, DEMOTED, Finding, FindingClass, Severity, make_finding_id

SOURCE = "builtin"


def lens_finding(
    *,
    rule: str,
    category: str,
    finding_class: FindingClass,
    severity: Severity,
    title: str,
    body: str,
    path: str | None,
    line: int | None = None,
    end_line: int | None = None,
    code: str = "",
    stable_title: str | None = None,
    demoted: str | None = None,
) -> Finding:
    """A builtin finding; `code` (the line it is about) stands in for the line number in the id.
    `stable_title` replaces a title that names other lines when the id is computed. `demoted` says
    why the lens reports it at minor as intended or written earlier (findings.DEMOTED)."""
    return Finding(
        id=make_finding_id(SOURCE, path, category, f"{rule} {stable_title or title}", code),
        finding_class=finding_class,
        severity=severity,
        category=category,
        rule=rule,
        title=title,
        body=body,
        source=SOURCE,
        path=path,
        line=line,
        end_line=end_line,
        extra={DEMOTED: demoted} if demoted else {},
    )


def advisory(findings: Iterable[Finding], rules: Collection[str], reason: str) -> list[Finding]:
    """The findings, each major or blocker one of `rules` marked advisory: reported at its severity
    with `reason` in its body, never blocking (findings.ADVISORY; gate.blocks)."""
    return [
        finding.with_changes(body=finding.body + f"\n\nAdvisory: {reason}.", extra={**finding.extra, ADVISORY: reason})
        if finding.rule in rules and finding.severity in (Severity.BLOCKER, Severity.MAJOR)
        else finding
        for finding in findings
    ]
