"""The container cannot be built here (no Docker daemon), so check what it relies on instead:
the files it copies exist, the package it installs carries its data, the entrypoint it runs is
the one we test."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from testing.compiled import COMPILED_PARTS

REPO_ROOT = Path(__file__).resolve().parents[1]


def dockerfile_instructions() -> list[tuple[str, str]]:
    lines = []
    for raw in (REPO_ROOT / "Dockerfile").read_text().replace("\\\n", " ").splitlines():
        if raw.strip() and not raw.lstrip().startswith("#"):
            keyword, _, rest = raw.strip().partition(" ")
            lines.append((keyword.upper(), rest.strip()))
    return lines


def _copies_from_the_repository() -> list[list[str]]:
    """The sources and destination of each COPY from the build context (not `--from` a stage)."""
    return [rest.split() for keyword, rest in dockerfile_instructions()
            if keyword == "COPY" and not rest.startswith("--from=")]


def test_every_copied_path_exists_and_the_entrypoint_is_copied() -> None:
    copied = [sources_and_destination[:-1] for sources_and_destination in _copies_from_the_repository()]
    for sources in copied:
        for source in sources:
            assert (REPO_ROOT / source).exists(), source
    [entrypoint] = [rest for keyword, rest in dockerfile_instructions() if keyword == "ENTRYPOINT"]
    assert entrypoint == '["python", "/opt/reviewgate/entrypoint.py"]'
    assert ["entrypoint.py"] in copied


def test_git_is_installed_and_the_workspace_is_a_safe_directory() -> None:
    runs = " ".join(rest for keyword, rest in dockerfile_instructions() if keyword == "RUN")
    assert "install -y --no-install-recommends git" in runs
    assert "git config --system --add safe.directory '*'" in runs


def _copied_into(context: Path) -> Path:
    """What the Dockerfile's COPY lines put in its WORKDIR, and nothing else."""
    for sources_and_destination in _copies_from_the_repository():
        *sources, destination = sources_and_destination
        for source in sources:
            target = context / destination / (Path(source).name if destination.endswith("/") else "")
            if (REPO_ROOT / source).is_dir():
                shutil.copytree(REPO_ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO_ROOT / source, target)
    return context


@pytest.mark.interpreter_independent  # the image's Python is its own (python:3.12-slim), whatever runs this
def test_the_installed_package_carries_its_schemas(tmp_path: Path) -> None:
    # Built from exactly what the image copies, as its `pip install .` does: a file the build needs
    # (the license, say) and the Dockerfile forgot fails here, not in the release.
    workdir = _copied_into(tmp_path / "opt")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), str(workdir)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("reviewgate_ci-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "reviewgate/schemas/finding.schema.json" in names
    assert "reviewgate/schemas/report.schema.json" in names
    assert "reviewgate/cli.py" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), "the MIT license text ships"
    assert not any(name.startswith(("tests/", "testing/")) for name in names)
    if shutil.which("cc") or shutil.which("gcc"):
        for module in COMPILED_PARTS:
            assert any(name.startswith(module.replace(".", "/") + ".")
                       and name.endswith((".so", ".pyd")) for name in names), f"the compiled {module} ships"


def _stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's instructions, one list per stage (each starting with its FROM)."""
    stages: list[list[tuple[str, str]]] = []
    for keyword, rest in dockerfile_instructions():
        if keyword == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword, rest))
    return stages


def test_the_image_installs_the_wheel_its_build_stage_compiled() -> None:
    """The running image has no compiler: the wheel is built in a stage that has one, and the image
    refuses to build when any compiled part is missing from it."""
    build, image = _stages()
    assert [build[0], image[0]] == [("FROM", "python:3.12-slim AS build"), ("FROM", "python:3.12-slim")]
    build_runs = [rest for keyword, rest in build if keyword == "RUN"]
    assert any("install -y --no-install-recommends gcc libc6-dev" in run for run in build_runs)
    assert any("pip wheel" in run and "-w /wheels ." in run for run in build_runs)
    image_runs = [rest for keyword, rest in image if keyword == "RUN"]
    assert any(f"import {', '.join(COMPILED_PARTS)}" in run for run in image_runs)
    assert not any("gcc" in run for run in image_runs), "the image has no compiler"


def test_the_image_copies_the_installed_packages_and_no_wheel_or_pip_run() -> None:
    """The packages are installed in the build stage and copied whole: a wheel copied into the image
    stays in its layer after `rm`, and pip's run there leaves its own bytecode; the compiled
    modules are stripped of their debug symbols (a quarter of their size) before the copy."""
    build, image = _stages()
    build_runs = [rest for keyword, rest in build if keyword == "RUN"]
    [install] = [run for run in build_runs if "pip install" in run]
    assert "--no-cache-dir" in install and "--prefix /install /wheels/*.whl" in install
    assert "find /install -name '*.so' -exec strip --strip-unneeded {} +" in install
    assert [rest for keyword, rest in image if keyword == "COPY" and rest.startswith("--from=")] == [
        "--from=build /install /usr/local"]
    assert not any("pip" in rest for keyword, rest in image if keyword == "RUN"), "pip runs only in the build stage"
