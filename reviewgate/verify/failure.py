"""The one finding a failed verify adds: class correctness, category verify, severity blocker.

Titled with the step and exit code, the log tail (secrets masked) in its body. The id
depends on the manifest and the step only, so the same step failing again keeps its id.
"""

from __future__ import annotations

import re

from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id

SOURCE = "verify"
CATEGORY = "verify"


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in the text, so the log cannot end it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def step_finding(
    manifest: str, step: str, title: str, detail: str, command: str, log_path: str | None, tail: str
) -> Finding:
    lines = [f"The `{step}` step of `{manifest}` failed: {detail}.", "", f"Command: `{command}`"]
    if log_path:
        lines.append(f"Log: `{log_path}`")
    if tail:
        fence = _fence(tail)
        lines += ["", "Last lines of the log (secrets masked):", "", fence, tail, fence]
    return Finding(
        id=make_finding_id(SOURCE, manifest, CATEGORY, f"{step} failed"),
        finding_class=FindingClass.CORRECTNESS,
        severity=Severity.BLOCKER,
        category=CATEGORY,
        title=title,
        body="\n".join(lines),
        source=SOURCE,
        rule=f"verify-{step}",
    )
