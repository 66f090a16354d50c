"""The repository's per-path instructions in summary.md: what the model reviewers were told."""

from __future__ import annotations

from reviewgate.escaping import markdown_cell, markdown_code
from reviewgate.policy.instructions import instructions_for
from reviewgate.result import GateResult


def render_instructions_section(result: GateResult) -> list[str]:
    """The `[[review.instructions]]` that covered files of this change, when a model reviewer
    reviewed it (the engine reports chunk counts); nothing otherwise."""
    if not any(outcome.chunks is not None for outcome in result.outcomes):
        return []
    paths = [change.path for change in result.target.files]
    given = instructions_for(result.config.review.instructions, paths)
    if not given:
        return []
    lines = ["", "### Instructions given to model reviewers", "",
             "From the review policy at the target side, for the files they cover.", "",
             "| paths | instruction | files of this change |", "|---|---|---|"]
    for item in given:
        patterns = ", ".join(markdown_code(pattern, in_table=True) for pattern in item.paths)
        covered = sum(1 for path in paths if item.covers(path))
        lines.append(f"| {patterns} | {markdown_cell(item.text)} | {covered} |")
    return lines
