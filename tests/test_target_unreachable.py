"""A shallow checkout whose origin cannot be reached: blocked (exit 3) naming the remote, never
a usage error claiming the ref does not exist. Real clones, a removed directory and a closed
127.0.0.1 port as the unreachable origin."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from testing.ci import shallow_clone
from testing.cli import run_cli
from testing.repo import commit, git, make_repo

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main moved on after `feature` branched off it, `feature` is 60 commits long (past the
    first deepening step)."""
    root = tmp_path_factory.mktemp("upstream")
    built = make_repo(root, {"src/app.py": "VALUE = 1\n"}, {"src/app.py": "VALUE = 2\n"})
    for index in range(59):
        git(built.path, "commit", "-q", "--allow-empty", "-m", f"step {index}")
    git(built.path, "checkout", "-q", "main")
    commit(built.path, {"README.md": "main moved on\n"}, "main 2")
    return built.path


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://user:token-in-url@127.0.0.1:{port}/repo.git"


def removed_directory_url(tmp_path: Path) -> str:
    gone = tmp_path / "gone.git"
    gone.mkdir()
    shutil.rmtree(gone)
    return f"file://{gone}"


@pytest.mark.parametrize("where", ["removed directory", "closed port"])
def test_a_base_behind_an_unreachable_origin_is_blocked_naming_the_remote(
    upstream: Path, tmp_path: Path, where: str
) -> None:
    """Case 12: a single-branch depth-1 clone lacks origin/main; origin cannot be reached."""
    clone = shallow_clone(upstream, tmp_path / "clone", "feature")
    url = removed_directory_url(tmp_path) if where == "removed directory" else closed_port_url()
    git(clone, "remote", "set-url", "origin", url)
    result = run_cli(clone, "run", "--base", "main", "--output-dir", "out")
    assert result.returncode == 3, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("reviewgate: error: cannot reach remote origin (")
    assert "token-in-url" not in line and "does not name" not in line and "neither" not in line


def test_deepening_toward_the_merge_base_with_origin_gone_is_blocked(upstream: Path, tmp_path: Path) -> None:
    clone = shallow_clone(upstream, tmp_path / "clone", "main")
    git(clone, "fetch", "-q", "--depth=1", "origin", "feature:refs/heads/feature")
    git(clone, "remote", "set-url", "origin", removed_directory_url(tmp_path))
    result = run_cli(clone, "run", "--base", "main", "--head", "feature", "--output-dir", "out")
    assert result.returncode == 3, result.stderr
    assert "cannot reach remote origin" in result.stderr and "gone.git" in result.stderr


def test_a_ref_that_truly_does_not_exist_stays_a_usage_error(upstream: Path, tmp_path: Path) -> None:
    clone = shallow_clone(upstream, tmp_path / "clone", "feature")
    result = run_cli(clone, "run", "--base", "no-such-branch", "--output-dir", "out")
    assert result.returncode == 2, result.stderr
    assert "no-such-branch" in result.stderr and "cannot reach" not in result.stderr
