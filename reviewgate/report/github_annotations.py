"""Workflow-command annotations on stdout, for GitHub Actions.

GitHub shows at most 10 errors, 10 warnings and 10 notices per step (and 50 per job), so we
emit at most 10 per level, most severe first; the rest are counted in a final line and
listed in the summary. Only findings worth a line of the diff are annotated (report/annotated.py).
"""

from __future__ import annotations

from reviewgate.ci.workflow_commands import command
from reviewgate.findings import Finding, Severity, sort_key
from reviewgate.report.annotated import add_not_annotated_note, annotated
from reviewgate.report.base import SinkContext
from reviewgate.report.plain_text import markdown_to_plain
from reviewgate.result import GateResult
from reviewgate.text import printable

MAX_PER_LEVEL = 10  # GitHub: annotations shown per step, per level


def annotation_level(finding: Finding, blocking: bool) -> str:
    if blocking:
        return "error"
    if finding.severity is Severity.NIT or finding.dismissed is not None:
        return "notice"
    return "warning"


def annotation_title(finding: Finding) -> str:
    """The rule id in brackets, as `reviewgate: ignore[...]` takes it; a suppressed or otherwise
    dismissed finding says so first, since its level alone (notice) does not tell why. GitHub
    shows an annotation as plain text: the title's Markdown is taken out."""
    title = f"[{finding.severity.value} {finding.rule_id}] {markdown_to_plain(finding.title)}"
    return f"(suppressed) {title}" if finding.dismissed is not None else title


def annotation_message(finding: Finding) -> str:
    """The body (else the title) as plain text: an annotation does not render Markdown. A body of
    markers only (`>`) falls back to the title: GitHub needs a message."""
    message = markdown_to_plain(finding.body or finding.title).strip() or finding.title
    return f"({finding.dismissed}) {message}" if finding.dismissed else message


def annotation_line(finding: Finding, level: str) -> str:
    properties: dict[str, object] = {
        "file": printable(finding.path) if finding.path else None,
        "line": finding.line,
        "endLine": finding.end_line if finding.line is not None and finding.end_line else None,
        "title": annotation_title(finding),
    }
    return command(level, annotation_message(finding), properties)


class GithubAnnotationsSink:
    name = "github-annotations"

    def applies(self, result: GateResult) -> bool:
        return result.ci.is_github

    def publish(self, result: GateResult, context: SinkContext) -> None:
        if context.log.check_run_annotated:
            return
        emitted = {"error": 0, "warning": 0, "notice": 0}
        left_out: list[Finding] = []
        for finding in sorted(result.findings, key=sort_key):
            blocking = result.is_blocking(finding)
            if not annotated(finding, blocking):
                continue  # counted in the summary's note
            level = annotation_level(finding, blocking)
            if emitted[level] >= MAX_PER_LEVEL:
                left_out.append(finding)
                continue
            emitted[level] += 1
            context.stdout.write(annotation_line(finding, level) + "\n")
        if left_out:
            note = (
                f"{len(left_out)} more finding(s) were not annotated (GitHub shows {MAX_PER_LEVEL} per level "
                "per step); all are listed in the summary and report.json."
            )
            context.stdout.write(note + "\n")
            context.log.notes.append(note)
        add_not_annotated_note(result.findings, result.is_blocking, context.log.notes)
