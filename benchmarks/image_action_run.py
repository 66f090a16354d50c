"""Run a built image as GitHub's runner runs a Docker action, on tiny pull requests, and check
each exits as designed: a clean change approved (0), a swallowed error blocking (1), a model
reviewer whose key is unset blocked as "not reviewed" (3).

As the runner does (`docker run --workdir /github/workspace -v <workspace>:/github/workspace -v
<temp>/_github_workflow:/github/workflow -v <temp>/_runner_file_commands:/github/file_commands
-v <temp>/_github_home:/github/home -e GITHUB_* -e INPUT_* <image>`): the image's entrypoint,
the workspace a checkout of the pull request's merge commit owned by another user than the
container's root, the event a `pull_request` payload with the real SHAs, the action's input
defaults from action.yml, and GITHUB_API_URL a stand-in GitHub on 127.0.0.1 (testing/forge_server.py)
that receives the check run and the comment.

Needs root and buildah; the image from benchmarks/image_size.py.

Run: python benchmarks/image_action_run.py IMAGE
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from image_base import BUILDAH, BaseError, run  # noqa: E402

from testing.ci import load_payload  # noqa: E402
from testing.forge_server import ForgeServer  # noqa: E402
from testing.repo import commit, git  # noqa: E402

RUNNER_USER = 1001  # the hosted runner's user, who owns the checkout
REPOSITORY = "octocat/Hello-World"  # as the captured payload names it
BASE_FILES = {"app.py": "def total(items):\n    return sum(items)\n"}


@dataclass(frozen=True)
class Case:
    name: str
    change: dict[str, str]
    inputs: dict[str, str]
    expected_exit: int
    config: str = ""  # .reviewgate.toml on the target branch, where the gate reads it


CASES = (
    Case("clean change", {"app.py": BASE_FILES["app.py"] + "\n\ndef mean(items):\n    return total(items) / len(items)\n",
                          "tests/test_app.py": "from app import mean\n\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n"},
         {}, 0),
    Case("swallowed error", {"app.py": "def total(items):\n    try:\n        return sum(items)\n    except:\n        pass\n"},
         {}, 1),
    Case("model reviewer without its key", {"app.py": BASE_FILES["app.py"] + "\n\ndef first(items):\n    return items[0]\n"},
         {"reviewers": "anthropic"}, 3, '[reviewer.anthropic]\nmodel = "claude-sonnet-4-5"\n'),
)


def action_defaults() -> dict[str, str]:
    inputs = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    return {name: str(spec.get("default", "")) for name, spec in inputs.items()}


def pull_request_checkout(root: Path, case: Case) -> tuple[Path, dict[str, str]]:
    """A clone on the pull request's merge commit, as actions/checkout leaves it (fetch-depth 0),
    and the SHAs of base, head and merge."""
    upstream = root / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    commit(upstream, {**BASE_FILES, **({".reviewgate.toml": case.config} if case.config else {})}, "base")
    git(upstream, "checkout", "-q", "-b", "feature")
    head = commit(upstream, case.change, "the change")
    git(upstream, "checkout", "-q", "main")
    commit(upstream, {"README.md": "Hello\n"}, "main moves on")
    git(upstream, "merge", "-q", "--no-ff", "-m", "Merge feature into main", "feature")
    merge = git(upstream, "rev-parse", "HEAD")
    git(upstream, "reset", "-q", "--hard", "HEAD~1")
    git(upstream, "update-ref", "refs/pull/42/merge", merge)
    base = git(upstream, "rev-parse", "main")
    workspace = root / "workspace"
    git(root, "clone", "-q", str(upstream), str(workspace))
    git(workspace, "fetch", "-q", "origin", "+refs/pull/42/merge:refs/remotes/pull/42/merge")
    git(workspace, "checkout", "-q", "--detach", merge)
    return workspace, {"base": base, "head": head, "merge": merge}


def runner_directories(root: Path, payload: dict[str, object]) -> dict[str, Path]:
    temp = root / "_temp"
    directories = {name: temp / name for name in ("_github_home", "_github_workflow", "_runner_file_commands")}
    for directory in directories.values():
        directory.mkdir(parents=True)
    (directories["_github_workflow"] / "event.json").write_text(json.dumps(payload), encoding="utf-8")
    for command in ("add_path", "set_env", "set_output", "save_state", "step_summary"):
        (directories["_runner_file_commands"] / f"{command}_1").touch()
    return directories


def container_environment(case: Case, shas: dict[str, str], api_url: str) -> dict[str, str]:
    inputs = {**action_defaults(), "github-token": "write-token", **case.inputs}
    commands = "/github/file_commands"
    return {
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        "HOME": "/github/home", "GITHUB_ACTIONS": "true", "CI": "true",
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_REPOSITORY_OWNER": REPOSITORY.split("/")[0], "GITHUB_SHA": shas["merge"],
        "GITHUB_REF": "refs/pull/42/merge", "GITHUB_REF_NAME": "42/merge", "GITHUB_REF_TYPE": "branch",
        "GITHUB_HEAD_REF": "feature", "GITHUB_BASE_REF": "main", "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": api_url, "GITHUB_RUN_ID": "7001", "GITHUB_RUN_NUMBER": "1", "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_WORKFLOW": "review", "GITHUB_JOB": "reviewgate", "GITHUB_ACTION": "reviewgate", "GITHUB_ACTOR": "octocat",
        "GITHUB_OUTPUT": f"{commands}/set_output_1", "GITHUB_STEP_SUMMARY": f"{commands}/step_summary_1",
        "GITHUB_ENV": f"{commands}/set_env_1", "GITHUB_PATH": f"{commands}/add_path_1",
        "GITHUB_STATE": f"{commands}/save_state_1", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64",
        "RUNNER_TEMP": "/home/runner/work/_temp", "RUNNER_TOOL_CACHE": "/opt/hostedtoolcache",
    }


def entrypoint(image: str) -> list[str]:
    inspected = json.loads(run([*BUILDAH, "inspect", "--type", "image", image]))
    return list(inspected["OCIv1"]["config"]["Entrypoint"])


def run_case(image: str, case: Case, root: Path) -> tuple[int, str]:
    """Runs one case; returns its exit code and what it printed, outputs and the stand-in's posts."""
    workspace, shas = pull_request_checkout(root, case)
    directories = runner_directories(root, load_payload("github_pull_request.json", **shas))
    run(["chown", "-R", f"{RUNNER_USER}:{RUNNER_USER}", str(workspace)])
    with ForgeServer() as server:
        environment = container_environment(case, shas, server.url)
        container = run([*BUILDAH, "from", "--pull=never", image]).strip()
        try:
            mounts = [f"{workspace}:/github/workspace", f"{directories['_github_home']}:/github/home",
                      f"{directories['_github_workflow']}:/github/workflow",
                      f"{directories['_runner_file_commands']}:/github/file_commands"]
            command = [*BUILDAH, "run", "--isolation", "chroot", "--workingdir", "/github/workspace",
                       *(option for mount in mounts for option in ("--volume", mount)),
                       *(option for name, value in environment.items() for option in ("--env", f"{name}={value}")),
                       container, "--", *entrypoint(image)]
            completed = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        finally:
            subprocess.run([*BUILDAH, "rm", container], capture_output=True, check=False)
        posted = [f"{request.method} {request.path}" for request in server.state.requests if request.method != "GET"]
    outputs = (directories["_runner_file_commands"] / "set_output_1").read_text(encoding="utf-8")
    owners = {path.stat().st_uid for path in workspace.rglob("*")}
    text = (f"{completed.stdout}{completed.stderr}\n-- outputs --\n{outputs}\n-- posted to the stand-in GitHub --\n"
            + "\n".join(posted) + f"\n-- owners of the workspace's files after the run: {sorted(owners)}")
    return completed.returncode, text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("image", help="the image to run, e.g. localhost/reviewgate-measured:<commit>")
    parser.add_argument("--verbose", action="store_true", help="print each run's whole output")
    arguments = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("buildah's vfs storage needs root")
    failed = 0
    for case in CASES:
        with tempfile.TemporaryDirectory(prefix="reviewgate-action-") as root:
            try:
                code, text = run_case(arguments.image, case, Path(root))
            except BaseError as error:
                print(f"image_action_run: {error}", file=sys.stderr)
                return 2
        verdict = next((line for line in text.splitlines() if line.startswith("verdict")), "(no verdict line)")
        print(f"{case.name}: exit {code} (expected {case.expected_exit}); {verdict}")
        if arguments.verbose or code != case.expected_exit:
            print(text)
        failed += code != case.expected_exit
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
