"""Findings on code the change moves: a handler or a call moved unchanged from one place to
another (a module split, a helper folded into its caller's file) was written, and judged, before
this change. The per-file lenses see one file at a time, so the move is recognised here, over the
whole change: the finding's lines, with the lines just above them, are among the lines the change
removes, in the same order. Such a finding is kept, at minor, with a note saying so.
"""

from __future__ import annotations

from reviewgate.context import ReviewRequest
from reviewgate.findings import DEMOTED, MOVED, Finding, Severity
from reviewgate.freeze.diff import LineKind
from reviewgate.reviewers.builtin.lenses.secrets import RULE_SECRET
from reviewgate.text import lines_at

# Rule families whose findings judge the code as written at its place. A committed secret stays a
# secret wherever it moves; the DRY, tests and process lenses judge the change as a whole already.
_MOVABLE_FAMILIES = frozenset({"correctness", "security", "readability"})
# Lines above the finding that must have moved with it (the `try:` and its body above a handler):
# a handler rewritten in a new place is not a move, whatever its own two lines say.
CONTEXT_LINES = 2
# Fewer non-blank lines than this say too little to call a move (`except Exception:` / `pass`).
MIN_MOVED_LINES = 3


class _RemovedLines:
    """Every line the change removes, stripped and in order, blank ones left out, with where each
    text occurs: a block is looked up from its first line, not searched for in the whole text (a
    large change removes 100,000 lines and may have a finding on every thousandth it adds). A file
    whose diff removes nothing (a new file, code appended) is not parsed into hunks for it."""

    def __init__(self, request: ReviewRequest) -> None:
        self.lines = [
            text
            for change in request.target.files
            if change.stats.removed_lines
            for hunk in change.hunks
            for line in hunk.lines
            if line.kind is LineKind.REMOVED and (text := line.text.strip())
        ]
        self.positions: dict[str, list[int]] = {}
        for index, text in enumerate(self.lines):
            self.positions.setdefault(text, []).append(index)

    def hold(self, block: list[str]) -> bool:
        """Whether the lines of `block` are removed together, in this order."""
        return any(
            self.lines[start : start + len(block)] == block for start in self.positions.get(block[0], ())
        )


def _is_movable(finding: Finding) -> bool:
    family = finding.rule.split("/", 1)[0]
    return (
        family in _MOVABLE_FAMILIES
        and finding.rule != RULE_SECRET
        and finding.severity is not Severity.MINOR
        and finding.path is not None
        and finding.line is not None
    )


def _block(request: ReviewRequest, finding: Finding) -> list[str] | None:
    """The finding's lines with CONTEXT_LINES above, stripped, blank ones left out; None when too
    short to tell a move."""
    assert finding.path is not None and finding.line is not None
    data = request.head.read_bytes(finding.path)
    if data is None:
        return None
    lines = lines_at(data, max(finding.line - CONTEXT_LINES, 1), finding.end_line or finding.line)
    kept = [line.strip() for line in lines if line.strip()]
    return kept if len(kept) >= MIN_MOVED_LINES else None


def mark_moved(request: ReviewRequest, findings: list[Finding]) -> list[Finding]:
    """The findings, those on code the change moves unchanged made minor with a note."""
    candidates = [finding for finding in findings if _is_movable(finding)]
    if not candidates:
        return findings
    removed = _RemovedLines(request)
    if not removed.lines:
        return findings
    moved: set[int] = set()
    for finding in candidates:
        block = _block(request, finding)
        if block is not None and removed.hold(block):
            moved.add(id(finding))
    return [
        as_moved(finding, "this code is moved unchanged from a place the change removes it from")
        if id(finding) in moved
        else finding
        for finding in findings
    ]


def as_moved(finding: Finding, how: str) -> Finding:
    """The finding at minor, saying how its code was there before this change."""
    return finding.with_changes(
        severity=Severity.MINOR,
        body=finding.body + f"\n\nReported at minor: {how}; it was written before this change.",
        extra={**finding.extra, DEMOTED: MOVED},
    )
