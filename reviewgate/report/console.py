"""The short human summary on stdout: target, reviewers, findings by severity, verdict."""

from __future__ import annotations

from reviewgate.ci.workflow_commands import stop_commands_token
from reviewgate.escaping import for_runner, one_line
from reviewgate.findings import ADVISORY, Finding
from reviewgate.report.base import SinkContext, finding_groups
from reviewgate.report.verdict_text import explain
from reviewgate.result import GateResult
from reviewgate.text import printable, short_sha


def _single_line(text: str) -> str:
    return one_line(text)


def _finding_line(finding: Finding, mark: str) -> str:
    return (f"    {_single_line(finding.location)}  {_single_line(finding.rule_id)}  "
            f"{_single_line(finding.title)}{mark}")


def _finding_lines(result: GateResult) -> list[str]:
    lines: list[str] = []
    for heading, group in finding_groups(result.findings):
        lines.append(f"  {heading} ({len(group)}):")
        for item in group:
            mark = f"  [{_single_line(item.dismissed)}]" if item.dismissed else ""
            if not mark and ADVISORY in item.extra:
                mark = "  [advisory]"  # a major that does not block says so where it is listed
            lines.append(_finding_line(item, "  [blocks]" if result.is_blocking(item) else mark))
    return lines


def render_console(result: GateResult, notes: list[str]) -> list[str]:
    target = result.target
    if target.mode == "bundle":
        lines = [f"reviewgate: bundle of {len(target.files)} document(s), bundle hash {target.patch_sha256[:16]}"]
    else:
        lines = [
            f"reviewgate: {printable(target.base_ref)}...{printable(target.head_ref)} "
            f"(merge-base {short_sha(target.merge_base)}, head {short_sha(target.head_sha)}), "
            f"{len(target.files)} file(s) reviewed, {len(target.excluded)} excluded",
        ]
    for outcome in result.outcomes:
        detail = f": {_single_line(outcome.reason)}" if outcome.reason else ""
        lines.append(
            f"  reviewer {outcome.reviewer}: {outcome.status.value}{detail} "
            f"({len(outcome.findings)} finding(s), {outcome.duration_seconds:.1f}s)"
        )
    verify_detail = f": {_single_line(result.verify.reason)}" if result.verify.reason else ""
    lines.append(f"  verify: {result.verify.status.value}{verify_detail}")
    lines += _finding_lines(result)
    for reason in result.verdict.reasons:
        lines.append(f"  reason: {_single_line(reason)}")
    for note in (*result.notes, *notes):
        lines.append(f"  note: {_single_line(note)}")
    explanation = explain(result)
    lines.append(f"verdict: {explanation.verdict} (exit {result.verdict.exit_code}): {explanation.meaning}")
    lines += [f"  next: {step}" for step in explanation.next_steps]
    lines.append(f"outputs: {printable(str(result.output_dir))}")
    return lines


class ConsoleSink:
    name = "console"

    def applies(self, result: GateResult) -> bool:
        return True

    def publish(self, result: GateResult, context: SinkContext) -> None:
        # One line per item (untrusted parts were put on one line) and no line the runner would
        # take for a command, fenced or not: the fence is the second guard.
        lines = for_runner("\n".join(render_console(result, context.log.notes))).split("\n")
        if result.ci.is_github:
            # Finding titles come from diffs and models: fence them so none can act as a command.
            token = stop_commands_token()
            lines = [f"::stop-commands::{token}", *lines, f"::{token}::"]
        context.stdout.write("\n".join(lines) + "\n")
