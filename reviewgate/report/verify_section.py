"""The verify's part of summary.md: each step with its result, exit code, time and log."""

from __future__ import annotations

from collections.abc import Callable

from reviewgate.verify.outcome import VerifyOutcome, VerifyStatus


def render_verify_section(verify: VerifyOutcome, _cell: Callable[[str], str]) -> list[str]:
    """Nothing when there was no verify; otherwise a heading, the reason and a step table.
    `_cell` is the summary's escaping of untrusted text for a Markdown table cell."""
    if verify.status is VerifyStatus.ABSENT:
        return []
    lines = ["", "### Verify", "", f"**{verify.status.value}**: {_cell(verify.reason)}"]
    if verify.manifest:
        lines[-1] += f" (`{_cell(verify.manifest)}`)"
    if verify.steps:
        lines += ["", "| step | result | exit code | time | log |", "|---|---|---|---|---|"]
        for step in verify.steps:
            result = "passed" if step.passed else "**failed**"
            if step.detail:
                result += f": {_cell(step.detail)}"
            exit_code = "" if step.exit_code is None else str(step.exit_code)
            log = f"`{_cell(step.log_path)}`" if step.log_path else ""
            lines.append(f"| {step.name} | {result} | {exit_code} | {step.duration_seconds:.1f}s | {log} |")
    if verify.reproduction.value != "absent":
        lines.append(f"\nReproduction re-run: **{verify.reproduction.value}**.")
    if verify.imported_tests:
        failed = sum(1 for _, _, passed, _ in verify.imported_tests if not passed)
        lines.append(
            f"\nThe app's own tests: {len(verify.imported_tests)} imported, {failed} failed (in junit.xml)."
        )
    lines += [f"- left behind after teardown: {_cell(item)}" for item in verify.survivors]
    lines += [f"- note: {_cell(item)}" for item in verify.notes]
    return lines
