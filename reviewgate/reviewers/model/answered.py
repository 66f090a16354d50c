"""Findings of earlier rounds, recognised when a chunk is asked again and lines have shifted.

The chunk store remembers where each reported finding stood in each run (line, rule, the code
on that line, its id). A finding of this run on the same file, by the same rule, on the same
code line is the same finding, whatever words the model used this time:
- it keeps the id it had in the last round (so an `ACCEPTED: <id>` and the forges' comments
  still find it), when the match is one to one;
- a `REVIEW-REJECTED: <file>:<line>` names a line of the head it was written against: it is
  resolved against the last run before it was written, and the finding found there stays
  answered (set aside with the rejection's reason). A rejection that names no remembered
  finding, or that may not set findings aside (the change's author's own), is left to the
  model, which reads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from reviewgate.chunk_store import ChunkStore, Place
from reviewgate.context import Rejection
from reviewgate.findings import Finding, normalize_text
from reviewgate.forge.conversation import parse_moment, rejection_covers
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.model.placement import code_at

Fingerprint = tuple[str, str, str]  # path, rule, normalized code line


def _last_round(places: list[Place]) -> list[Place]:
    timed = [(moment, place) for place in places if (moment := parse_moment(place.seen_at)) is not None]
    if not timed:
        return []
    latest = max(moment for moment, _ in timed)
    return [place for moment, place in timed if moment == latest]


def _answered_places(rejection: Rejection, places: list[Place]) -> list[Place]:
    """The places the rejection points at, in the last run before it was written."""
    covering = [place for place in places if rejection_covers(rejection, rejection.path, place.line, place.end_line)]
    written = parse_moment(rejection.created_at)
    if written is not None:
        covering = [place for place in covering if (moment := parse_moment(place.seen_at)) is not None and moment <= written]
    return _last_round(covering)


def answered_fingerprints(rejections: Iterable[Rejection], store: ChunkStore) -> dict[Fingerprint, str]:
    """The fingerprint of every finding a rejection that may set findings aside answered, with
    its reason. The change's author's own rejections are only read by the model, which judges."""
    answered: dict[Fingerprint, str] = {}
    places_by_path: dict[str, list[Place]] = {}
    for rejection in rejections:
        if not rejection.dismisses:
            continue
        places = places_by_path.setdefault(rejection.path, store.places(rejection.path))
        for place in _answered_places(rejection, places):
            fingerprint = (rejection.path, place.rule, normalize_text(place.code))
            answered.setdefault(fingerprint, rejection.reason or "no reason given")
    return answered


def fingerprint(finding: Finding, head: TreeReader) -> Fingerprint | None:
    if finding.path is None:
        return None
    return (finding.path, finding.rule, normalize_text(code_at(head, finding.path, finding.line)))


def keep_earlier_ids(findings: Iterable[Finding], store: ChunkStore, head: TreeReader) -> tuple[Finding, ...]:
    """Each finding that is, one to one, a finding of the last round on the same file (same rule,
    same code line) takes that finding's id: new words on unchanged code are not a new finding."""
    current = [(finding, fingerprint(finding, head)) for finding in findings]
    counts = Counter(place_print for _, place_print in current if place_print is not None)
    earlier: dict[Fingerprint, set[str]] = {}
    for path in sorted({finding.path for finding, _ in current if finding.path is not None}):
        for place in _last_round(store.places(path)):
            earlier.setdefault((path, place.rule, normalize_text(place.code)), set()).add(place.finding_id)
    ids_now = {finding.id for finding, _ in current}
    kept: list[Finding] = []
    for finding, place_print in current:
        previous = earlier.get(place_print) if place_print is not None else None
        if place_print is not None and previous is not None and len(previous) == 1 and counts[place_print] == 1:
            (earlier_id,) = previous
            if earlier_id and earlier_id not in ids_now:
                finding = finding.with_changes(id=earlier_id)
        kept.append(finding)
    return tuple(kept)


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
                Place(finding.line, finding.end_line, finding.rule, code_at(head, finding.path, finding.line), seen_at,
                      finding.id))
    problems = [store.record_places(path, places) for path, places in sorted(by_path.items())]
    return [problem for problem in problems if problem]
