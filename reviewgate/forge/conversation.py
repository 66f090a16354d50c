"""What the PR/MR conversation may feed into a review (seed 000, "What the reviewer reads").

From trusted authors only: a `REPRODUCTION:` comment (the harness's cases, an acceptance test),
`REVIEW-REJECTED: <file>:<line> reason` lines (an earlier round argued a finding does not
hold) and `ACCEPTED: <finding-id> reason` lines (a person overrules the gate on one finding,
on the record: final for that PR, whichever reviewer found it). Earlier `REVIEW:` comments and our own summary comment are never read: they hold
another reviewer's conclusions, and reading them makes the round an echo.

Pure: the forge clients turn API answers into `Comment`s, deciding `trusted` by the forge's
rules (GitHub author_association, GitLab access level), and this module reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reviewgate.context import Rejection
from reviewgate.findings import Finding

REPRODUCTION_PREFIX = "REPRODUCTION:"
REJECTION_PREFIX = "REVIEW-REJECTED:"
REVIEW_PREFIX = "REVIEW:"
ACCEPTANCE_PREFIX = "ACCEPTED:"
# GitHub author_association values that mean write access to the repository.
GITHUB_TRUSTED_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
# GitLab access levels: 30 is Developer (REST "Roles and permissions": 30 Developer,
# 40 Maintainer, 50 Owner).
GITLAB_DEVELOPER_ACCESS = 30


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    body: str
    trusted: bool
    created_at: str = ""


@dataclass(frozen=True)
class Acceptance:
    """A trusted person's `ACCEPTED: <finding-id> reason`: that finding no longer blocks."""

    finding_id: str
    reason: str
    author: str

    def to_json(self, applied: bool) -> dict[str, object]:
        """`applied`: whether a finding of this run has the id."""
        return {"finding_id": self.finding_id, "author": self.author, "reason": self.reason, "applied": applied}


@dataclass(frozen=True)
class Conversation:
    reproduction: str | None = None
    rejections: tuple[Rejection, ...] = field(default_factory=tuple)
    untrusted_ignored: int = 0  # REPRODUCTION:/REVIEW-REJECTED: comments from untrusted authors
    acceptances: tuple[Acceptance, ...] = field(default_factory=tuple)
    # ACCEPTED: lines that were not taken (untrusted author, no reason), each said in a note.
    ignored_acceptances: tuple[str, ...] = field(default_factory=tuple)


def _first_line(body: str) -> str:
    return next((line.strip() for line in body.splitlines() if line.strip()), "")


def parse_rejection(line: str, author: str = "", created_at: str = "") -> Rejection | None:
    """`REVIEW-REJECTED: <file>:<line> reason`; the line number may be left out for a finding
    on the file as a whole. Backticks around the location are allowed (people quote paths)."""
    text = line.strip()
    if not text.startswith(REJECTION_PREFIX):
        return None
    rest = text[len(REJECTION_PREFIX):].strip()
    if not rest:
        return None
    location, _, reason = rest.partition(" ")
    location = location.strip("`")
    path, separator, number = location.rpartition(":")
    if not separator or not number.isdigit():
        path, number = location, ""
    if not path:
        return None
    return Rejection(path=path.removeprefix("./"), line=int(number) if number else None,
                     reason=reason.strip(), author=author, created_at=created_at)


def parse_acceptance(line: str, author: str = "") -> Acceptance | None:
    """`ACCEPTED: <finding-id> reason`; backticks around the id are allowed. The reason may be
    empty here: the caller refuses an acceptance without one, with a note."""
    text = line.strip()
    if not text.startswith(ACCEPTANCE_PREFIX):
        return None
    finding_id, _, reason = text[len(ACCEPTANCE_PREFIX):].strip().partition(" ")
    finding_id = finding_id.strip("`")
    if not finding_id:
        return None
    return Acceptance(finding_id=finding_id, reason=reason.strip(), author=author)


def _is_request_line(line: str) -> bool:
    text = line.strip()
    return text.startswith(REJECTION_PREFIX) or text.startswith(ACCEPTANCE_PREFIX)


def is_conversation_request(body: str) -> bool:
    """Whether a comment asks something of the review (so its author's trust matters)."""
    first = _first_line(body)
    return first.startswith(REPRODUCTION_PREFIX) or any(_is_request_line(line) for line in body.splitlines())


def _acceptances(comment: Comment) -> tuple[list[Acceptance], list[str]]:
    """The comment's ACCEPTED: lines that count, and a note for each that does not."""
    taken: list[Acceptance] = []
    ignored: list[str] = []
    for line in comment.body.splitlines():
        acceptance = parse_acceptance(line, comment.author)
        if acceptance is None:
            continue
        if not comment.trusted:
            ignored.append(f"ACCEPTED: {acceptance.finding_id} by {comment.author or 'an unknown author'} was "
                           "ignored: only authors with write access (or the configured list) can accept a finding.")
        elif not acceptance.reason:
            ignored.append(f"ACCEPTED: {acceptance.finding_id} by {comment.author} was ignored: it gives no reason "
                           "(write `ACCEPTED: <finding-id> <why the finding may stand>`).")
        else:
            taken.append(acceptance)
    return taken, ignored


def read_conversation(comments: Iterable[Comment]) -> Conversation:
    """The newest trusted REPRODUCTION:, every trusted REVIEW-REJECTED: and ACCEPTED: line,
    oldest first."""
    from reviewgate.forge.metadata import is_summary_comment  # read on a forge only: a local run never loads it

    reproduction: str | None = None
    rejections: list[Rejection] = []
    acceptances: list[Acceptance] = []
    ignored: list[str] = []
    untrusted = 0
    for comment in comments:
        if is_summary_comment(comment.body) or _first_line(comment.body).startswith(REVIEW_PREFIX):
            continue  # earlier reviews are never read into this one
        if not is_conversation_request(comment.body):
            continue
        taken, refused = _acceptances(comment)
        acceptances += taken
        ignored += refused
        if not comment.trusted:
            if _first_line(comment.body).startswith(REPRODUCTION_PREFIX) or any(
                line.strip().startswith(REJECTION_PREFIX) for line in comment.body.splitlines()
            ):
                untrusted += 1
            continue
        if _first_line(comment.body).startswith(REPRODUCTION_PREFIX):
            reproduction = comment.body.strip()
        for line in comment.body.splitlines():
            rejection = parse_rejection(line, comment.author, comment.created_at)
            if rejection is not None:
                rejections.append(rejection)
    return Conversation(reproduction, tuple(rejections), untrusted, tuple(acceptances), tuple(ignored))


def is_trusted_login(login: str, configured: Iterable[str]) -> bool:
    return login.lower() in configured


def rejection_covers(rejection: Rejection, path: str | None, line: int | None, end_line: int | None) -> bool:
    """Whether the rejection's file:line points at a finding at path, line..end_line."""
    if path != rejection.path:
        return False
    if rejection.line is None or line is None:
        return rejection.line is None and line is None
    return line <= rejection.line <= (end_line or line)


def _covers(rejection: Rejection, finding: Finding) -> bool:
    return rejection_covers(rejection, finding.path, finding.line, finding.end_line)


def apply_rejections(
    findings: Iterable[Finding], rejections: Iterable[Rejection], sources: Iterable[str]
) -> tuple[Finding, ...]:
    """Findings from the deterministic reviewers in `sources` at a rejected file:line are set
    aside with the reason: still reported, never blocking (gate.blocks). Model reviewers get the
    rejections in their request instead and judge them themselves."""
    answered = tuple(rejections)
    deterministic = set(sources)
    result: list[Finding] = []
    for finding in findings:
        match = next((item for item in answered if _covers(item, finding)), None)
        if match is not None and finding.source in deterministic and finding.dismissed is None:
            finding = finding.with_changes(dismissed=f"rejected: {match.reason or 'no reason given'}")
        result.append(finding)
    return tuple(result)


def first_acceptances(acceptances: Iterable[Acceptance]) -> tuple[Acceptance, ...]:
    """One acceptance per finding: the first word on it stands."""
    by_id: dict[str, Acceptance] = {}
    for acceptance in acceptances:
        by_id.setdefault(acceptance.finding_id, acceptance)
    return tuple(by_id.values())


def apply_acceptances(findings: Iterable[Finding], acceptances: Iterable[Acceptance]) -> tuple[Finding, ...]:
    """Each finding a trusted person accepted is dismissed with who and why, whichever reviewer
    found it (model reviewers too): still reported, never blocking."""
    by_id = {item.finding_id: item for item in first_acceptances(acceptances)}
    result: list[Finding] = []
    for finding in findings:
        acceptance = by_id.get(finding.id)
        if acceptance is not None:
            finding = finding.with_changes(dismissed=f"accepted by {acceptance.author}: {acceptance.reason}")
        result.append(finding)
    return tuple(result)
