"""Run as root in a checkout another user owns (the container action in a runner's workspace), the
gate leaves nothing of root's behind: the history it fetches to deepen a depth-1 clone, its outputs
and its cache all belong to the checkout's owner, who can fetch, commit and `git clean` afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewgate.file_writing import write_atomic
from testing.cli import clean_environment
from testing.repo import GIT_IDENTITY, commit, git

ROOT = Path(__file__).resolve().parents[1]
RUNNER_UID = 1001  # the GitHub runner's user

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: runs the gate as root in a checkout "
                                                           f"owned by uid {RUNNER_UID}")


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A directory the runner's user can reach (pytest's own tmp dirs are root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="reviewgate-owner-"))
    os.chown(path, RUNNER_UID, RUNNER_UID)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _chown_tree(top: Path, uid: int) -> None:
    for root, directories, files in os.walk(top):
        for name in (*directories, *files):
            os.lchown(Path(root) / name, uid, uid)
    os.lchown(top, uid, uid)


def _depth_one_clone(workspace: Path) -> Path:
    """A runner's checkout: `fetch-depth: 1` of a feature branch whose base is 6 commits back on main."""
    upstream = workspace / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    # A verify too: its step logs are written under the output dir by the verify's own code.
    commit(upstream, {".prepcook/scripts.toml": '[test]\nrun = "echo tested"\n'}, "manifest")
    for number in range(4):
        commit(upstream, {f"module_{number}.py": f"VALUE_{number} = {number}\n"}, f"main {number}")
    git(upstream, "checkout", "-q", "-b", "feature")
    for number in range(3):
        body = "".join(f"    value_{line} = items[{line}] * {number + line}\n" for line in range(12))
        commit(upstream, {f"app_{number}.py": f"def total_{number}(items):\n{body}    return value_0\n"},
               f"feature {number}")
    git(upstream, "checkout", "-q", "main")
    commit(upstream, {"module_9.py": "LATER = 9\n"}, "main moves on")
    clone = workspace / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{upstream}", str(clone)],
                   check=True, capture_output=True, timeout=60)
    # Either user may serve the upstream to the other over file:// (git's local transport reads only
    # the global config for safe.directory); the runner's user owns the workspace.
    (workspace / ".gitconfig").write_text("[safe]\n\tdirectory = *\n", encoding="utf-8")
    _chown_tree(workspace, RUNNER_UID)
    return clone


def _as_runner(workspace: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_environment({**GIT_IDENTITY, "HOME": str(workspace), "GIT_CONFIG_NOSYSTEM": "1"})
    return subprocess.run(["git", *args], cwd=repo, env=env, user=RUNNER_UID, group=RUNNER_UID, extra_groups=[],
                          capture_output=True, text=True, timeout=60, check=False)


def _root_owned(top: Path) -> list[str]:
    found = [str(Path(root, name).relative_to(top)) for root, directories, files in os.walk(top)
             for name in (*directories, *files) if os.lstat(Path(root, name)).st_uid == 0]
    return sorted(found)


def test_a_run_as_root_leaves_every_file_it_makes_to_the_checkouts_owner(workspace: Path) -> None:
    clone = _depth_one_clone(workspace)
    assert (clone / ".git" / "shallow").is_file()

    completed = subprocess.run([sys.executable, "-m", "reviewgate", "run", "--reviewer", "builtin", "--base", "main"],
                               cwd=clone, env=clean_environment({"PYTHONPATH": str(ROOT), "HOME": str(workspace)}),
                               capture_output=True,
                               text=True, timeout=120, check=False)
    assert completed.returncode in (0, 1), completed.stdout + completed.stderr
    assert "fetch" in (clone / ".reviewgate" / "report.json").read_text(encoding="utf-8")  # it did deepen
    assert (clone / ".reviewgate-cache").is_dir() and (clone / ".reviewgate" / "report.json").is_file()
    assert (clone / ".reviewgate" / "verify" / "test.log").is_file()
    assert _root_owned(clone) == []

    # The later steps, as the runner's user: fetch into the repository, commit, clean everything away.
    for step in (("fetch", "-q", "origin", "main"), ("commit", "-q", "--allow-empty", "-m", "later step"),
                 ("clean", "-ffdxq")):
        done = _as_runner(workspace, clone, *step)
        assert done.returncode == 0, f"git {' '.join(step)}: {done.stderr}"
    assert not (clone / ".reviewgate").exists() and not (clone / ".reviewgate-cache").exists()


def test_a_file_written_as_root_keeps_the_mode_it_asks_for_and_goes_to_the_directorys_owner(workspace: Path) -> None:
    key = workspace / "cache" / "deeper" / ".key"
    write_atomic(key, b"secret", mode=0o600)
    for path in (key, key.parent, key.parent.parent):
        assert os.stat(path).st_uid == RUNNER_UID, path
    assert os.stat(key).st_mode & 0o777 == 0o600


def test_root_owned_leftovers_in_git_are_fetched_past_and_given_back(workspace: Path) -> None:
    """An older run (or another root step) left `.git/objects` root's: the owner's fetch cannot write
    there, so the gate fetches as root and then gives everything in .git back to the checkout's owner."""
    clone = _depth_one_clone(workspace)
    objects = clone / ".git" / "objects"
    os.chown(objects, 0, 0)
    os.chmod(objects, 0o755)
    assert _as_runner(workspace, clone, "fetch", "-q", "--depth=3", "origin", "feature").returncode != 0

    completed = subprocess.run([sys.executable, "-m", "reviewgate", "run", "--reviewer", "builtin", "--base", "main",
                                "--no-verify"], cwd=clone,
                               env=clean_environment({"PYTHONPATH": str(ROOT), "HOME": str(workspace)}),
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode in (0, 1), completed.stdout + completed.stderr
    assert _root_owned(clone) == []
    done = _as_runner(workspace, clone, "fetch", "-q", "origin", "main")
    assert done.returncode == 0, done.stderr
