"""One version everywhere a user copies it from: pyproject.toml, the package, the image the action
runs, the GitLab example, the docs' pins; and a release workflow that publishes that version."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import reviewgate
from reviewgate.tomlfile import read_toml

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "ghcr.io/reviewgate/reviewgate"
# Only literal versions: `<version>`, `$VERSION` and `${{ … }}` are placeholders.
MENTIONS = {
    "image": re.compile(re.escape(IMAGE) + r":(\d[\w.+-]*)"),
    "pin": re.compile(r"reviewgate-ci==(\d[\w.+-]*)"),
    "action tag": re.compile(r"reviewgate/reviewgate@v(\d[\w.+-]*)"),
    "pre-commit rev": re.compile(r"github\.com/reviewgate/reviewgate\n\s*rev: v(\d[\w.+-]*)"),
}
SKIPPED_DIRECTORIES = ("tests/", "build/", "dist/")


def version() -> str:
    return str(read_toml(ROOT / "pyproject.toml")["project"]["version"])


def text_files() -> list[Path]:
    """What the repository holds (tracked, or new and not ignored), tests aside."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True, timeout=60,
    ).stdout.decode().split("\0")
    paths = [ROOT / name for name in listed if name and not name.startswith(SKIPPED_DIRECTORIES)]
    return [path for path in paths if path.is_file() and b"\0" not in path.read_bytes()[:4096]]


def mentions() -> list[tuple[str, str, int, str]]:
    """(kind, file, line, version) of every literal version a user may copy."""
    found = []
    for path in text_files():
        content = path.read_text(encoding="utf-8", errors="replace")
        for kind, pattern in MENTIONS.items():
            for match in pattern.finditer(content):
                line = content.count("\n", 0, match.start(1)) + 1
                found.append((kind, path.relative_to(ROOT).as_posix(), line, match.group(1)))
    return found


def disagreements(current: str) -> list[str]:
    major = current.split(".")[0]
    wrong = []
    for kind, where, line, mentioned in mentions():
        # `@v0` (the major tag) follows every release of 0.x; `@v0.1.0` and the rest name one release.
        expected = major if kind == "action tag" and "." not in mentioned else current
        if mentioned != expected:
            wrong.append(f"{where}:{line}: {kind} {mentioned}, expected {expected}")
    return wrong


def test_every_mentioned_version_is_the_project_version() -> None:
    assert not disagreements(version()), "\n".join(disagreements(version()))


def test_the_places_users_copy_from_mention_the_version() -> None:
    places = {(kind, where) for kind, where, _, _ in mentions()}
    for required in [("image", "action.yml"), ("image", ".gitlab-ci.example.yml"), ("image", "README.md"),
                     ("pin", "docs/examples/verify-on-comment.yml"), ("action tag", "README.md"),
                     ("pre-commit rev", "README.md")]:
        assert required in places, required


def test_another_version_would_be_caught() -> None:
    assert any("action.yml" in line for line in disagreements("9.9.9"))
    assert any("README.md" in line and "action tag" in line for line in disagreements("9.9.9"))


def test_the_action_runs_the_released_image_and_the_package_knows_its_version() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"] == {"using": "docker", "image": f"docker://{IMAGE}:{version()}"}
    assert reviewgate.__version__ == version()
    assert read_toml(ROOT / "pyproject.toml")["project"]["name"] == "reviewgate-ci"


def _github_filter(pattern: str) -> re.Pattern[str]:
    """A GitHub tag filter as a regular expression: `*` any run but `/`, `+` and `[…]` as in regexes."""
    translated = "".join({"*": "[^/]*", ".": r"\."}.get(character, character) for character in pattern)
    return re.compile(translated + "$")


def _release() -> dict[str, object]:
    loaded = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_release_runs_on_the_version_tag_and_not_on_the_major_tag_it_moves() -> None:
    triggers = _release()[True]  # YAML 1.1 reads the key `on` as true
    assert isinstance(triggers, dict)
    filters = [_github_filter(pattern) for pattern in triggers["push"]["tags"]]
    assert any(tag.match(f"v{version()}") for tag in filters)
    assert any(tag.match("v1.2.0rc1") for tag in filters)
    assert not any(tag.match(tag_name) for tag in filters for tag_name in ("v0", "v1", "version-notes"))


def test_the_release_pushes_the_image_the_action_names_and_publishes_with_trusted_publishing() -> None:
    jobs = _release()["jobs"]
    assert isinstance(jobs, dict)
    image_steps = yaml.safe_dump(jobs["image"])
    assert f"{IMAGE}:$VERSION" in image_steps and "linux/amd64,linux/arm64" in image_steps
    assert jobs["pypi"]["permissions"] == {"id-token": "write"} and jobs["pypi"]["environment"]["name"] == "pypi"
    assert any("pypa/gh-action-pypi-publish" in step.get("uses", "") for step in jobs["pypi"]["steps"])
    assert set(jobs["major-tag"]["needs"]) >= {"pypi", "image"}, "the major tag moves only after both are out"
    assert set(jobs["pypi"]["needs"]) == {"build", "wheels"}, "the sdist and every wheel go out together"


def _version_step_script() -> str:
    [step] = [step for step in _release()["jobs"]["build"]["steps"] if step.get("id") == "version"]
    return str(step["run"])


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the release runs this step on Python 3.12 (tomllib)")
@pytest.mark.parametrize(("tag", "succeeds"), [("v{version}", True), ("v9.9.9", False), ("{version}", False)])
def test_the_release_stops_when_the_tag_is_not_the_pyproject_version(tmp_path: Path, tag: str,
                                                                     succeeds: bool) -> None:
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    (bin_directory / "python").symlink_to(sys.executable)
    outputs = tmp_path / "outputs"
    environment = {**os.environ, "PATH": f"{bin_directory}{os.pathsep}{os.environ['PATH']}",
                   "TAG": tag.format(version=version()), "GITHUB_OUTPUT": str(outputs)}
    completed = subprocess.run(["bash", "-e", "-c", _version_step_script()], cwd=ROOT, env=environment,
                               capture_output=True, text=True, timeout=60, check=False)
    assert (completed.returncode == 0) is succeeds, completed.stdout + completed.stderr
    if succeeds:
        written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
        assert written == {"version": version(), "major": version().split(".")[0], "final": "true"}
    else:
        assert f"is not v{version()}, the version in pyproject.toml" in completed.stdout
