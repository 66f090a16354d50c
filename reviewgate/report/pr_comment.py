"""One summary comment per PR (GitHub) or MR note (GitLab), found by its hidden marker and
edited in place on every run: never a new comment per push.

Its first line is `REVIEW: APPROVE` or `REVIEW: REQUEST CHANGES` (the comment is
for people; the check run and report.json are the structured record and win where they
differ); a review that could not be done says `REVIEW: BLOCKED`, never approval. Hidden
metadata binds it to the head SHA and patch hash and carries the round history.
"""

from __future__ import annotations

from reviewgate.escaping import mask
from reviewgate.forge.http import ForgeDenied, ForgeError, ForgeNotFound
from reviewgate.forge.metadata import MARKER, CommentMetadata, render_metadata
from reviewgate.forge.rounds import gave_up_note
from reviewgate.forge.session import ForgeRun
from reviewgate.gate import Decision
from reviewgate.report.base import SinkContext
from reviewgate.report.sections import Section, render_sections
from reviewgate.report.summary import artifact_place, size_budget, summary_sections
from reviewgate.result import GateResult

FIRST_LINES = {
    Decision.APPROVE: "REVIEW: APPROVE",
    Decision.REQUEST_CHANGES: "REVIEW: REQUEST CHANGES",
    Decision.BLOCKED: "REVIEW: BLOCKED",
}
# GitHub rejects comment bodies over 65,536 characters (GitLab notes allow 1,000,000); the
# smaller limit serves both. Counted in UTF-8 bytes, which are never fewer than the characters.
MAX_COMMENT_BYTES = 65536


def _rounds_section(result: GateResult) -> Section:
    """Where the review loop stands: at the cap, a person must look (the blocking findings follow)."""
    rounds = result.rounds
    if rounds is not None and rounds.gave_up:
        label = result.forge.settings.label if result.forge else None
        return Section("the review rounds", [f"**{gave_up_note(rounds, label)}**", ""], kept=True)
    if rounds is not None and rounds.counted:
        return Section("the review rounds",
                       [f"Rounds of requested changes so far: {rounds.counted} of {rounds.max_rounds}.", ""], kept=True)
    return Section("the review rounds")


def _places(result: GateResult, check_run_annotated: bool) -> list[str]:
    """Where a reader finds what the comment left out: the check run when it carries the
    annotations, and the outputs the example workflows upload."""
    forge = result.forge
    places = []
    if check_run_annotated and forge is not None:
        places.append(f"in the check run `{forge.settings.check_name}` (an annotation on each line)")
    return [*places, artifact_place(result)]


def render_comment(result: GateResult, notes: list[str], check_run_annotated: bool = False) -> str:
    """The first line and hidden metadata, then the summary's sections (the rounds under the
    verdict), within GitHub's size limit: whole entries are left out from the end, with a line
    saying which and where they are."""
    metadata = CommentMetadata(
        head_sha=result.target.head_sha,
        patch_sha256=result.target.patch_sha256,
        verdict=result.verdict.decision.value,
        rounds=result.rounds.history if result.rounds else (),
    )
    head = [FIRST_LINES[result.verdict.decision], "", MARKER, render_metadata(metadata), ""]
    sections = [Section("the comment's head", head, kept=True), *summary_sections(result, notes)]
    sections.insert(2, _rounds_section(result))
    budget = size_budget(MAX_COMMENT_BYTES, "the 65,536-character limit of a comment",
                         _places(result, check_run_annotated))
    return mask(render_sections(sections, budget).rstrip() + "\n")


RECREATED_NOTE = "The {place} had been deleted since it was last written; a new one was made."


def _publish_github(forge: ForgeRun, body: str, gave_up: bool, cleared: bool) -> bool:
    """True when the marker comment had vanished (404 on the edit) and was made again."""
    assert forge.number is not None
    api = forge.github()
    recreated = False
    if forge.comment_id is not None:
        try:
            api.edit_comment(forge.comment_id, body)
        except ForgeNotFound:
            recreated = True
    if forge.comment_id is None or recreated:
        api.create_comment(forge.number, body)
    if gave_up:
        api.add_labels(forge.number, [forge.settings.label])
    elif cleared:
        api.remove_label(forge.number, forge.settings.label)
    return recreated


def _publish_gitlab(forge: ForgeRun, body: str, gave_up: bool, cleared: bool) -> bool:
    """True when the marker note had vanished (404 on the edit) and was made again."""
    assert forge.number is not None
    api = forge.gitlab()
    recreated = False
    if forge.comment_id is not None:
        try:
            api.edit_note(forge.number, forge.comment_id, body)
        except ForgeNotFound:
            recreated = True
    if forge.comment_id is None or recreated:
        api.create_note(forge.number, body)
    if gave_up:
        api.add_labels(forge.number, [forge.settings.label])
    elif cleared:
        api.remove_label(forge.number, forge.settings.label)
    return recreated


def label_cleared(forge: ForgeRun, result: GateResult) -> bool:
    """An approval after the loop gave up takes the round-cap label off again: the person it
    called for is no longer needed, and a stale label would keep the PR out of every queue."""
    previous = forge.previous
    return (result.verdict.decision is Decision.APPROVE and previous is not None
            and previous.verdict == Decision.REQUEST_CHANGES.value)


def _nothing_to_say(result: GateResult) -> bool:
    """A first review that approves with no finding at all: a comment would only be noise in the
    conversation. Once a comment exists it is kept up to date, whatever the verdict."""
    forge = result.forge
    return (forge is not None and forge.comment_id is None and not result.findings
            and result.verdict.decision is Decision.APPROVE)


class PullRequestCommentSink:
    name = "pr-comment"

    def applies(self, result: GateResult) -> bool:
        forge = result.forge
        return forge is not None and forge.writes_to_pull_request and forge.settings.comment

    def publish(self, result: GateResult, context: SinkContext) -> None:
        forge = result.forge
        assert forge is not None
        place = "PR comment" if forge.provider == "github" else "MR note"
        if _nothing_to_say(result):
            context.log.notes.append(f"No {place}: approved with no findings, and there is no earlier one to update "
                                     "(the check and the summary say so).")
            return
        body = render_comment(result, context.log.notes, context.log.check_run_annotated)
        gave_up = result.rounds is not None and result.rounds.gave_up
        if forge.comments_unread:
            self._failed(context, place, "the existing comments could not be read, so the summary comment "
                         "could not be found to edit")
            return
        try:
            cleared = label_cleared(forge, result)
            publish_to = _publish_github if forge.provider == "github" else _publish_gitlab
            if publish_to(forge, body, gave_up, cleared):
                context.log.notes.append(RECREATED_NOTE.format(place=place))
        except ForgeDenied as error:
            reason = f"{error}: the token may not write here (needs pull-requests: write, or the api scope)"
            self._failed(context, place, reason)
        except ForgeError as error:
            self._failed(context, place, str(error))

    @staticmethod
    def _failed(context: SinkContext, place: str, reason: str) -> None:
        note = f"The {place} (and any round-cap label) was not published: {reason}. The verdict stands."
        context.log.notes.append(note)
        context.log.failures.append(f"{place}: {reason}")
