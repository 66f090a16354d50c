"""Where a model's finding goes: validated path, a line that is really changed, or file level.

"A finding's `path` must be a file of the frozen diff, or an existing repository file
for a reuse finding that points at the existing equivalent; anything else (including `..`,
absolute paths) is dropped and counted. A `line` outside the changed lines of that file moves
to the nearest changed line of the same hunk when it is within a few lines, else to file
level; never onto an unrelated line."

A finding cited where the diff shows removed lines (the line right after them, or right before
them at a hunk's end, and no added line) is about those lines: it stays at that place in the
hunk, its body and `extra.removed_lines` naming the merge-base lines, instead of moving to the
nearest added line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id
from reviewgate.freeze.diff import FileChange, LineKind
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.freeze.git import TreeReader

NEARBY_LINES = 3  # "within a few lines": a model's off-by-a-few on the same hunk, nothing further
REUSE_CATEGORIES = frozenset({"reuse", "dry", "duplicate", "duplication"})
MAX_TITLE = 200  # titles become annotation titles (GitHub caps those at 255 characters)


@dataclass
class Placement:
    findings: list[Finding] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    moved: int = 0


class InvalidPath(ValueError):
    """A path a model returned that names no repository file: absolute, `..`, backslashes."""


def clean_path(raw: Any, diff_paths: set[str]) -> str | None:
    """The repository-relative path, or None for "the change as a whole"; InvalidPath otherwise."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str) or "\\" in raw or "\0" in raw:
        raise InvalidPath(raw)
    path = raw.strip()
    for prefix in ("./", "a/", "b/"):
        if path.startswith(prefix) and path[len(prefix) :] in diff_paths:
            return path[len(prefix) :]
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or path != str(pure):
        raise InvalidPath(raw)
    return path


def nearest_changed_line(change: FileChange, line: int) -> int | None:
    """The changed line of the hunk around `line` closest to it, when within NEARBY_LINES."""
    changed = change.changed_line_numbers()
    if line in changed:
        return line
    hunk = change.hunk_containing(line)
    candidates = [
        number
        for number in changed
        if abs(number - line) <= NEARBY_LINES and (hunk is None or hunk.new_start <= number <= hunk.new_end)
    ]
    return min(candidates, key=lambda number: (abs(number - line), number)) if candidates else None


def removed_run_at(change: FileChange, line: int) -> tuple[int, int, int] | None:
    """(anchor, first, last) when new-file line `line` is where the change shows a run of removed
    lines: the line right after the run (or right before it, at a hunk's end); `first`..`last`
    are the run's merge-base lines. None when no removed run stands there."""
    for hunk in change.hunks:
        run: list[int] = []
        before: int | None = None  # the new-file line just above the run
        for diff_line in (*hunk.lines, None):
            if diff_line is not None and diff_line.kind is LineKind.REMOVED and diff_line.old_line is not None:
                run.append(diff_line.old_line)
                continue
            after = diff_line.new_line if diff_line is not None else None
            if run:
                anchor = after or before or hunk.new_start
                if line in {anchor, before, after} - {None}:
                    return anchor, run[0], run[-1]
                run = []
            before = after if after is not None else before
    return None


def code_at(head: TreeReader, path: str | None, line: int | None) -> str:
    """The head's text of the line a finding is about: its position-free anchor."""
    if path is None or line is None:
        return ""
    lines = (head.read_text(path) or "").split("\n")
    return lines[line - 1] if line <= len(lines) else ""


def _line_number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class Placer:
    def __init__(self, reviewer: str, target: FrozenTarget, head: TreeReader) -> None:
        self.reviewer, self.target, self.head = reviewer, target, head
        self.diff_paths = {change.path for change in target.files}

    def _place_line(self, path: str, line: int | None, end_line: int | None) -> tuple[int | None, int | None]:
        change = self.target.file(path)
        if line is None:
            return None, None
        if change is None:  # an existing file a reuse finding points at: any line of it
            text = self.head.read_text(path) or ""
            return (line, end_line) if line <= text.count("\n") + 1 else (None, None)
        placed = nearest_changed_line(change, line)
        if placed is None:
            return None, None
        hunk = change.hunk_containing(placed)
        keep_end = (
            end_line is not None and placed == line and hunk is not None and line < end_line <= hunk.new_end
        )
        return placed, end_line if keep_end else None

    def place(self, item: dict[str, Any], placement: Placement) -> None:
        category = (item["category"].strip().lower() or item["class"]).replace(" ", "-")
        try:
            path = clean_path(item["path"], self.diff_paths)
        except InvalidPath:
            placement.dropped.append(f"invalid path {item['path']!r}")
            return
        if path is not None and path not in self.diff_paths:
            if category not in REUSE_CATEGORIES or self.head.read_bytes(path) is None:
                placement.dropped.append(f"path {path!r} is not a file of the change")
                return
        asked = _line_number(item["line"])
        change = self.target.file(path) if path else None
        # Cited where the diff shows removed lines (and on no added line): anchored to the hunk
        # at that place and said to be about the removed lines, not moved to an added line.
        removed = (removed_run_at(change, asked) if change is not None and asked is not None
                   and asked not in change.changed_line_numbers() else None)
        line: int | None
        if removed is not None:
            line, end_line = removed[0], None
        else:
            line, end_line = (
                self._place_line(path, asked, _line_number(item["end_line"])) if path else (None, None)
            )
        if asked is not None and line != asked and removed is None:
            placement.moved += 1
        title = " ".join(item["title"].split())[:MAX_TITLE] or "(untitled finding)"
        body = item["body"].strip()
        if removed is not None:
            lines = f"{removed[1]}" if removed[1] == removed[2] else f"{removed[1]}-{removed[2]}"
            body = f"On lines the change removes (merge base line(s) {lines}), anchored at their hunk.\n\n{body}"
        if item["evidence"].strip():
            body += f"\n\nEvidence: {item['evidence'].strip()}"
        placement.findings.append(
            Finding(
                id=make_finding_id(self.reviewer, path, category, title, code_at(self.head, path, line)),
                finding_class=FindingClass(item["class"]),
                severity=Severity(item["severity"]),
                category=category,
                title=title,
                body=body,
                source=self.reviewer,
                path=path,
                line=line,
                end_line=end_line,
                rule=f"model/{category}",
                extra={
                    **({"asked_line": asked} if asked != line else {}),
                    **({"removed_lines": [removed[1], removed[2]]} if removed is not None else {}),
                    **{key: item[key] for key in ("confidence", "suggestion") if item.get(key) is not None},
                },
            )
        )


def place_all(
    reviewer: str, target: FrozenTarget, head: TreeReader, items: Iterable[dict[str, Any]]
) -> Placement:
    placement = Placement()
    placer = Placer(reviewer, target, head)
    for item in items:
        placer.place(item, placement)
    return placement
