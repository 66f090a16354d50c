"""summary.md: the readable account of a run, also used for GitHub's step summary."""

from __future__ import annotations

from reviewgate.escaping import (
    markdown_cell,
    markdown_code,
    markdown_suggestion,
    markdown_text,
    mask,
    one_line,
)
from reviewgate.findings import Finding, FindingClass
from reviewgate.gate import Decision
from reviewgate.report.base import SinkContext, finding_groups
from reviewgate.report.files import write_text
from reviewgate.report.instructions_section import render_instructions_section
from reviewgate.report.verdict_text import explain
from reviewgate.report.verify_section import render_verify_section
from reviewgate.result import GateResult
from reviewgate.text import short_sha

FILE_NAME = "summary.md"

HEADLINES = {
    Decision.APPROVE: "✅ reviewgate: approved",
    Decision.REQUEST_CHANGES: "❌ reviewgate: changes requested",
    Decision.BLOCKED: "⛔ reviewgate: not reviewed",
}


def _escape_cell(text: str) -> str:
    """Markdown table cells: a pipe or newline in untrusted text must not break the table, nor
    HTML, a mention or a control byte reach the reader (escaping.markdown_cell)."""
    return markdown_cell(text)


def _finding_row(finding: Finding, blocking: bool) -> str:
    mark = "**blocks**" if blocking else _escape_cell(finding.dismissed or "")
    return (
        f"| {_escape_cell(finding.location)} | {_escape_cell(finding.rule_id)} "
        f"| {finding.finding_class.value} | {_escape_cell(finding.title)} | {_escape_cell(finding.source)} | {mark} |"
    )


def _finding_body(finding: Finding) -> list[str]:
    """What to do about a finding: its body, escaped like any untrusted text (a model wrote it), and
    quoted line by line, so an unclosed code fence or a heading in it ends with the quote."""
    if not finding.body.strip():
        return []
    quoted = [f"> {line}".rstrip() for line in markdown_text(finding.body).splitlines()]
    return [f"**{_escape_cell(finding.location)}** {_escape_cell(finding.rule_id)}: {_escape_cell(finding.title)}",
            "", *quoted, ""]


def _finding_group(heading: str, group: list[Finding], result: GateResult) -> list[str]:
    lines = [f"#### {heading} ({len(group)})", "",
             "| where | rule | class | title | source | |", "|---|---|---|---|---|---|"]
    lines += [_finding_row(item, result.is_blocking(item)) for item in group]
    lines.append("")
    for item in group:
        lines += _finding_body(item)
    return lines


def _findings_section(result: GateResult) -> list[str]:
    lines = ["", "### Findings", ""]
    if not result.findings:
        lines += ["No findings.", ""]
    for heading, group in finding_groups(result.findings):
        lines += _finding_group(heading, group, result)
    return lines


# Reviewer notes (redactions, findings dropped or moved) listed per reviewer before pointing
# at report.json, which has them all: the summary stays readable on a large change.
MAX_NOTES_PER_REVIEWER = 10


def product_questions(result: GateResult) -> list[str]:
    """Questions for the product owner: they are listed, they never block (seed 000)."""
    questions = [question for outcome in result.outcomes for question in outcome.product_questions]
    questions += [item.title for item in result.findings
                  if item.finding_class is FindingClass.PRODUCT_QUESTION]
    return list(dict.fromkeys(questions))


def _reviewer_notes(result: GateResult) -> list[str]:
    lines: list[str] = []
    for outcome in result.outcomes:
        shown = outcome.notes[:MAX_NOTES_PER_REVIEWER]
        reviewer = _escape_cell(outcome.reviewer)
        lines += [f"- {reviewer}: {_escape_cell(note)}" for note in shown]
        if len(outcome.notes) > len(shown):
            lines.append(f"- {reviewer}: … {len(outcome.notes) - len(shown)} more in report.json")
    return ["", *lines] if lines else []


def _accepted_section(result: GateResult) -> list[str]:
    """Who overruled the gate on which finding, and why: before the findings, so a truncated
    check-run summary or PR comment still shows it."""
    if not result.acceptances:
        return []
    by_id = {item.id: item for item in result.findings}
    lines = ["", "### Accepted by people (they do not block)", "",
             "| finding | where | title | accepted by | reason |", "|---|---|---|---|---|"]
    for item in result.acceptances:
        finding = by_id.get(item.finding_id)
        where, title = (finding.location, finding.title) if finding else ("", "no finding of this run has this id")
        lines.append(f"| `{_escape_cell(item.finding_id)}` | {_escape_cell(where)} | {_escape_cell(title)} "
                     f"| {_escape_cell(item.author)} | {_escape_cell(item.reason)} |")
    return lines


def _suppressed_section(result: GateResult) -> list[str]:
    """Every suppression comment the change adds on a finding that would otherwise block."""
    if not result.branch_suppressions:
        return []
    lines = ["", "### Suppressed by this change", "",
             "| where | rule | title | reason given | |", "|---|---|---|---|---|"]
    for item in result.branch_suppressions:
        state = "**refused: it blocks**" if item.refused else "dismissed"
        lines.append(f"| {_escape_cell(item.finding.location)} | {_escape_cell(item.finding.rule_id)} "
                     f"| {_escape_cell(item.finding.title)} | {_escape_cell(item.reason or '(none)')} | {state} |")
    return lines


# Suggested changes shown in full; the rest are in report.json (a comment has a size cap).
MAX_SUGGESTIONS_SHOWN = 20


def _suggestions_section(result: GateResult) -> list[str]:
    """Each checked suggested change as a ```suggestion block; the dropped ones with why."""
    offered = [item for item in result.findings if isinstance(item.extra.get("suggestion"), dict)]
    dropped = [item for item in result.findings if item.extra.get("suggestion_dropped")]
    if not offered and not dropped:
        return []
    lines = ["### Suggested changes", ""]
    for item in offered[:MAX_SUGGESTIONS_SHOWN]:
        suggestion = item.extra["suggestion"]
        where = f"{item.path}:{suggestion.get('start_line')}-{suggestion.get('end_line')}"
        lines += [f"{markdown_code(where)} {markdown_text(one_line(item.title))}", "",
                  markdown_suggestion(str(suggestion.get("replacement", ""))), ""]
    if len(offered) > MAX_SUGGESTIONS_SHOWN:
        lines += [f"… {len(offered) - MAX_SUGGESTIONS_SHOWN} more in report.json", ""]
    lines += [f"- dropped a suggested change on {markdown_code(item.location)}: "
              f"{markdown_text(one_line(str(item.extra['suggestion_dropped'])))}" for item in dropped]
    return [*lines, ""] if dropped else lines


def _second_look_line(result: GateResult) -> list[str]:
    """How many model findings the second look refuted: listed as dismissed, never blocking."""
    refuted = sum(1 for item in result.findings
                  if (item.extra.get("verification") or {}).get("verdict") == "refuted")
    if not refuted:
        return []
    return [f"{refuted} finding(s) refuted on the second look: listed as dismissed, they do not block.", ""]


def render_summary(result: GateResult, extra_notes: list[str] | None = None) -> str:
    target = result.target
    explanation = explain(result)
    meaning = explanation.meaning[0].upper() + explanation.meaning[1:]
    lines = [f"## {HEADLINES[result.verdict.decision]}", "", " ".join((f"**{meaning}.**", *explanation.next_steps)), ""]
    if target.mode == "bundle":
        lines.append(f"Reviewed a bundle of {len(target.files)} document(s), bundle hash `{target.patch_sha256[:16]}`.")
    else:
        lines.append(
            f"Reviewed `{short_sha(target.merge_base)}..{short_sha(target.head_sha)}` "
            f"(base {markdown_code(target.base_ref)} from {markdown_text(target.base_source)}, "
            f"head `{short_sha(target.head_sha)}`), "
            f"{len(target.files)} file(s), patch `{target.patch_sha256[:16]}`."
        )
    for reason in result.verdict.reasons:
        lines.append(f"- {markdown_text(one_line(reason))}")
    for note in (*result.notes, *(extra_notes or [])):
        lines.append(f"> {markdown_text(one_line(note))}")
    lines += ["", "### Reviewers", "", "| reviewer | status | findings | time |", "|---|---|---|---|"]
    for outcome in result.outcomes:
        status = outcome.status.value + (f": {_escape_cell(outcome.reason)}" if outcome.reason else "")
        lines.append(f"| {_escape_cell(outcome.reviewer)} | {status} | {len(outcome.findings)} "
                     f"| {outcome.duration_seconds:.1f}s |")
    lines.append(f"| verify | {result.verify.status.value} | | {result.verify.duration_seconds:.1f}s |")
    lines += _reviewer_notes(result)
    lines += render_instructions_section(result)
    lines += render_verify_section(result.verify, _escape_cell)
    lines += _accepted_section(result)
    lines += _suppressed_section(result)
    lines += _findings_section(result)
    lines += _second_look_line(result)
    lines += _suggestions_section(result)
    questions = product_questions(result)
    if questions:
        lines += ["### Product questions (they do not block)", ""]
        lines += [f"- {_escape_cell(question)}" for question in questions]
        lines.append("")
    if target.excluded:
        lines += ["### Not reviewed", ""]
        lines += [f"- {markdown_code(item.path)}: {markdown_text(one_line(item.reason))}" for item in target.excluded]
    # The last guard for every Markdown sink (summary.md, the step summary, the check run, the
    # PR comment): a credential in any part of it is masked.
    return mask("\n".join(lines).rstrip() + "\n")


class SummarySink:
    name = "summary"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        write_text(result.output_dir / FILE_NAME, render_summary(result, context.log.notes))
