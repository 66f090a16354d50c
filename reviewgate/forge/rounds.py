"""Review rounds on one PR/MR, and the cap after which a person must look.

Pure: the history comes from the summary comment's hidden metadata and goes back into it.
Each distinct reviewed patch (`patch_sha256`) whose verdict is request_changes is one round;
re-running the same patch is the same round. A blocked run (provider or setup failure) is not
a review, so it is not recorded and consumes no round. When the rounds reach
`review.max_rounds` (default 3) and the reviewer still
requests changes, the loop stops: the gate still fails and a person must look.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from reviewgate.findings import Finding, Severity

REQUEST_CHANGES = "request_changes"
BLOCKED = "blocked"
# Bounds the hidden metadata in the comment (GitHub comments hold 65,536 characters);
# a PR with more reviewed patches than this has long been handed to a person.
MAX_HISTORY = 50


class RoundEntry(NamedTuple):
    """One review round as the summary comment's history keeps it: the head, its patch and the verdict."""

    head_sha: str
    patch_sha256: str
    verdict: str

    def to_json(self) -> dict[str, str]:
        return {"head_sha": self.head_sha, "patch_sha256": self.patch_sha256, "verdict": self.verdict}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoundEntry | None:
        """None for an entry that is not ours in shape: metadata is read back from a comment."""
        values = [data.get(key) for key in ("head_sha", "patch_sha256", "verdict")]
        if not all(isinstance(value, str) and value for value in values):
            return None
        return cls(str(values[0]), str(values[1]), str(values[2]))


class Rounds(NamedTuple):
    """The review rounds counted so far, and whether the loop gave up and a person must look."""

    history: tuple[RoundEntry, ...]  # including this run, unless it was blocked
    counted: int  # not `count`: a NamedTuple's field would hide tuple.count
    max_rounds: int
    gave_up: bool
    # The blocker and major findings still open when the loop gave up: a person must look.
    given_up_findings: tuple[Finding, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.counted,
            "max_rounds": self.max_rounds,
            "gave_up": self.gave_up,
            "given_up_findings": [item.id for item in self.given_up_findings],
        }


def record(history: Iterable[RoundEntry], entry: RoundEntry) -> tuple[RoundEntry, ...]:
    """The history with this run in it: a patch reviewed again replaces its own entry, the
    newest last; a blocked run leaves the history as it was."""
    entries = list(history)
    if entry.verdict == BLOCKED:
        return tuple(entries[-MAX_HISTORY:])
    entries = [item for item in entries if item.patch_sha256 != entry.patch_sha256]
    entries.append(entry)
    return tuple(entries[-MAX_HISTORY:])


def count_rounds(history: Iterable[RoundEntry]) -> int:
    return len({item.patch_sha256 for item in history if item.verdict == REQUEST_CHANGES})


def decide_rounds(
    history: Iterable[RoundEntry],
    entry: RoundEntry,
    max_rounds: int,
    blocking: Iterable[Finding] = (),
) -> Rounds:
    updated = record(history, entry)
    count = count_rounds(updated)
    gave_up = entry.verdict == REQUEST_CHANGES and count >= max_rounds
    serious = tuple(item for item in blocking if item.severity in (Severity.BLOCKER, Severity.MAJOR))
    return Rounds(updated, count, max_rounds, gave_up, serious if gave_up else ())


def gave_up_note(rounds: Rounds, label: str | None = None) -> str:
    """The one sentence the summary, the comment and the console carry at the cap."""
    labelled = f" (label `{label}`)" if label else ""
    return (
        f"Review round {rounds.counted} of {rounds.max_rounds}: the review loop gave up{labelled}; "
        f"a person must look at the {len(rounds.given_up_findings)} blocker/major finding(s) still open."
    )
