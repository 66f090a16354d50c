"""GitHub Actions step outputs ($GITHUB_OUTPUT) and the job summary ($GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from pathlib import Path

from reviewgate.ci.workflow_commands import stop_commands_token
from reviewgate.errors import EXIT_USAGE
from reviewgate.escaping import markdown_text, one_line
from reviewgate.file_writing import append_text
from reviewgate.report.base import SinkContext
from reviewgate.report.json_report import FILE_NAME as REPORT_FILE
from reviewgate.report.sarif import FILE_NAME as SARIF_FILE
from reviewgate.report.summary import artifact_place, render_summary, size_budget
from reviewgate.result import GateResult

# GitHub caps $GITHUB_STEP_SUMMARY at 1 MiB per step; over it the upload fails.
STEP_SUMMARY_LIMIT = 1024 * 1024
# Leave room for whatever else the job's other steps append to the same step's file.
OUR_SUMMARY_LIMIT = STEP_SUMMARY_LIMIT - 64 * 1024


def output_entry(name: str, value: str) -> str:
    """One $GITHUB_OUTPUT entry; a value with a line break uses a random heredoc delimiter so
    it cannot end early and set other outputs."""
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{stop_commands_token()}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


class GithubStepSink:
    name = "github-step"

    def applies(self, result: GateResult) -> bool:
        return result.ci.is_github

    def publish(self, result: GateResult, context: SinkContext) -> None:
        if result.ci.step_summary_path:
            budget = size_budget(OUR_SUMMARY_LIMIT, "GitHub's 1 MiB limit of a step summary", [artifact_place(result)])
            append_text(Path(result.ci.step_summary_path), render_summary(result, context.log.notes, budget) + "\n")
        if result.ci.output_path:
            outputs = {
                "verdict": result.verdict.decision.value,
                "findings": str(len(result.findings)),
                "blocking": str(len(result.verdict.blocking)),
                "report": str(result.output_dir / REPORT_FILE),
                "sarif": str(result.output_dir / SARIF_FILE),  # for github/codeql-action/upload-sarif
                "rounds": str(result.rounds.counted if result.rounds else 0),
                "needs_human_review": "true" if result.rounds and result.rounds.gave_up else "false",
                "error": "",  # set only when the gate stopped before a verdict (publish_failure)
            }
            append_text(Path(result.ci.output_path), "".join(output_entry(key, value) for key, value in outputs.items()))


def publish_failure(output_path: str | None, summary_path: str | None, exit_code: int, message: str) -> None:
    """The step outputs and a summary line when the gate stopped before any verdict (a bad input
    or config, exit 2; git or an internal error, exit 3), so later steps read what happened
    instead of empty outputs: `verdict` is `error` (exit 2) or `blocked`, `error` the message."""
    text = one_line(message)
    if output_path:
        outputs = {
            "verdict": "error" if exit_code == EXIT_USAGE else "blocked",
            "findings": "0",
            "blocking": "0",
            "report": "",  # no report was written: `error` says why
            "sarif": "",
            "rounds": "0",
            "needs_human_review": "false",
            "error": text,
        }
        append_text(Path(output_path), "".join(output_entry(key, value) for key, value in outputs.items()))
    if summary_path:
        what = "a usage or config error" if exit_code == EXIT_USAGE else "the review could not be done"
        append_text(Path(summary_path), f"## reviewgate: not reviewed (exit {exit_code}: {what})\n\n"
                                        f"{markdown_text(text)}\n")
