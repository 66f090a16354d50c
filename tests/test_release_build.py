"""What a release publishes works as a user gets it: the sdist and the wheel build from a copy of the
repository and pass `twine check`; the wheel, installed into a fresh virtual environment with its
dependencies, gives a `reviewgate` command that reviews a `master`-default repository; and the
pre-commit hook's command is that console command."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from reviewgate.tomlfile import read_toml
from testing.cli import clean_environment
from testing.compiled import COMPILED_PARTS
from testing.repo import commit, git

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = read_toml(ROOT / "pyproject.toml")
VERSION = PYPROJECT["project"]["version"]


def _hook() -> dict[str, object]:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert isinstance(hook, dict)
    return hook


def test_the_pre_commit_hook_runs_the_gate_with_the_builtin_reviewer_before_a_push() -> None:
    hook = _hook()
    command, *arguments = shlex.split(str(hook["entry"]))
    assert command in PYPROJECT["project"]["scripts"], "the entry must be a console command the package installs"
    assert arguments[0] == "run" and ("--reviewer", "builtin") in zip(arguments, arguments[1:], strict=False)
    assert hook["id"] == "reviewgate" and hook["language"] == "python" and hook["stages"] == ["pre-push"]
    assert hook["pass_filenames"] is False and hook["always_run"] is True


def _copy_of_the_repository(destination: Path) -> Path:
    """The files a clean clone has (tracked, or new and not ignored): no build/ or egg-info left over."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 180) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                               check=False)
    assert completed.returncode == 0, f"{command}: {completed.stdout}{completed.stderr}"
    return completed


def _master_repository(root: Path) -> Path:
    """A repository whose default branch is `master`, cloned so it has origin/HEAD, on a feature branch."""
    upstream = root / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "master")
    commit(upstream, {"app.py": "def total(items):\n    return sum(items)\n"}, "base")
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(upstream), str(clone)], check=True, timeout=60)
    for key, setting in (("user.name", "Test"), ("user.email", "test@example.com")):
        git(clone, "config", key, setting)
    git(clone, "checkout", "-q", "-b", "feature")
    return clone


def test_every_compiled_part_is_checked_in_the_release_wheels_and_in_ci() -> None:
    """Each extension is optional (an install without a compiler works), so a wheel built without
    one would pass unnoticed: the release's wheel test and the CI script import every one."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    [wheel_test] = [step["env"]["CIBW_TEST_COMMAND"] for step in workflow["jobs"]["wheels"]["steps"]
                    if "CIBW_TEST_COMMAND" in step.get("env", {})]
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for module in COMPILED_PARTS:
        assert re.search(rf"import [\w., ]*\b{re.escape(module)}\b", wheel_test), f"the release's wheels: {module}"
        assert re.search(rf"import [\w., ]*\b{re.escape(module)}\b", ci_script), f".ci/run: {module}"


@pytest.mark.slow
@pytest.mark.interpreter_independent  # the 3.10 build of the compiled parts: CI's 3.10 install, checked there
@pytest.mark.timeout(600)  # a build and an install from the index: seconds alone, more on a busy machine
def test_the_built_wheel_installs_and_reviews_a_master_default_repository(tmp_path: Path) -> None:
    source = _copy_of_the_repository(tmp_path / "source")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], cwd=source, timeout=300)
    [sdist] = dist.glob(f"reviewgate_ci-{VERSION}.tar.gz")
    # A wheel for this Python and platform: every compiled part is in it (gcc is at hand here).
    [wheel] = dist.glob(f"reviewgate_ci-{VERSION}-cp*-cp*-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for module in COMPILED_PARTS:
        assert any(name.startswith(module.replace(".", "/") + ".") for name in names), f"the compiled {module} ships"
    _run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)], cwd=tmp_path)
    with tarfile.open(sdist) as archive:
        shipped = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "reviewgate/schemas/report.schema.json"} <= shipped
    assert not any(name.startswith("tests/") for name in shipped), "the tests need the repository, not half of it"
    metadata = zipfile.ZipFile(wheel).read(f"reviewgate_ci-{VERSION}.dist-info/METADATA").decode()
    assert "Name: reviewgate-ci\n" in metadata
    requirements = re.findall(r"^Requires-Dist: ([A-Za-z0-9_.-]+)", metadata, re.MULTILINE)
    assert "PyYAML" in requirements and not {"GitPython", "unidiff", "numpy"} & set(requirements)  # numpy: 74 MB installed, the DRY search needs none

    venv = tmp_path / "venv"
    # The installed copy, not this checkout: no PYTHONPATH (pip would take a checkout's egg-info on it for
    # the installed distribution), and the environment's bin first on PATH.
    env = {key: value for key, value in clean_environment().items() if key != "PYTHONPATH"}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    # Without a pip of its own (ensurepip's copy of pip took 5 s of CPU, nothing of ours): this
    # process's pip installs into it, running on its interpreter (`--python`). No bytecode either:
    # pip's compiling is no check (it ignores what fails to compile), and the runs below compile
    # what they import.
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path, env=env)
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
          "--disable-pip-version-check", "--no-compile", str(wheel)], cwd=tmp_path, env=env, timeout=300)
    assert (venv / "bin" / "reviewgate").is_file(), "the console command is installed into the new environment"
    assert _run(["reviewgate", "--version"], cwd=tmp_path, env=env).stdout.strip() == f"reviewgate {VERSION}"

    repo = _master_repository(tmp_path)
    commit(repo, {"app.py": "def total(items):\n    return sum(items)\n\n\ndef mean(items):\n"
                            "    return total(items) / len(items)\n"}, "add mean")
    approved = subprocess.run(["reviewgate", "run"], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
    assert re.search(r"^verdict: \w+", approved.stdout, re.MULTILINE), approved.stdout + approved.stderr
    report = json.loads((repo / ".reviewgate" / "report.json").read_text(encoding="utf-8"))
    assert report["target"]["base_ref"].endswith("master"), report["target"]
    assert report["verdict"] in ("approve", "request_changes") and approved.returncode in (0, 1)

    # The pre-commit hook's command, as pre-commit runs it at `git push`, on a change that must block.
    commit(repo, {"app.py": "def find(cursor, request):\n    cursor.execute(f\"SELECT id FROM users WHERE name = '{request.args['name']}'\")\n    return cursor.fetchone()\n"},
           "format a query")
    pushed = git(repo, "rev-parse", "HEAD")
    push = {"PRE_COMMIT_FROM_REF": git(repo, "rev-parse", "origin/master"), "PRE_COMMIT_TO_REF": pushed,
            "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/feature", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/feature",
            "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_URL": "../upstream"}
    blocked = subprocess.run(shlex.split(str(_hook()["entry"])), cwd=repo, env={**env, **push}, capture_output=True,
                             text=True, timeout=120, check=False)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert re.search(r"^verdict: changes requested", blocked.stdout, re.MULTILINE), blocked.stdout
