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
    return _blocker(manifest, f"{step} failed", title, "\n".join(lines), f"verify-{step}")


def removed_manifest_finding(manifest: str, merge_base: str) -> Finding:
    """The branch deletes or moves the manifest the target side has: without this finding the
    run would read as "no verify" and a branch could skip its tests by removing the file."""
    title = f"The change removes the verify manifest ({manifest}): the verify cannot run"
    body = (f"`{manifest}` exists at the merge base {merge_base[:12]} but not in this change, so none of its "
            "steps ran. Restore it (or move it back), or change `[verify] manifest` at the target side first.")
    return _blocker(manifest, "manifest removed", title, body, "verify-manifest-removed", path=manifest)


def _blocker(manifest: str, what: str, title: str, body: str, rule: str, path: str | None = None) -> Finding:
    """A blocking verify finding, its id from the manifest and `what` happened only."""
    return Finding(
        id=make_finding_id(SOURCE, manifest, CATEGORY, what),
        finding_class=FindingClass.CORRECTNESS,
        severity=Severity.BLOCKER,
        category=CATEGORY,
        title=title,
        body=body,
        source=SOURCE,
        path=path,
        rule=rule,
    )
