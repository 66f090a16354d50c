"""summary.md: the readable account of a run, also used for GitHub's step summary, the check
run's summary and the PR comment (pr_comment.py puts its own lines on top).

Built for reading at a glance: the verdict and the counts first, the blocking findings next (each
place a link to the line at the head, where the forge's address is known), everything else
folded in `<details>` blocks by rule, the help on answering a finding folded last. Each part
is a Section (sections.py), so a forge's size limit leaves out whole entries from the end.
"""

from __future__ import annotations

from collections import Counter

from reviewgate.escaping import (
    html_code,
    link_address,
    markdown_body,
    markdown_cell,
    markdown_code,
    markdown_suggestion,
    markdown_text,
    mask,
    one_line,
)
from reviewgate.file_writing import write_text
from reviewgate.findings import Finding, FindingClass, Severity, sort_key
from reviewgate.gate import Decision
from reviewgate.report.base import SUPPRESSED, SinkContext, finding_groups
from reviewgate.report.instructions_section import render_instructions_section
from reviewgate.report.locations import location_markdown
from reviewgate.report.sections import Budget, Section, render_sections
from reviewgate.report.verdict_text import ANSWER_A_FINDING, explain
from reviewgate.report.verify_section import render_verify_section
from reviewgate.result import GateResult
from reviewgate.text import short_sha, truncate

FILE_NAME = "summary.md"

HEADLINES = {
    Decision.APPROVE: "✅ reviewgate: approved",
    Decision.REQUEST_CHANGES: "❌ reviewgate: changes requested",
    Decision.BLOCKED: "⛔ reviewgate: not reviewed",
}
# The notes under the verdict are never left out by a size budget, so they are bounded here.
MAX_NOTES_SHOWN = 20
MAX_NOTE_CHARS = 500


def _escape_cell(text: str) -> str:
    """Markdown table cells: a pipe or newline in untrusted text must not break the table, nor
    HTML, a mention or a control byte reach the reader (escaping.markdown_cell)."""
    return markdown_cell(text)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def fold(summary: str, lines: list[str]) -> list[str]:
    """Lines inside a `<details>` block that shows `summary` (our own words, never untrusted text)
    until opened. The blank lines around the content let Markdown inside it render."""
    return [f"<details><summary>{summary}</summary>", "", *lines, "", "</details>", ""]


# A body longer than this is folded under its finding's line: a list of findings stays a list.
MAX_OPEN_BODY_LINES = 3
MAX_OPEN_BODY_CHARS = 400


def _quoted_body(finding: Finding, indent: str) -> list[str]:
    """A finding's body, escaped like any untrusted text (a model wrote it) but its fenced code
    verbatim, and quoted line by line, so a heading in it ends with the quote; folded when long."""
    if not finding.body.strip():
        return []
    lines = markdown_body(finding.body).splitlines()
    quoted = [f"> {line}".rstrip() for line in lines]
    if len(lines) > MAX_OPEN_BODY_LINES or len(finding.body) > MAX_OPEN_BODY_CHARS:
        quoted = fold(f"Details ({_plural(len(lines), 'line')})", quoted)[:-1]
    return [f"{indent}{line}" if line else "" for line in quoted]


def finding_entry(result: GateResult, finding: Finding, with_body: bool = True) -> str:
    """One finding as a list entry: its place (a link to the line at the head when the forge's
    address is known) and title; under it the severity, the rule and, for a blocking one, the id
    `ACCEPTED:` takes; then its body, quoted (folded when long). One string, so a size budget
    keeps or leaves out the entry whole."""
    blocking = result.is_blocking(finding)
    where = location_markdown(result.ci, result.target.head_sha, finding)
    details = [finding.severity.value, markdown_code(finding.rule_id)]
    if finding.source != "builtin":  # a model's or another analyzer's finding says whose it is
        details.append(f"from {markdown_text(one_line(finding.source))}")
    if blocking:
        details = ["**blocks**", *details, f"id {markdown_code(finding.id)}"]
    if finding.dismissed:
        details.append(markdown_text(one_line(finding.dismissed)))
    # A backslash at the end of a line is a hard line break (CommonMark 6.7).
    lines = [f"- {where} {markdown_text(one_line(finding.title))}\\", f"  {' · '.join(details)}"]
    return "\n".join([*lines, *(_quoted_body(finding, "  ") if with_body else [])])


def counts_line(result: GateResult) -> str:
    """`4 findings: 2 major · 1 minor · 1 nit. **2 block merging.**`: the counts by severity add up
    to the total (the suppressed ones counted on their own), and how many block is said apart."""
    if not result.findings:
        return "No findings."
    groups = " · ".join(f"{len(group)} {heading}" for heading, group in finding_groups(result.findings))
    blocking = len(result.verdict.blocking)
    verb = "blocks" if blocking == 1 else "block"
    lead = f"**{blocking} {verb} merging.**" if blocking else "None blocks merging."
    accepted = len(result.accepted_ids())
    tail = f" {accepted} accepted by people (not blocking)." if accepted else ""
    return f"{_plural(len(result.findings), 'finding')}: {groups}. {lead}{tail}"


def verdict_section(result: GateResult, extra_notes: list[str] | None = None) -> Section:
    """The verdict, what it means and what to do, the counts, and the run's notes: always shown."""
    explanation = explain(result)
    meaning = explanation.meaning[0].upper() + explanation.meaning[1:]
    steps = [step for step in explanation.next_steps if step != ANSWER_A_FINDING]
    lines = [f"## {HEADLINES[result.verdict.decision]}", "", " ".join((f"**{meaning}.**", *steps)), "",
             counts_line(result), ""]
    lines += [f"- {markdown_text(one_line(reason))}" for reason in result.verdict.reasons]
    notes = [*result.notes, *(extra_notes or [])]
    lines += [f"> {markdown_text(truncate(one_line(note), MAX_NOTE_CHARS, '…'))}" for note in notes[:MAX_NOTES_SHOWN]]
    if len(notes) > MAX_NOTES_SHOWN:
        lines.append(f"> … {len(notes) - MAX_NOTES_SHOWN} more notes in the console log")
    if result.verdict.reasons or notes:
        lines.append("")
    return Section("the verdict", lines, kept=True)


# Blocking findings shown first; any more are folded, and listed without their bodies when a
# size limit would otherwise leave some out: every blocking place stays a link.
MAX_BLOCKING_SHOWN = 10


def blocking_sections(result: GateResult) -> list[Section]:
    """The blocking findings, most severe first: the first ones in full, any more folded."""
    blocking = sorted((item for item in result.findings if result.is_blocking(item)), key=sort_key)
    if not blocking:
        return []
    shown, more = blocking[:MAX_BLOCKING_SHOWN], blocking[MAX_BLOCKING_SHOWN:]
    sections = [Section("blocking findings", [f"### Blocking ({len(blocking)})", ""],
                        [finding_entry(result, item) for item in shown], [""], noun="blocking finding")]
    if more:
        lines = fold(_plural(len(more), "more blocking finding"), [])
        sections.append(Section("more blocking findings", lines[:2], [finding_entry(result, item) for item in more],
                                lines[2:], noun="more blocking finding",
                                short_items=[finding_entry(result, item, with_body=False) for item in more]))
    return sections


def _rule_groups(findings: list[Finding]) -> list[tuple[str, list[Finding]]]:
    """Findings by rule: the group with the most severe finding first, then the larger group, then
    by rule id; inside a group, most severe first, then by place."""
    groups: dict[str, list[Finding]] = {}
    for item in sorted(findings, key=sort_key):
        groups.setdefault(item.rule_id, []).append(item)
    return sorted(groups.items(), key=lambda pair: (-pair[1][0].severity.rank, -len(pair[1]), pair[0]))


def _severities(findings: list[Finding]) -> str:
    """`3 major, 1 minor`: a group's findings by severity, most severe first."""
    counts = Counter(item.severity for item in findings)
    return ", ".join(f"{counts[severity]} {severity.value}" for severity in Severity if counts[severity])


def folded_findings_sections(result: GateResult) -> list[Section]:
    """The findings that do not block, one folded block per rule (its rule id a code element, as
    it is untrusted text from an imported or model finding), then the dismissed ones folded."""
    rest = [item for item in result.findings if not result.is_blocking(item) and item.dismissed is None]
    sections: list[Section] = []
    for rule, group in _rule_groups(rest):
        lines = fold(f"{html_code(rule)}: {_plural(len(group), 'finding')} ({_severities(group)}), not blocking", [])
        noun = f"{markdown_code(rule)} finding"  # the left-out line is Markdown: the rule id as a code span
        sections.append(Section(f"the {noun}s", lines[:2], [finding_entry(result, item) for item in group],
                                lines[2:], noun=noun))
    dismissed = sorted((item for item in result.findings if item.dismissed is not None), key=sort_key)
    if dismissed:
        noun = f"{SUPPRESSED} finding"
        lines = fold(_plural(len(dismissed), noun), [])
        sections.append(Section(f"the {SUPPRESSED} findings", lines[:2],
                                [finding_entry(result, item) for item in dismissed], lines[2:], noun=noun))
    return sections


# Reviewer notes (redactions, findings dropped or moved) listed per reviewer before pointing
# at report.json, which has them all: the summary stays readable on a large change.
MAX_NOTES_PER_REVIEWER = 10


def product_questions(result: GateResult) -> list[str]:
    """Questions for the product owner: they are listed, they never block."""
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


def accepted_section(result: GateResult) -> Section:
    """Who overruled the gate on which finding, and why: right after the blocking findings, so a
    size budget leaves it out only after them."""
    if not result.acceptances:
        return Section("the accepted findings")
    by_id = {item.id: item for item in result.findings}
    rows = []
    for item in result.acceptances:
        finding = by_id.get(item.finding_id)
        where = location_markdown(result.ci, result.target.head_sha, finding, in_table=True) if finding else ""
        title = finding.title if finding else "no finding of this run has this id"
        rows.append(f"| {markdown_code(item.finding_id, in_table=True)} | {where} "
                    f"| {_escape_cell(title)} | {_escape_cell(item.author)} | {_escape_cell(item.reason)} |")
    head = ["### Accepted by people (they do not block)", "",
            "| finding | where | title | accepted by | reason |", "|---|---|---|---|---|"]
    return Section("the accepted findings", head, rows, [""], noun="accepted finding")


def suppressed_section(result: GateResult) -> Section:
    """Every suppression comment the change adds on a finding that would otherwise block."""
    if not result.branch_suppressions:
        return Section("the suppressions this change adds")
    rows = []
    for item in result.branch_suppressions:
        state = "**refused: it blocks**" if item.refused else "dismissed"
        where = location_markdown(result.ci, result.target.head_sha, item.finding, in_table=True)
        rows.append(f"| {where} | {_escape_cell(item.finding.rule_id)} | {_escape_cell(item.finding.title)} "
                    f"| {_escape_cell(item.reason or '(none)')} | {state} |")
    head = ["### Suppressed by this change", "",
            "| where | rule | title | reason given | |", "|---|---|---|---|---|"]
    return Section("the suppressions this change adds", head, rows, [""], noun="suppression")


# Suggested changes shown in full; the rest are in report.json (a comment has a size cap).
MAX_SUGGESTIONS_SHOWN = 20


def suggestions_section(result: GateResult) -> Section:
    """Each checked suggested change as a ```suggestion block, folded; the dropped ones with why."""
    offered = [item for item in result.findings if isinstance(item.extra.get("suggestion"), dict)]
    dropped = [item for item in result.findings if item.extra.get("suggestion_dropped")]
    if not offered and not dropped:
        return Section("the suggested changes")
    items = []
    for item in offered[:MAX_SUGGESTIONS_SHOWN]:
        suggestion = item.extra["suggestion"]
        where = f"{item.path}:{suggestion.get('start_line')}-{suggestion.get('end_line')}"
        items.append("\n".join([f"{markdown_code(where)} {markdown_text(one_line(item.title))}", "",
                                markdown_suggestion(str(suggestion.get("replacement", ""))), ""]))
    if len(offered) > MAX_SUGGESTIONS_SHOWN:
        items.append(f"… {len(offered) - MAX_SUGGESTIONS_SHOWN} more in report.json\n")
    items += [f"- dropped a suggested change on {markdown_code(item.location)}: "
              f"{markdown_text(one_line(str(item.extra['suggestion_dropped'])))}" for item in dropped]
    lines = fold(f"{_plural(len(offered), 'suggested change')}" + (f", {len(dropped)} dropped" if dropped else ""), [])
    return Section("the suggested changes", lines[:2], items, lines[2:], noun="suggested change")


def _second_look_line(result: GateResult) -> list[str]:
    """How many model findings the second look refuted: listed as dismissed, never blocking."""
    refuted = sum(1 for item in result.findings
                  if (item.extra.get("verification") or {}).get("verdict") == "refuted")
    if not refuted:
        return []
    return ["", f"{refuted} finding(s) refuted on the second look: listed as dismissed, they do not block."]


def verify_section(result: GateResult) -> Section:
    """The verify's steps: shown when it did not pass (the reason to read first), folded when it did."""
    lines = render_verify_section(result.verify, _escape_cell)
    if not lines:
        return Section("the verify's steps")
    if result.verify.status.value == "passed":
        return Section("the verify's steps", fold("The verify passed", lines[3:]))
    return Section("the verify's steps", [*lines[1:], ""])


def questions_section(result: GateResult) -> Section:
    questions = product_questions(result)
    if not questions:
        return Section("the product questions")
    lines = fold(f"{_plural(len(questions), 'product question')} (they do not block)", [])
    return Section("the product questions", lines[:2], [f"- {_escape_cell(question)}" for question in questions],
                   lines[2:], noun="product question")


def _reviewed_line(result: GateResult) -> str:
    target = result.target
    if target.mode == "bundle":
        return f"Reviewed a bundle of {len(target.files)} document(s), bundle hash `{target.patch_sha256[:16]}`."
    return (f"Reviewed `{short_sha(target.merge_base)}..{short_sha(target.head_sha)}` "
            f"(base {markdown_code(target.base_ref)} from {markdown_text(target.base_source)}, "
            f"head `{short_sha(target.head_sha)}`), "
            f"{len(target.files)} file(s), patch `{target.patch_sha256[:16]}`.")


def run_section(result: GateResult) -> Section:
    """What was reviewed, by which reviewers, with what instructions: folded."""
    lines = [_reviewed_line(result), "", "| reviewer | status | findings | time |", "|---|---|---|---|"]
    for outcome in result.outcomes:
        status = outcome.status.value + (f": {_escape_cell(outcome.reason)}" if outcome.reason else "")
        lines.append(f"| {_escape_cell(outcome.reviewer)} | {status} | {len(outcome.findings)} "
                     f"| {outcome.duration_seconds:.1f}s |")
    lines.append(f"| verify | {result.verify.status.value} | | {result.verify.duration_seconds:.1f}s |")
    lines += _reviewer_notes(result)
    lines += render_instructions_section(result)
    lines += _second_look_line(result)
    summary = f"Reviewed {_plural(len(result.target.files), 'file')} with {_plural(len(result.outcomes), 'reviewer')}"
    return Section("the reviewers table", fold(summary, lines))


def not_reviewed_section(result: GateResult) -> Section:
    excluded = result.target.excluded
    if not excluded:
        return Section("the files not reviewed")
    lines = fold(f"{_plural(len(excluded), 'file')} not reviewed", [])
    return Section("the files not reviewed", lines[:2],
                   [f"- {markdown_code(item.path)}: {markdown_text(one_line(item.reason))}" for item in excluded],
                   lines[2:], noun="file not reviewed")


def help_section(result: GateResult) -> Section:
    """How to answer a finding one thinks is wrong: folded last, and never left out."""
    if not result.findings:
        return Section("the help", kept=True)
    return Section("the help", fold("How to answer a finding", [
        "If one is wrong, answer it with a reason:", "",
        "- a comment on its line: `reviewgate: ignore[<rule id>] <reason>`",
        "- a pull request comment: `REVIEW-REJECTED: <file>:<line> <reason>`",
        "- a maintainer can overrule one: `ACCEPTED: <finding id> <reason>`",
    ]), kept=True)


def summary_sections(result: GateResult, extra_notes: list[str] | None = None) -> list[Section]:
    """Every part of the summary, most important first: a size budget leaves out from the end."""
    return [
        verdict_section(result, extra_notes),
        *blocking_sections(result),
        verify_section(result),
        accepted_section(result),
        suppressed_section(result),
        *folded_findings_sections(result),
        suggestions_section(result),
        questions_section(result),
        run_section(result),
        not_reviewed_section(result),
        help_section(result),
    ]


# The artifact the example workflows upload the output directory as (docs/examples/).
ARTIFACT_NAME = "reviewgate"


def artifact_place(result: GateResult) -> str:
    """Where the whole report is: the output files in the example workflows' artifact of this run."""
    run = f"[this run]({link_address(result.ci.run_url)})" if result.ci.run_url else "this run"
    return f"in `summary.md` and `report.json` of the `{ARTIFACT_NAME}` artifact of {run}"


def size_budget(limit_bytes: int, limit_name: str, places: list[str]) -> Budget:
    """A budget whose left-out line names the limit, what was left out, and `places` (our own
    words: "in the check run `reviewgate` (…)") where what was left out can be read."""
    def left_out(what: list[str]) -> list[str]:
        where = " and ".join(places)
        return [f"**Left out to stay within {limit_name}:** {', '.join(what)}. Read them {where}.", ""]
    return Budget(limit_bytes, left_out)


def render_summary(result: GateResult, extra_notes: list[str] | None = None, budget: Budget | None = None) -> str:
    # The last guard for every Markdown sink (summary.md, the step summary, the check run, the
    # PR comment): a credential in any part of it is masked.
    return mask(render_sections(summary_sections(result, extra_notes), budget).rstrip() + "\n")


class SummarySink:
    name = "summary"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        write_text(result.output_dir / FILE_NAME, render_summary(result, context.log.notes))
