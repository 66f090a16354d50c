"""The forge's part of a gate run, as small pure steps run.py calls in order: feed the
conversation into the review request, decide the rounds after the verdict, and say what the
summary must say about both."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewgate.config import Config
from reviewgate.context import ReviewRequest
from reviewgate.forge.rounds import RoundEntry, Rounds, decide_rounds, gave_up_note
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.gate import Verdict
from reviewgate.text import truncate

if TYPE_CHECKING:
    from reviewgate.forge.session import ForgeRun

BUILTIN_PROVIDER = "builtin"


def apply_conversation(request: ReviewRequest, forge: ForgeRun | None) -> ReviewRequest:
    """REPRODUCTION: and REVIEW-REJECTED: from trusted authors go to every reviewer; a
    reproduction the request already carries (from the repository) is kept."""
    if forge is None:
        return request
    conversation = forge.conversation
    return request._replace(
        reproduction=request.reproduction or conversation.reproduction,
        rejections=(*request.rejections, *conversation.rejections),
    )


def builtin_sources(config: Config) -> tuple[str, ...]:
    """The `source` of deterministic findings, which a trusted REVIEW-REJECTED: by someone who
    did not write the change dismisses here (model reviewers read the rejection and judge it)."""
    names = {name for name in config.review.reviewers if config.reviewer(name).provider == BUILTIN_PROVIDER}
    return tuple(sorted(names | {BUILTIN_PROVIDER}))


def conversation_notes(forge: ForgeRun | None) -> list[str]:
    if forge is None:
        return []
    notes = list(forge.notes)
    ignored = forge.conversation.untrusted_ignored
    if ignored:
        notes.append(f"{ignored} REPRODUCTION:/REVIEW-REJECTED: comment(s) from authors without write access "
                     "were not read (trusted: owners, members, collaborators, or the configured list).")
    rejected = len(forge.conversation.rejections)
    if rejected:
        notes.append(f"{rejected} trusted REVIEW-REJECTED: answer(s) were given to the reviewers.")
    notes += forge.conversation.refused
    return notes


def decide_rounds_for(
    forge: ForgeRun | None, target: FrozenTarget, verdict: Verdict, max_rounds: int
) -> Rounds:
    """Rounds counted from the summary comment's history (none on a local run or without it)."""
    history = forge.previous.rounds if forge is not None and forge.previous is not None else ()
    entry = RoundEntry(target.head_sha, target.patch_sha256, verdict.decision.value)
    return decide_rounds(history, entry, max_rounds, verdict.blocking)


def rounds_notes(forge: ForgeRun | None, rounds: Rounds) -> list[str]:
    if not rounds.gave_up:
        return []
    label = forge.settings.label if forge is not None and forge.number is not None else None
    listed = [f"{item.location}: {item.title}" for item in rounds.given_up_findings]
    return [gave_up_note(rounds, label), *(f"Still open: {text}" for text in listed)]


# GitHub: a check run's output summary is at most 65,535 characters.
_ABANDON_SUMMARY_LIMIT = 60_000


def abandon_check_run(forge: ForgeRun | None, reason: str) -> None:
    """Complete the check run of a gate that stopped before publishing (an internal error, a
    cancellation), so it never hangs `in_progress` on the pull request, and never as success.
    Best effort: the gate is already failing, and a forge error must not hide the first one."""
    if forge is None or forge.provider != "github" or forge.check_run_id is None:
        return
    if forge.existing_conclusion is not None:
        return  # completed by an earlier run of the same head and patch: leave its verdict
    # Loaded with the forge run itself: a local run has none and never imports the clients.
    from reviewgate.forge.http import ForgeError
    from reviewgate.forge.session import utc_now

    body = {
        "status": "completed",
        "conclusion": forge.settings.blocked_conclusion,
        "completed_at": utc_now(),
        "output": {
            "title": "reviewgate stopped before the review was complete",
            "summary": truncate(f"The review was not completed: {reason}", _ABANDON_SUMMARY_LIMIT),
        },
    }
    try:
        forge.github().update_check_run(forge.check_run_id, body)
    except ForgeError:
        pass
