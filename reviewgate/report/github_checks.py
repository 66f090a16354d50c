"""A GitHub check run with annotations on the changed lines (REST "Check runs").

The run is created `in_progress` when the review starts (forge/session.py); this sink sends
the annotations in updates of at most 50 (GitHub: "The Checks API limits the number of
annotations to a maximum of 50 per API request"; later updates append) and completes the run
in the last one. A read-only token (a fork PR) answers 403/404: the annotations then go out as
workflow commands (github_annotations.py), said once, and the exit code stands. A started run
is always completed: when an annotations update is refused (a 422) or cannot be sent, one more
update completes it without them, saying so in its summary.
"""

from __future__ import annotations

from typing import Any

from reviewgate.escaping import one_line, plain
from reviewgate.findings import Finding, sort_key
from reviewgate.forge.http import ForgeDenied, ForgeError
from reviewgate.forge.session import ForgeRun, external_id, in_progress_body, utc_now
from reviewgate.gate import Decision
from reviewgate.report.annotated import add_not_annotated_note, annotated
from reviewgate.report.base import SinkContext
from reviewgate.report.github_annotations import annotation_level, annotation_message, annotation_title
from reviewgate.report.summary import artifact_place, render_summary, size_budget
from reviewgate.result import GateResult
from reviewgate.text import printable, truncate, truncate_utf8

MAX_ANNOTATIONS_PER_REQUEST = 50  # GitHub Checks API, per create/update request
# output.summary and output.text (checks/update maxLength 65535). GitHub appears to count it in
# bytes of UTF-8 (github/rest-api-description#5399), so the cut is in bytes: safe either way.
MAX_OUTPUT_CHARS = 65535
MAX_ANNOTATION_TITLE_CHARS = 255  # annotation title
MAX_ANNOTATION_TEXT_BYTES = 64 * 1024  # annotation message and raw_details: 64 KB each
CHECK_LEVELS = {"error": "failure", "warning": "warning", "notice": "notice"}

DENIED_NOTE = (
    "GitHub check run not published ({reason}): the token is read-only here (a fork PR's token, or no "
    "`checks: write`). The annotations were written as workflow commands instead; the verdict stands."
)
ANNOTATIONS_REJECTED_NOTE = (
    "The check run's annotations were not accepted ({reason}): the run was completed with the verdict "
    "but without them, and they were written as workflow commands instead. The verdict stands."
)
FAILED_NOTE = (
    "GitHub check run not published ({reason}). The annotations were written as workflow commands "
    "instead; the verdict stands."
)


def conclusion_for(decision: Decision, blocked_conclusion: str) -> str:
    conclusions = {Decision.APPROVE: "success", Decision.REQUEST_CHANGES: "failure"}
    return conclusions.get(decision, blocked_conclusion)


def check_annotation(finding: Finding, blocking: bool) -> dict[str, Any] | None:
    """None for a finding on the change as a whole: it has no file, so only the summary lists it.
    A finding on a file without a line sits on line 1, titled so."""
    if finding.path is None:
        return None
    start = finding.line or 1
    spans = finding.line is not None and finding.end_line is not None and finding.end_line >= start
    end = finding.end_line if spans and finding.end_line is not None else start
    title = annotation_title(finding)
    if finding.line is None:
        title = f"(whole file) {title}"
    message = annotation_message(finding)
    details = f"id {finding.id}, source {finding.source}" + (f", rule {finding.rule}" if finding.rule else "")
    return {
        "path": printable(finding.path),  # GitHub matches it to the diff: kept as it is
        "start_line": start,
        "end_line": end,
        "annotation_level": CHECK_LEVELS[annotation_level(finding, blocking)],
        "title": truncate(one_line(title), MAX_ANNOTATION_TITLE_CHARS, "…"),
        "message": truncate_utf8(plain(message), MAX_ANNOTATION_TEXT_BYTES),
        "raw_details": truncate_utf8(details, MAX_ANNOTATION_TEXT_BYTES),
    }


def output_title(result: GateResult) -> str:
    verdict = result.verdict
    if verdict.decision is Decision.APPROVE:
        title = f"Approved, {len(result.findings)} finding(s)"
    elif verdict.decision is Decision.REQUEST_CHANGES:
        title = f"Changes requested: {len(verdict.blocking)} blocking of {len(result.findings)} finding(s)"
    else:
        title = "Not reviewed: the review could not be finished (not a judgement of the code)"
    if result.rounds is not None and result.rounds.gave_up:
        title += f" (round cap {result.rounds.max_rounds} reached: a person must look)"
    return title


def output_summary(result: GateResult, notes: list[str], with_annotations: bool = True) -> str:
    """The summary within the field's limit: whole entries left out from the end, saying where they are."""
    places = ["as an annotation on its line in this check run"] if with_annotations else []
    budget = size_budget(MAX_OUTPUT_CHARS, f"GitHub's {MAX_OUTPUT_CHARS:,}-character limit of a check run's summary",
                         [*places, artifact_place(result)])
    return render_summary(result, notes, budget)


def update_bodies(result: GateResult, blocked_conclusion: str, notes: list[str],
                  with_annotations: bool = True) -> list[dict[str, Any]]:
    """The PATCH bodies: one per batch of at most 50 annotations (at least one), the last one
    completing the run with its conclusion."""
    annotations = [
        item for item in (check_annotation(finding, result.is_blocking(finding))
                          for finding in sorted(result.findings, key=sort_key)
                          if annotated(finding, result.is_blocking(finding))) if item is not None
    ] if with_annotations else []
    batches = [annotations[start:start + MAX_ANNOTATIONS_PER_REQUEST]
               for start in range(0, len(annotations), MAX_ANNOTATIONS_PER_REQUEST)] or [[]]
    output = {"title": output_title(result), "summary": output_summary(result, notes, with_annotations)}
    bodies: list[dict[str, Any]] = []
    for batch in batches:
        body: dict[str, Any] = {"output": {**output, "annotations": batch} if batch else dict(output)}
        bodies.append(body)
    bodies[-1].update(
        status="completed",
        conclusion=conclusion_for(result.verdict.decision, blocked_conclusion),
        completed_at=utc_now(),
        external_id=external_id(result.target),
    )
    return bodies


def _fallback(context: SinkContext, reason: str, denied: bool) -> None:
    """Said once, in the notes the console and the summaries print; the annotations sink,
    which runs next, writes the workflow commands because no check run carries them."""
    note = (DENIED_NOTE if denied else FAILED_NOTE).format(reason=reason)
    context.log.notes.append(note)
    context.log.failures.append(f"check run: {reason}")


class GithubCheckRunSink:
    name = "github-check-run"

    def applies(self, result: GateResult) -> bool:
        forge = result.forge
        return (forge is not None and forge.provider == "github" and forge.token is not None
                and forge.settings.check_run)

    def publish(self, result: GateResult, context: SinkContext) -> None:
        forge = result.forge
        assert forge is not None
        if forge.check_run_denied:
            _fallback(context, forge.check_run_problem or "denied", denied=True)
            return
        settings = forge.settings
        conclusion = conclusion_for(result.verdict.decision, settings.blocked_conclusion)
        if forge.check_run_id is not None and forge.existing_conclusion == conclusion:
            # A re-run on the same head and patch: the run and its annotations are already there.
            context.log.check_run_annotated = True
            context.log.notes.append(
                f"Check run `{settings.check_name}` was already completed ({conclusion}) for this head and "
                "patch; its annotations were not posted again."
            )
            return
        try:
            self._send(result, forge, context)
        except ForgeDenied as error:
            _fallback(context, str(error), denied=True)
        except ForgeError as error:
            _fallback(context, str(error), denied=False)

    def _send(self, result: GateResult, forge: ForgeRun, context: SinkContext) -> None:
        api = forge.github()
        check_run_id = forge.check_run_id
        if check_run_id is None or forge.existing_conclusion is not None:
            # Not started (the start failed), or completed earlier with another conclusion
            # (say a blocked run): a new run, which GitHub shows as the latest of that name.
            body = in_progress_body(forge.settings, result.target, forge.check_sha, result.ci.run_url)
            created = api.create_check_run(body)
            if not isinstance(created.get("id"), int):
                raise ForgeError("POST check-runs: the answer carried no id")
            check_run_id = int(created["id"])
        add_not_annotated_note(result.findings, result.is_blocking, context.log.notes)
        try:
            for update in update_bodies(result, forge.settings.blocked_conclusion, context.log.notes):
                api.update_check_run(check_run_id, update)
        except ForgeError as error:
            # A started run must never stay in_progress: complete it with the verdict, without
            # the annotations, and say why there; the annotations go out as workflow commands.
            note = ANNOTATIONS_REJECTED_NOTE.format(reason=error)
            completion = update_bodies(result, forge.settings.blocked_conclusion,
                                       [*context.log.notes, note], with_annotations=False)[-1]
            api.update_check_run(check_run_id, completion)
            context.log.notes.append(note)
            context.log.failures.append(f"check run annotations: {error}")
            return
        context.log.check_run_annotated = True
