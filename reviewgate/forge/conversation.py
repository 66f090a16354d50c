"""What the PR/MR conversation may feed into a review (and what it may not).

From trusted authors only: a `REPRODUCTION:` comment (the harness's cases, an acceptance test),
`REVIEW-REJECTED: <file>:<line> reason` lines (an earlier round argued a finding does not
hold) and `ACCEPTED: <finding-id> reason` lines (a person overrules the gate on one finding,
on the record: final for that PR, whichever reviewer found it). Earlier `REVIEW:` comments and our own summary comment are never read: they hold
another reviewer's conclusions, and reading them makes the round an echo.

Only a trusted person who did not write the change overrules the gate (DESIGN.md, "The branch
controls nothing"): an `ACCEPTED:` by the change's author or a committer of it counts for
nothing, and their `REVIEW-REJECTED:` is an answer model reviewers read and judge, which sets no
finding aside by itself. The same holds for a comment edited by someone else, or by someone
unknown: its words may not be its author's. Only the comment's own lines count (own_text.py).

Pure: the forge clients turn API answers into `Comment`s, deciding `trusted` by the forge's
rules (GitHub author_association, GitLab access level) and `edited`, and list who wrote the
change (`ChangeAuthors`); this module reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from reviewgate.context import Rejection
from reviewgate.findings import Finding
from reviewgate.forge.own_text import own_lines

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
    # Empty when the words are as its author wrote them (or only the author edited them); else
    # why they may be someone else's: EDITOR_UNKNOWN, or who else edited them.
    edited: str = ""
    emails: frozenset[str] = frozenset()  # the author's addresses, where the forge gives them (lower case)


EDITOR_UNKNOWN = "edited after it was written; the editor is unknown"


def edited_by(editors: Iterable[str]) -> str:
    return f"edited by {', '.join(sorted(set(editors)))} after it was written"


def parse_moment(text: str) -> datetime | None:
    """A forge's ISO 8601 time with its zone; None for anything else."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def changed_after_creation(created_at: object, updated_at: object) -> bool:
    """Whether the forge says the comment changed after it was written: its two times are not
    the same moment (the same text when either is not a time). Either time absent says nothing."""
    if not created_at or not updated_at:
        return False
    created, updated = parse_moment(str(created_at)), parse_moment(str(updated_at))
    if created is None or updated is None:
        return str(created_at).strip() != str(updated_at).strip()
    return created != updated


@dataclass(frozen=True)
class ChangeAuthors:
    """Who wrote the change: the PR/MR author and its commits' authors and committers, as the
    forge names them. Their own ACCEPTED:/REVIEW-REJECTED: overrules nothing on it."""

    logins: frozenset[str] = frozenset()  # lower case
    emails: frozenset[str] = frozenset()  # lower case
    unknown: str = ""  # why they could not be listed: then no overrule counts

    def wrote(self, comment: Comment) -> bool:
        return comment.author.lower() in self.logins or bool(comment.emails & self.emails)


def change_authors(logins: Iterable[str], emails: Iterable[str]) -> ChangeAuthors:
    return ChangeAuthors(frozenset(item.lower() for item in logins if item),
                         frozenset(item.lower() for item in emails if item))


# What read_conversation assumes when nobody listed the change's authors: nobody overrules.
AUTHORS_NOT_LISTED = ChangeAuthors(unknown="the change's authors were not listed")


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
    # ACCEPTED: lines that were not taken (untrusted author, no reason, the change's own author,
    # an edited comment) and REVIEW-REJECTED: lines that set nothing aside, each said in a note.
    refused: tuple[str, ...] = field(default_factory=tuple)


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
    return first.startswith(REPRODUCTION_PREFIX) or any(_is_request_line(line) for line in own_lines(body))


def asks_to_overrule(body: str) -> bool:
    """Whether the comment's own text has an ACCEPTED: or REVIEW-REJECTED: line (so who wrote
    the change must be known)."""
    return any(_is_request_line(line) for line in own_lines(body))


def overrule_refusal(comment: Comment, authors: ChangeAuthors) -> str | None:
    """Why a trusted comment may not overrule the gate, or None when it may."""
    if authors.unknown:
        return f"who wrote the change is not known ({authors.unknown}), so nobody overrules it in this run"
    if authors.wrote(comment):
        return (f"{comment.author} wrote this change (its author or a committer of it); only someone "
                "who did not write it can overrule the gate on it")
    if comment.edited:
        return f"the comment was {comment.edited}"
    return None


def _acceptances(comment: Comment, authors: ChangeAuthors) -> tuple[list[Acceptance], list[str]]:
    """The comment's ACCEPTED: lines that count, and a note for each that does not."""
    taken: list[Acceptance] = []
    ignored: list[str] = []
    for line in own_lines(comment.body):
        acceptance = parse_acceptance(line, comment.author)
        if acceptance is None:
            continue
        refusal = overrule_refusal(comment, authors) if comment.trusted else None
        if not comment.trusted:
            ignored.append(f"ACCEPTED: {acceptance.finding_id} by {comment.author or 'an unknown author'} was "
                           "ignored: only authors with write access (or the configured list) can accept a finding.")
        elif refusal is not None:
            ignored.append(f"ACCEPTED: {acceptance.finding_id} by {comment.author} was ignored: {refusal}.")
        elif not acceptance.reason:
            ignored.append(f"ACCEPTED: {acceptance.finding_id} by {comment.author} was ignored: it gives no reason "
                           "(write `ACCEPTED: <finding-id> <why the finding may stand>`).")
        else:
            taken.append(acceptance)
    return taken, ignored


def _rejections(comment: Comment, authors: ChangeAuthors) -> tuple[list[Rejection], list[str]]:
    """A trusted comment's REVIEW-REJECTED: lines, each marked whether it sets a finding aside
    by itself, and a note for each that does not."""
    refusal = overrule_refusal(comment, authors)
    rejections: list[Rejection] = []
    notes: list[str] = []
    for line in own_lines(comment.body):
        rejection = parse_rejection(line, comment.author, comment.created_at)
        if rejection is None:
            continue
        rejections.append(rejection._replace(dismisses=refusal is None))
        if refusal is not None:
            where = rejection.path + (f":{rejection.line}" if rejection.line is not None else "")
            notes.append(f"REVIEW-REJECTED: {where} by {comment.author} sets no finding aside: {refusal}. "
                         "Model reviewers read it as an answer.")
    return rejections, notes


def read_conversation(comments: Iterable[Comment], authors: ChangeAuthors = AUTHORS_NOT_LISTED) -> Conversation:
    """The newest trusted REPRODUCTION:, every trusted REVIEW-REJECTED: and ACCEPTED: line,
    oldest first; `authors` wrote the change, so their own words overrule nothing."""
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
        taken, refused = _acceptances(comment, authors)
        acceptances += taken
        ignored += refused
        if not comment.trusted:
            if _first_line(comment.body).startswith(REPRODUCTION_PREFIX) or any(
                line.startswith(REJECTION_PREFIX) for line in own_lines(comment.body)
            ):
                untrusted += 1
            continue
        if _first_line(comment.body).startswith(REPRODUCTION_PREFIX):
            reproduction = comment.body.strip()
        answers, refused = _rejections(comment, authors)
        rejections += answers
        ignored += refused
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
    aside with the reason: still reported, never blocking (gate.blocks), when the rejection may
    set findings aside (`dismisses`: not the change's own author's). Model reviewers get every
    rejection in their request instead and judge them themselves."""
    answered = tuple(item for item in rejections if item.dismisses)
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
