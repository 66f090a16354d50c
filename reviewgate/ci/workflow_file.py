"""A GitHub Actions workflow file read with its line numbers, so a check can say which line to change.

PyYAML's composer keeps each node's position (`start_mark`); the values are read straight off the
nodes, so `on:` stays the string "on" (YAML 1.1 would make it True) and `fetch-depth: 0` reads
"0" whether it was written as a number or a string.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

WORKFLOW_DIRECTORY = Path(".github/workflows")
WORKFLOW_SUFFIXES = (".yml", ".yaml")
ACTION_PATTERN = re.compile(r"^(reviewgate/reviewgate@|docker://ghcr\.io/reviewgate/reviewgate[:@])", re.IGNORECASE)
RUN_PATTERN = re.compile(r"(^|[\s;&|(])(python3?\s+-m\s+)?reviewgate\s+run\b", re.MULTILINE)


class WorkflowSyntaxError(Exception):
    """The file is not YAML a workflow can be read from; `line` is 1-based, 0 when unknown."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(problem)
        self.line = line
        self.problem = problem


def line_of(node: Node) -> int:
    return int(node.start_mark.line) + 1


def entry(node: Node | None, key: str) -> tuple[Node, Node] | None:
    """The (key node, value node) of `key` in a mapping node; the last one wins, as in GitHub."""
    found = None
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.value == key:
                found = (key_node, value_node)
    return found


def value(node: Node | None, key: str) -> Node | None:
    pair = entry(node, key)
    return pair[1] if pair else None


def text(node: Node | None) -> str | None:
    return str(node.value) if isinstance(node, ScalarNode) else None


def items(node: Node | None) -> list[tuple[str, Node, Node]]:
    """(key, key node, value node) of a mapping node, in the file's order."""
    if not isinstance(node, MappingNode):
        return []
    return [(str(key.value), key, item) for key, item in node.value if isinstance(key, ScalarNode)]


def compose(source: str) -> Node | None:
    try:
        return yaml.compose(source, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "not valid YAML"
        raise WorkflowSyntaxError(mark.line + 1 if mark else 0, problem) from error
    except yaml.reader.ReaderError as error:  # a control character: placed by offset, not by mark
        line = source.count("\n", 0, error.position) + 1
        raise WorkflowSyntaxError(line, f"character #x{error.character:04x} is not allowed in YAML") from error
    except yaml.YAMLError as error:
        raise WorkflowSyntaxError(0, str(error).splitlines()[0]) from error


def mappings(node: Node | None) -> Iterator[MappingNode]:
    """Every mapping node in the tree, depth first: steps wherever a fragment puts them."""
    pending = [node] if node is not None else []
    while pending:
        current = pending.pop()
        if isinstance(current, MappingNode):
            yield current
            pending.extend(item for pair in reversed(current.value) for item in reversed(pair))
        elif isinstance(current, SequenceNode):
            pending.extend(reversed(current.value))


def uses_the_action(uses: str | None, own_action: bool = False) -> bool:
    """A step's `uses:` names reviewgate's action (or its image); `./` only in reviewgate's own repository."""
    if uses is None:
        return False
    return bool(ACTION_PATTERN.match(uses.strip())) or (own_action and uses.strip() in ("./", "."))


def runs_the_gate(script: str | None) -> bool:
    """A `run:` script that invokes `reviewgate run` (installed, `python -m`, or through pipx)."""
    return bool(script and RUN_PATTERN.search(script))


@dataclass(frozen=True)
class Step:
    node: MappingNode
    uses: str | None
    run: str | None

    @property
    def line(self) -> int:
        return line_of(self.node)

    def argument(self, key: str) -> Node | None:
        """The value node of `with: {key: ...}`."""
        return value(value(self.node, "with"), key)


@dataclass(frozen=True)
class Job:
    name: str
    key_node: Node
    node: Node
    steps: tuple[Step, ...]

    @property
    def line(self) -> int:
        return line_of(self.key_node)


@dataclass(frozen=True)
class Workflow:
    path: Path  # as it is shown: relative to the repository root
    root: MappingNode
    jobs: tuple[Job, ...]


def parse_workflow(source: str, path: Path) -> Workflow | None:
    """The workflow's jobs and steps; None when the file holds no mapping (an empty file)."""
    root = compose(source)
    if not isinstance(root, MappingNode):
        return None
    jobs = []
    for name, key_node, job_node in items(value(root, "jobs")):
        steps_node = value(job_node, "steps")
        steps = tuple(
            Step(step, text(value(step, "uses")), text(value(step, "run")))
            for step in (steps_node.value if isinstance(steps_node, SequenceNode) else [])
            if isinstance(step, MappingNode)
        )
        jobs.append(Job(name, key_node, job_node, steps))
    return Workflow(path, root, tuple(jobs))


def workflow_files(repo: Path) -> list[Path]:
    directory = repo / WORKFLOW_DIRECTORY
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.iterdir() if path.suffix in WORKFLOW_SUFFIXES and path.is_file())
