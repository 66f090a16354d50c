"""Every workflow and example in the repository and its docs passes the action only inputs that
action.yml declares: a misspelt `with:` key (`reviewer:`, `fail_on:`) is silently ignored by
GitHub, so the run would go on without what the user asked for."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from yaml.nodes import MappingNode

from reviewgate.ci.workflow_file import (
    WorkflowSyntaxError,
    compose,
    items,
    line_of,
    mappings,
    text,
    uses_the_action,
    value,
)

ROOT = Path(__file__).resolve().parents[1]
FENCED_YAML = re.compile(r"^```ya?ml[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def declared_inputs() -> set[str]:
    return set(yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"])


def yaml_sources() -> list[tuple[str, int, str]]:
    """(where, first line, YAML text): whole workflow files, and each fenced YAML block of the docs."""
    sources = [
        (path.relative_to(ROOT).as_posix(), 1, path.read_text(encoding="utf-8"))
        for pattern in (".github/workflows/*.yml", ".github/workflows/*.yaml", "docs/examples/*.yml")
        for path in sorted(ROOT.glob(pattern))
    ]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        content = page.read_text(encoding="utf-8")
        for match in FENCED_YAML.finditer(content):
            first_line = content.count("\n", 0, match.start(1)) + 1
            sources.append((page.relative_to(ROOT).as_posix(), first_line, match.group(1)))
    return sources


def undeclared_inputs(where: str, first_line: int, source: str, inputs: set[str]) -> tuple[int, list[str]]:
    """(steps using the action, one line per `with:` key the action does not declare)."""
    try:
        root = compose(source)
    except WorkflowSyntaxError as error:
        return 0, [f"{where}:{first_line + error.line - 1}: not valid YAML: {error.problem}"]
    uses, problems = 0, []
    for node in mappings(root):
        if not uses_the_action(text(value(node, "uses")), own_action=True):
            continue
        uses += 1
        arguments = value(node, "with")
        if arguments is not None and not isinstance(arguments, MappingNode):
            problems.append(f"{where}:{first_line + line_of(arguments) - 1}: `with:` is not a mapping")
        for key, key_node, _ in items(arguments):
            if key not in inputs:
                problems.append(f"{where}:{first_line + line_of(key_node) - 1}: with: {key} is not an input of "
                                f"action.yml (inputs: {', '.join(sorted(inputs))})")
    return uses, problems


def test_every_with_key_given_to_the_action_is_a_declared_input() -> None:
    inputs = declared_inputs()
    steps, problems = 0, []
    for where, first_line, source in yaml_sources():
        found, wrong = undeclared_inputs(where, first_line, source, inputs)
        steps += found
        problems += wrong
    assert not problems, "\n".join(problems)
    assert steps >= 2, "the README and docs/examples/github-workflow.yml both use the action"


def test_a_misspelt_input_is_reported_with_its_line() -> None:
    workflow = """\
jobs:
  review:
    steps:
      - uses: actions/checkout@v4
        with: {fetch-depth: 0}
      - uses: reviewgate/reviewgate@v0
        with:
          reviewer: builtin
          fail_on: none
          reviewers: builtin
"""
    found, problems = undeclared_inputs("review.yml", 10, workflow, declared_inputs())
    assert found == 1
    assert [line.split(" (inputs:")[0] for line in problems] == [
        "review.yml:17: with: reviewer is not an input of action.yml",
        "review.yml:18: with: fail_on is not an input of action.yml",
    ]


def test_fenced_blocks_are_found_with_their_lines() -> None:
    blocks = [(where, line) for where, line, source in yaml_sources() if where == "README.md" and "uses:" in source]
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert blocks, "the README shows the action in a ```yaml block"
    for _, line in blocks:
        assert readme[line - 2].startswith("```y"), line
