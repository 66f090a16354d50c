"""`reviewgate doctor`'s look at the repository's GitHub workflows: does the job that runs the gate
check out the history it needs and grant the token what publishing needs?

Each line names the file and the line to change. A shallow checkout still works (the gate fetches
what it lacks from origin, and blocks when origin cannot be reached), and publishing falls back
to workflow-command annotations without the permissions; both are reported as problems because
the job then does not do what it was written for. No `permissions:` key at all is a note: the
token then has the repository's default permissions, which may or may not be read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode

from reviewgate.ci.workflow_file import (
    WORKFLOW_DIRECTORY,
    Job,
    Step,
    Workflow,
    WorkflowSyntaxError,
    compose,
    entry,
    line_of,
    parse_workflow,
    runs_the_gate,
    text,
    uses_the_action,
    value,
    workflow_files,
)
from reviewgate.text import printable

Say = Callable[[str], None]

PUBLISH_PERMISSIONS = ("checks", "pull-requests")  # the check run; the summary comment and the label
SUGGESTED_PERMISSIONS = "permissions: {contents: read, checks: write, pull-requests: write}"


def check_workflows(repo: Path, *, ok: Say, note: Say, problem: Say) -> None:
    files = workflow_files(repo)
    if not files:
        return
    own_action = is_reviewgate_repository(repo)
    gate_jobs = 0
    for path in files:
        shown = path.relative_to(repo).as_posix()
        try:
            workflow = parse_workflow(path.read_text(encoding="utf-8"), Path(shown))
        except WorkflowSyntaxError as error:
            place = f"{printable(shown)}:{error.line}" if error.line else printable(shown)
            problem(f"{place}: not valid YAML ({printable(error.problem)}); GitHub cannot run this workflow")
            continue
        except (OSError, UnicodeDecodeError) as error:
            problem(f"{printable(shown)}: cannot read: {printable(str(error))}")
            continue
        if workflow is None:
            continue
        for job in workflow.jobs:
            gate = next((step for step in job.steps if is_gate_step(step, own_action)), None)
            if gate is not None:
                gate_jobs += 1
                _check_job(workflow, job, gate, ok=ok, note=note, problem=problem)
    if not gate_jobs:
        note(f"no workflow in {WORKFLOW_DIRECTORY.as_posix()} runs reviewgate "
             "(a step `uses: reviewgate/reviewgate@v0` or `run: reviewgate run`)")


def is_gate_step(step: Step, own_action: bool) -> bool:
    return uses_the_action(step.uses, own_action) or runs_the_gate(step.run)


def is_reviewgate_repository(repo: Path) -> bool:
    """In reviewgate's own repository `uses: ./` is the gate's action."""
    try:
        root = compose((repo / "action.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, WorkflowSyntaxError):
        return False
    return text(value(root, "name")) == "reviewgate"


def _check_job(workflow: Workflow, job: Job, gate: Step, *, ok: Say, note: Say, problem: Say) -> None:
    where = f"{printable(workflow.path.as_posix())}"
    label = f"job {printable(job.name)}"
    found = [_checkout_problem(where, label, job, gate), _permissions_problem(where, label, workflow, job)]
    for kind, line in found:
        if line:
            (problem if kind == "problem" else note)(line)
    if not any(line for _, line in found):
        ok(f"{where}:{job.line}: {label} runs reviewgate with fetch-depth: 0 and "
           f"{', '.join(f'{name}: write' for name in PUBLISH_PERMISSIONS)}")


def _checkout_problem(where: str, label: str, job: Job, gate: Step) -> tuple[str, str]:
    before = job.steps[: job.steps.index(gate)]
    checkouts = [
        step for step in before
        if (step.uses or "").startswith("actions/checkout@") and step.argument("repository") is None
    ]
    if not checkouts:
        return "problem", (f"{where}:{gate.line}: {label}: no actions/checkout step before the reviewgate step; "
                           f"add `- uses: actions/checkout@v4` with `with: {{fetch-depth: 0}}` before line {gate.line}")
    checkout = checkouts[-1]
    depth = checkout.argument("fetch-depth")
    shown = text(depth)
    if depth is None:
        return "problem", (f"{where}:{checkout.line}: {label}: actions/checkout fetches one commit (fetch-depth "
                           f"defaults to 1); add `with: {{fetch-depth: 0}}` to the step at line {checkout.line} "
                           "so the merge base is in the clone")
    if shown == "0":
        return "ok", ""
    if shown is not None and "${{" in shown:
        return "note", (f"{where}:{line_of(depth)}: {label}: fetch-depth is an expression ({printable(shown)}); "
                        "the gate needs 0 (the whole history) to find the merge base without fetching")
    return "problem", (f"{where}:{line_of(depth)}: {label}: fetch-depth: {printable(shown or '(not a number)')} "
                       f"may leave the merge base out of the clone; change it to 0 at line {line_of(depth)}")


def _permissions_problem(where: str, label: str, workflow: Workflow, job: Job) -> tuple[str, str]:
    declared = entry(job.node, "permissions")
    scope = "the job's"
    if declared is None:
        declared = entry(workflow.root, "permissions")
        scope = "the workflow's"
    if declared is None:
        return "note", (f"{where}:{job.line}: {label}: neither the workflow nor the job declares permissions, so the "
                        "token gets the repository's default ones, read-only in many organizations; add "
                        f"`{SUGGESTED_PERMISSIONS}` to the job at line {job.line}")
    key_node, granted = declared
    missing = [name for name in PUBLISH_PERMISSIONS if not _grants_write(granted, name)]
    if not missing:
        return "ok", ""
    lacking = " and ".join(f"{name}: write" for name in missing)
    return "problem", (f"{where}:{line_of(key_node)}: {label}: {scope} permissions lack {lacking} (the check "
                       f"run needs checks: write, the pull request comment pull-requests: write); add "
                       f"{lacking} under `permissions:` at line {line_of(key_node)}")


def _grants_write(granted: Node, name: str) -> bool:
    if isinstance(granted, ScalarNode):
        return text(granted) == "write-all"
    return isinstance(granted, MappingNode) and text(value(granted, name)) == "write"
