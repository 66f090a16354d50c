"""Blobs read from the checkout (freeze/checkout.py): used only where the file there is a regular
file reached without a symlink and holds exactly the blob; everything else is read from git, so
what a reader returns is git's bytes whatever the branch's code did to the checkout."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from reviewgate.freeze.checkout import TRIES_BEFORE_JUDGING, CheckoutReader
from reviewgate.freeze.git import TreeReader
from reviewgate.freeze.git_objects import blob_id
from testing.repo import commit, git, make_repo

FILES = {
    "app/models.py": "class Model:\n    pass\n",
    "app/views/index.py": "def index():\n    return 'index'\n",
    "app/views/detail.py": "def detail(item):\n    return item\n",
    "README.md": "# app\n",
    "empty.py": "",
}


def _reader(repo: Path) -> tuple[TreeReader, dict[str, str]]:
    reader = TreeReader(repo, git(repo, "rev-parse", "HEAD"))
    return reader, reader.blob_ids(None)


def _from_checkout(reader: TreeReader, blobs: dict[str, str]) -> set[str]:
    """The paths a fresh checkout read takes from the checkout (the rest git reads)."""
    sized = {path: (blob, reader._blob_sizes[blob]) for path, blob in blobs.items()}
    return set(CheckoutReader(reader.repo).read(sized))


def _git_bytes(repo: Path, blobs: dict[str, str]) -> dict[str, bytes]:
    return {path: subprocess.run(["git", "cat-file", "blob", blob], cwd=repo, capture_output=True, check=True).stdout
            for path, blob in blobs.items()}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, FILES).path


def test_a_clean_checkout_is_read_whole_and_gives_gits_bytes(repo: Path) -> None:
    reader, blobs = _reader(repo)
    assert _from_checkout(reader, blobs) == set(FILES)
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_rewritten_file_is_read_from_git(repo: Path) -> None:
    reader, blobs = _reader(repo)
    (repo / "app/models.py").write_text("class Model:\n    secret = 1\n")  # another size
    (repo / "README.md").write_text("# ppa\n")  # the same size, other bytes
    assert _from_checkout(reader, blobs) == set(FILES) - {"app/models.py", "README.md"}
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_symlink_in_a_files_place_is_not_followed_even_to_the_same_bytes(repo: Path, tmp_path: Path) -> None:
    reader, blobs = _reader(repo)
    outside = tmp_path / "outside.py"
    outside.write_text(FILES["app/models.py"])
    (repo / "app/models.py").unlink()
    (repo / "app/models.py").symlink_to(outside)
    assert "app/models.py" not in _from_checkout(reader, blobs)
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_symlinked_directory_is_not_followed(repo: Path, tmp_path: Path) -> None:
    reader, blobs = _reader(repo)
    copy = tmp_path / "views"
    (repo / "app/views").rename(copy)
    (repo / "app/views").symlink_to(copy, target_is_directory=True)
    assert _from_checkout(reader, blobs) == set(FILES) - {"app/views/index.py", "app/views/detail.py"}
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_fifo_in_a_files_place_neither_blocks_nor_is_read(repo: Path) -> None:
    reader, blobs = _reader(repo)
    (repo / "app/models.py").unlink()
    os.mkfifo(repo / "app/models.py")
    result: dict[str, object] = {}
    worker = threading.Thread(target=lambda: result.update(read=reader.read_blob_ids(blobs)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "reading the checkout blocked on a FIFO"
    assert result["read"] == _git_bytes(repo, blobs)
    assert "app/models.py" not in _from_checkout(reader, blobs)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_in_a_files_place_is_not_opened(repo: Path) -> None:
    reader, blobs = _reader(repo)
    (repo / "empty.py").unlink()
    os.mknod(repo / "empty.py", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero: endless bytes
    assert "empty.py" not in _from_checkout(reader, blobs)
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_missing_file_or_directory_is_read_from_git(repo: Path) -> None:
    reader, blobs = _reader(repo)
    (repo / "README.md").unlink()
    for name in ("index.py", "detail.py"):
        (repo / "app/views" / name).unlink()
    (repo / "app/views").rmdir()
    (repo / "app/views").write_text("a file where a directory was\n")
    assert _from_checkout(reader, blobs) == {"app/models.py", "empty.py"}
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_paths_that_climb_out_are_never_resolved(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text(FILES["app/models.py"])
    blob = blob_id(FILES["app/models.py"].encode())
    size = len(FILES["app/models.py"])
    asked = {"../secret.py": (blob, size), "app/./models.py": (blob, size), "app//models.py": (blob, size)}
    assert CheckoutReader(repo).read(asked) == {}


def test_no_checkout_reads_from_git(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    reader, blobs = _reader(bare)
    assert _from_checkout(reader, blobs) == set()
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_checkout_of_another_commit_is_left_alone_after_the_first_tries(tmp_path: Path) -> None:
    many = {f"module_{number}.py": f"value = {number}\n" for number in range(3 * TRIES_BEFORE_JUDGING)}
    repo = make_repo(tmp_path, many).path
    reader, blobs = _reader(repo)
    commit(repo, {name: f"value = {number} + 1\n" for number, name in enumerate(many)})  # all of them changed
    checkout = CheckoutReader(repo)
    assert checkout.read({path: (blob, reader._blob_sizes[blob]) for path, blob in blobs.items()}) == {}
    assert checkout.tried == TRIES_BEFORE_JUDGING
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)


def test_a_sha256_repository_is_checked_with_its_own_hash(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    if subprocess.run(["git", "init", "-q", "--object-format=sha256"], cwd=repo, capture_output=True).returncode:
        pytest.skip("this git cannot make a SHA-256 repository")
    commit(repo, FILES)
    reader, blobs = _reader(repo)
    assert all(len(blob) == 64 for blob in blobs.values())
    assert _from_checkout(reader, blobs) == set(FILES)
    (repo / "README.md").write_text("# ppa\n")
    assert reader.read_blob_ids(blobs) == _git_bytes(repo, blobs)
