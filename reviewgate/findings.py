"""The one finding record every reviewer produces and every sink consumes."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from reviewgate.lazy_patterns import LazyPattern


class FindingClass(str, enum.Enum):
    """The finding classes: what kind of problem, which decides whether it can block."""

    SYSTEMATIC = "systematic"
    CORRECTNESS = "correctness"
    READABILITY = "readability"
    PRODUCT_QUESTION = "product_question"


# A finding's `extra` key saying why a lens reports it at minor as intended or as written before this
# change (a fallback whose comment says why, a swallowed error in test code, a moved block,
# boilerplate by design): the summary lists it, the diff is not annotated with it.
DEMOTED = "demoted"
# A finding's `extra` key saying why it is reported at its severity but does not block: its rule
# has not earned blocking on measured history, and the config did not ask for it (the reason).
ADVISORY = "advisory"
BY_DESIGN, SUPPORT_CODE, MOVED = "by design", "support code", "moved"


class Severity(str, enum.Enum):
    BLOCKER = "blocker"
    MAJOR = "major"
    MINOR = "minor"
    NIT = "nit"

    @property
    def rank(self) -> int:
        """Higher is more severe; used to compare against a policy threshold."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.BLOCKER: 3, Severity.MAJOR: 2, Severity.MINOR: 1, Severity.NIT: 0}

_WHITESPACE = LazyPattern(r"\s+")


def normalize_text(text: str) -> str:
    """Lower-case, whitespace-folded text: the part of a title or code line that identifies it."""
    return _WHITESPACE.sub(" ", text).strip().lower()


def make_finding_id(source: str, path: str | None, category: str, title: str, code: str = "") -> str:
    """A stable id: the same finding on the same code keeps it across runs and line shifts.

    The line number is left out on purpose so that an edit above the finding does not
    make it look new; the code it is about stands in for the position.
    """
    key = "\x1f".join([source, path or "", category, normalize_text(title), normalize_text(code)])
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


class Finding(NamedTuple):
    """One problem a reviewer reports. `path` None means the change as a whole;
    `line` None means the file as a whole."""

    id: str
    finding_class: FindingClass
    severity: Severity
    category: str
    title: str
    body: str
    source: str
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    rule: str = ""
    # Set when a trusted REVIEW-REJECTED answer or a suppression set the finding aside:
    # it is still reported, with this reason, but it never blocks.
    dismissed: str | None = None
    # One empty mapping shared by the findings without extras: a Mapping, so nothing (mypy
    # checks) changes it in place; with_changes gives a finding extras of its own.
    extra: Mapping[str, Any] = {}

    @property
    def rule_id(self) -> str:
        """The rule's one name, shown by every output and taken by `reviewgate: ignore[...]`; a
        finding whose reviewer gave no rule (an imported or model finding may not) shows its category."""
        return self.rule or self.category

    @property
    def location(self) -> str:
        if self.path is None:
            return "(change)"
        if self.line is None:
            return self.path
        return f"{self.path}:{self.line}"

    def with_changes(self, **changes: Any) -> Finding:
        return self._replace(**changes)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "class": self.finding_class.value,
            "severity": self.severity.value,
            "category": self.category,
            "rule": self.rule,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "title": self.title,
            "body": self.body,
            "source": self.source,
            "dismissed": self.dismissed,
        }
        if self.extra:
            data["extra"] = dict(self.extra)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        return cls(
            id=str(data["id"]),
            finding_class=FindingClass(data["class"]),
            severity=Severity(data["severity"]),
            category=str(data["category"]),
            rule=str(data.get("rule") or ""),
            path=data.get("path"),
            line=data.get("line"),
            end_line=data.get("end_line"),
            title=str(data["title"]),
            body=str(data.get("body") or ""),
            source=str(data["source"]),
            dismissed=data.get("dismissed"),
            extra=dict(data.get("extra") or {}),
        )


def sort_key(finding: Finding) -> tuple[int, str, int, str]:
    """Most severe first, then by place: the order people read findings in."""
    return (-finding.severity.rank, finding.path or "", finding.line or 0, finding.id)


def one_per_place(findings: Iterable[Finding]) -> list[Finding]:
    """Every occurrence its own finding, each with an id of its own. Findings sharing an id (the id
    leaves the line out, so the same code in several places shares one) are kept once per place;
    in order of line, the first keeps the id and the 2nd, 3rd, ... get `-2`, `-3`, ...: ids that
    existed before stay, and a shift of every line keeps them all. The same finding at the same
    place (two reviewers, two lenses) is kept once, the first given."""
    places: dict[str, dict[tuple[str, int, int], Finding]] = {}
    for finding in findings:
        place = (finding.path or "", finding.line or 0, finding.end_line or 0)
        places.setdefault(finding.id, {}).setdefault(place, finding)
    distinct: list[Finding] = []
    for identifier, by_place in places.items():
        ordered = [by_place[place] for place in sorted(by_place)]
        distinct.append(ordered[0])
        distinct += [finding.with_changes(id=f"{identifier}-{ordinal}") for ordinal, finding in enumerate(ordered[1:], 2)]
    return distinct
