"""What the verify must leave alone is checked after it, on real repositories: a rewritten loose
object is refused on read, and a changed git config, hook or tree is named (verify/tamper.py)."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from reviewgate.freeze.git import TreeReader, read_blobs
from reviewgate.freeze.git_objects import StoreTampered
from reviewgate.verify.tamper import take_fingerprint
from testing.cli import run_cli
from testing.repo import git, make_repo

SWALLOW = "def load(path):\n    try:\n        return open(path).read()\n    except Exception:\n        pass\n"
CLEAN = b"def load(path):\n    return open(path).read()\n"


def _rewrite_loose_object(repo: Path, blob: str, data: bytes) -> None:
    path = repo / ".git/objects" / blob[:2] / blob[2:]
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(data) + data))


def test_a_blob_rewritten_in_place_is_refused_not_reviewed(tmp_path: Path) -> None:
    branch = make_repo(tmp_path, {"README.md": "x\n"}, {"app.py": SWALLOW})
    blob = git(branch.path, "rev-parse", f"{branch.head_sha}:app.py").strip()
    _rewrite_loose_object(branch.path, blob, CLEAN)
    assert git(branch.path, "cat-file", "blob", blob).strip() == CLEAN.decode().strip()  # git does not notice
    with pytest.raises(StoreTampered):
        TreeReader(branch.path, branch.head_sha).read_bytes("app.py")
    with pytest.raises(StoreTampered):
        read_blobs(branch.path, [blob])


def test_the_whole_run_blocks_on_a_rewritten_blob_instead_of_approving_it(tmp_path: Path) -> None:
    branch = make_repo(tmp_path, {"README.md": "x\n"}, {"app.py": SWALLOW})
    blob = git(branch.path, "rev-parse", f"{branch.head_sha}:app.py").strip()
    _rewrite_loose_object(branch.path, blob, CLEAN)
    result = run_cli(branch.path, "run", "--base", "main")
    assert result.returncode in (1, 3), result.stdout
    assert result.report()["verdict"] != "approve"


def test_changes_to_the_git_store_and_trees_are_named(tmp_path: Path) -> None:
    branch = make_repo(tmp_path, {"README.md": "x\n"}, {"app.py": SWALLOW})
    repo = branch.path
    before = take_fingerprint(repo, (branch.head_sha, branch.base_sha))
    assert take_fingerprint(repo, (branch.head_sha, branch.base_sha)).changed_since(before) == ()
    with open(repo / ".git/config", "a", encoding="utf-8") as config:
        config.write("[core]\n\tfsmonitor = touch pwned\n")
    (repo / ".git/hooks/post-checkout").write_text("#!/bin/sh\n")
    tree = git(repo, "rev-parse", f"{branch.head_sha}^{{tree}}").strip()
    path = repo / ".git/objects" / tree[:2] / tree[2:]
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"tree 0\0"))
    changed = take_fingerprint(repo, (branch.head_sha, branch.base_sha)).changed_since(before)
    assert "git config" in changed and "git hooks" in changed
    assert f"the tree of {branch.head_sha[:12]}" in changed


def test_a_filter_written_into_the_users_git_config_is_named(tmp_path: Path) -> None:
    """As the gate's own user the verify can write ~/.gitconfig, which the gate's git calls that
    read the work tree still read: a clean filter or an fsmonitor set there would run in the gate."""
    branch = make_repo(tmp_path / "repo", {"README.md": "x\n"}, {"app.py": SWALLOW})
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home)}
    before = take_fingerprint(branch.path, (branch.head_sha,), environ)
    (home / ".gitconfig").write_text("[filter \"x\"]\n\tclean = touch pwned\n", encoding="utf-8")
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "attributes").write_text("* filter=x\n", encoding="utf-8")
    changed = take_fingerprint(branch.path, (branch.head_sha,), environ).changed_since(before)
    assert changed == ("the user's git attributes", "~/.gitconfig")


def test_doctor_says_who_the_verify_runs_as(tmp_path: Path) -> None:
    branch = make_repo(tmp_path, {".prepcook/scripts.toml": '[test]\nrun = "true"\n'})
    result = run_cli(branch.path, "doctor")
    line = next(line for line in result.stdout.splitlines() if "verify boundary:" in line)
    expected = "separate user" if os.geteuid() == 0 else ("namespaces", "same user")
    assert any(word in line for word in ((expected,) if isinstance(expected, str) else expected)), line
