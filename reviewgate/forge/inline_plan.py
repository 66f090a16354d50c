"""What to do with inline review comments on one push, the same for GitHub and GitLab.

Each comment the gate writes carries a hidden fingerprint: the finding's id, which leaves the
line out (findings.make_finding_id), so a finding that moves with an edit above it is the same
finding. Given the findings that should have a comment now and the comments the gate wrote on
earlier pushes, the plan says, per fingerprint:
- still there, same place: keep the comment (its text edited only when it changed);
- still there, moved: a comment nobody answered is deleted and made again at the new line; an
  answered one stays where the conversation is, with its text updated (never a second comment);
- gone: the comment is marked outdated (GitHub: text and a minimised comment; GitLab: the
  discussion resolved), never deleted, so a person's reply is never lost;
- new: a comment is made.
Comments that carry our marker but were not written by the gate's own account are ignored, so
nobody can steer the gate's comments by quoting one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MARKER_PREFIX = "<!-- reviewgate:finding "
MARKER_SUFFIX = " -->"
OUTDATED_MARKER = "<!-- reviewgate:outdated -->"
_MARKER = re.compile(r"<!-- reviewgate:finding ([0-9a-f]{16}(?:-\d+)?) -->")


def marker(finding_id: str) -> str:
    return f"{MARKER_PREFIX}{finding_id}{MARKER_SUFFIX}"


def fingerprint_of(body: str) -> str | None:
    """The finding id a comment of ours carries, or None for any other comment."""
    match = _MARKER.search(body)
    return match.group(1) if match else None


def is_outdated(body: str) -> bool:
    return OUTDATED_MARKER in body


@dataclass(frozen=True)
class Wanted:
    """A comment that should exist now: one per finding with a line in the change."""

    fingerprint: str
    path: str
    line: int  # GitHub: the last line of the comment's range; GitLab: the line it is on
    body: str  # already rendered and escaped, marker included
    start_line: int | None = None  # GitHub: the first line of a range (a multi-line suggestion)


@dataclass(frozen=True)
class Existing:
    """A comment (GitHub) or discussion (GitLab) the gate wrote on an earlier push."""

    fingerprint: str
    comment_id: int
    path: str
    line: int | None  # None: the forge says its line is no longer in the diff
    body: str
    answered: bool  # a person replied: never deleted
    thread_id: str = ""  # GitLab discussion id; GitHub node id (for minimising)
    # Set aside already: GitLab, the discussion is resolved; GitHub, the comment says outdated.
    resolved: bool = False


@dataclass
class InlinePlan:
    create: list[Wanted] = field(default_factory=list)
    edit: list[tuple[Existing, Wanted]] = field(default_factory=list)
    # Moved and unanswered: deleted, then made again (its Wanted is in `create`).
    delete: list[Existing] = field(default_factory=list)
    outdate: list[Existing] = field(default_factory=list)
    # Duplicates of one fingerprint (a crash between create and delete): the extra unanswered ones.
    duplicates: list[Existing] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.create or self.edit or self.delete or self.outdate or self.duplicates)


def plan_inline_comments(wanted: Iterable[Wanted], existing: Iterable[Existing]) -> InlinePlan:
    plan = InlinePlan()
    by_fingerprint: dict[str, list[Existing]] = {}
    for item in existing:
        by_fingerprint.setdefault(item.fingerprint, []).append(item)
    seen: set[str] = set()
    for want in wanted:
        if want.fingerprint in seen:
            continue
        seen.add(want.fingerprint)
        candidates = by_fingerprint.get(want.fingerprint, [])
        if not candidates:
            plan.create.append(want)
            continue
        keep = _pick(candidates, want)
        plan.duplicates += [item for item in candidates if item is not keep and not item.answered]
        plan.outdate += [item for item in candidates if item is not keep and item.answered
                         and not is_outdated(item.body)]
        if (keep.path, keep.line) == (want.path, want.line) or keep.answered:
            if keep.body != want.body or keep.resolved:
                plan.edit.append((keep, want))
        else:
            plan.delete.append(keep)
            plan.create.append(want)
    for fingerprint, items in by_fingerprint.items():
        if fingerprint not in seen:
            plan.outdate += [item for item in items if not (is_outdated(item.body) and item.resolved)]
    return plan


def _pick(candidates: list[Existing], want: Wanted) -> Existing:
    """The comment a finding keeps: one at its place, else an answered one, else the oldest."""
    for item in candidates:
        if (item.path, item.line) == (want.path, want.line):
            return item
    answered = [item for item in candidates if item.answered]
    return (answered or sorted(candidates, key=lambda item: item.comment_id))[0]
