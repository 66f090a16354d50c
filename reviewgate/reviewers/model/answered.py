"""A finding answered by `REVIEW-REJECTED: <file>:<line>` stays answered after lines shift.

The rejection names a line of the head it was written against. The chunk store remembers where
each reported finding stood in each run (line, rule, the code on that line); the rejection's
line is resolved against the last run before it was written, and a finding of this run with the
same file, rule and code is set aside with the rejection's reason, whatever words the model used
this time. A rejection that names no remembered finding is left to the model, which reads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from reviewgate.context import Rejection
from reviewgate.findings import Finding, normalize_text
from reviewgate.forge.conversation import rejection_covers
from reviewgate.review_cache import ChunkStore, Place
from reviewgate.reviewers.model.placement import code_at
from reviewgate.target.git import TreeReader

Fingerprint = tuple[str, str, str]  # path, rule, normalized code line


def _moment(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _answered_places(rejection: Rejection, places: list[Place]) -> list[Place]:
    """The places the rejection points at, in the last run before it was written."""
    covering = [place for place in places if rejection_covers(rejection, rejection.path, place.line, place.end_line)]
    written = _moment(rejection.created_at)
    timed = [(moment, place) for place in covering if (moment := _moment(place.seen_at)) is not None]
    if written is not None:
        timed = [(moment, place) for moment, place in timed if moment <= written]
    if not timed:
        return []
    latest = max(moment for moment, _ in timed)
    return [place for moment, place in timed if moment == latest]


def answered_fingerprints(rejections: Iterable[Rejection], store: ChunkStore) -> dict[Fingerprint, str]:
    """The fingerprint of every finding a rejection answered, with the rejection's reason."""
    answered: dict[Fingerprint, str] = {}
    places_by_path: dict[str, list[Place]] = {}
    for rejection in rejections:
        places = places_by_path.setdefault(rejection.path, store.places(rejection.path))
        for place in _answered_places(rejection, places):
            fingerprint = (rejection.path, place.rule, normalize_text(place.code))
            answered.setdefault(fingerprint, rejection.reason or "no reason given")
    return answered


def fingerprint(finding: Finding, head: TreeReader) -> Fingerprint | None:
    if finding.path is None:
        return None
    return (finding.path, finding.rule, normalize_text(code_at(head, finding.path, finding.line)))


def mark_answered(findings: Iterable[Finding], answered: dict[Fingerprint, str], head: TreeReader) -> tuple[Finding, ...]:
    """Findings an earlier rejection answered, dismissed with its reason (as for deterministic
    findings: still reported, never blocking)."""
    marked: list[Finding] = []
    for finding in findings:
        reason = answered.get(fingerprint(finding, head) or ("", "", "")) if answered else None
        if reason is not None and finding.dismissed is None:
            finding = finding.with_changes(dismissed=f"rejected: {reason}")
        marked.append(finding)
    return tuple(marked)


def record_places(findings: Iterable[Finding], store: ChunkStore, head: TreeReader, seen_at: str) -> list[str]:
    """Remember where this run's findings stood; notes for what could not be stored."""
    by_path: dict[str, list[Place]] = {}
    for finding in findings:
        if finding.path is not None:
            by_path.setdefault(finding.path, []).append(
                Place(finding.line, finding.end_line, finding.rule, code_at(head, finding.path, finding.line), seen_at))
    problems = [store.record_places(path, places) for path, places in sorted(by_path.items())]
    return [problem for problem in problems if problem]
