"""freeze() on real repositories: the shapes a diff takes, the hash's stability, bad input."""

from __future__ import annotations

import os
import shutil
from functools import partial
from pathlib import Path

import pytest

from reviewgate.freeze.diff import ChangeStatus
from reviewgate.freeze.exclusions import ExclusionRules
from reviewgate.freeze.freeze import _reviewed_by_path, diff_between, freeze, reader_for
from reviewgate.freeze.git import GitFailure
from testing.cli import run_cli
from testing.repo import commit, git, make_repo

BODY = "".join(f"line {number} of a file long enough to be detected as renamed\n" for number in range(40))


def test_renames_modes_deletions_crlf_and_binaries(tmp_path: Path) -> None:
    built = make_repo(
        tmp_path,
        {"old_name.py": BODY, "script.sh": "echo hi\n", "gone.txt": "bye\n", "win.txt": "a\r\nb\r\n"},
        {
            "old_name.py": None,
            "new_name.py": BODY + "extra\n",
            "gone.txt": None,
            "win.txt": "a\r\nc\r\n",
            "image.bin": b"\x00\x01\x02binary",
        },
    )
    git(built.path, "update-index", "--chmod=+x", "script.sh")
    git(built.path, "commit", "-q", "-m", "mode")
    target = freeze(built.path, base="main")
    by_path = {change.path: change for change in target.files}
    renamed = by_path["new_name.py"]
    assert (renamed.status, renamed.old_path) == (ChangeStatus.RENAMED, "old_name.py")
    assert by_path["gone.txt"].status is ChangeStatus.DELETED
    assert (by_path["script.sh"].old_mode, by_path["script.sh"].new_mode) == ("100644", "100755")
    assert by_path["win.txt"].added_lines() == {2: "c\r"}, "CRLF is preserved"
    assert "image.bin" not in by_path
    assert [(item.path, item.reason) for item in target.excluded] == [
        ("image.bin", "binary file: listed, not diffed")
    ]


def test_non_utf8_path_and_content_never_crash(tmp_path: Path) -> None:
    built = make_repo(tmp_path, {"a.txt": "x\n"})
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    (built.path / name).write_bytes(b"caf\xe9 au lait\n")
    git(built.path, "add", "-A")
    git(built.path, "commit", "-q", "-m", "latin-1")
    result = run_cli(built.path, "freeze", "--base", "main")
    assert result.returncode == 0, result.stderr
    assert "caf\ufffd.txt" in result.stdout
    target = freeze(built.path, base="main")
    assert target.files[0].added_lines() == {1: "caf\ufffd au lait"}


def test_submodule_pointer_change_is_listed_not_reviewed(tmp_path: Path) -> None:
    inner = make_repo(tmp_path / "inner", {"lib.py": "X = 1\n"}).path
    built = make_repo(tmp_path, {"a.txt": "x\n"})
    git(built.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "lib")
    git(built.path, "commit", "-q", "-m", "add submodule")
    target = freeze(built.path, base="main")
    reasons = {item.path: item.reason for item in target.excluded}
    assert reasons["lib"].startswith("submodule pointer change")
    assert [change.path for change in target.files] == [".gitmodules"]


def test_patch_hash_survives_a_rebase_onto_a_base_that_did_not_touch_the_files(tmp_path: Path) -> None:
    built = make_repo(tmp_path, {"app.py": "A = 1\n", "other.py": "B = 1\n"}, {"app.py": "A = 2\n"})
    before = freeze(built.path, base="main")
    git(built.path, "checkout", "-q", "main")
    commit(built.path, {"other.py": "B = 2\n"}, "main moves")
    git(built.path, "checkout", "-q", "feature")
    git(built.path, "rebase", "-q", "main")
    after = freeze(built.path, base="main")
    assert after.head_sha != before.head_sha
    assert after.patch_sha256 == before.patch_sha256


def test_patch_hash_ignores_the_users_diff_config(tmp_path: Path) -> None:
    built = make_repo(
        tmp_path,
        {"app.py": "".join(f"x{n}\n" for n in range(40))},
        {"app.py": "".join(f"x{n}\n" if n % 10 else f"y{n}\n" for n in range(40))},
    )
    plain = freeze(built.path, base="main").patch_sha256
    for key, value in (
        ("diff.context", "10"),
        ("diff.algorithm", "patience"),
        ("diff.interHunkContext", "20"),
        ("diff.noprefix", "true"),
        ("color.ui", "always"),
        ("core.quotepath", "true"),
    ):
        git(built.path, "config", key, value)
    assert freeze(built.path, base="main").patch_sha256 == plain


def test_base_that_is_a_tag(tmp_path: Path) -> None:
    built = make_repo(tmp_path, {"a.txt": "x\n"}, {"a.txt": "y\n"})
    git(built.path, "tag", "-a", "-m", "release", "v1.0", built.base_sha)
    target = freeze(built.path, base="v1.0")
    assert (target.base_ref, target.base_sha, len(target.files)) == ("v1.0", built.base_sha, 1)


def test_dirty_working_tree_gets_its_own_identity(tmp_path: Path) -> None:
    built = make_repo(tmp_path, {"a.txt": "x\n"}, {"a.txt": "y\n"})
    clean = freeze(built.path, base="main", include_dirty=True)
    assert clean.dirty_sha256 is None and clean.head_tree is None
    (built.path / "a.txt").write_text("z\n")
    (built.path / "new.txt").write_text("untracked\n")
    dirty = freeze(built.path, base="main", include_dirty=True)
    assert (
        dirty.head_sha == clean.head_sha and dirty.dirty_sha256 and dirty.patch_sha256 != clean.patch_sha256
    )
    assert sorted(change.path for change in dirty.files) == ["a.txt", "new.txt"]
    assert git(built.path, "status", "--porcelain") == "M a.txt\n?? new.txt", "the user's index is untouched"
    (built.path / "new.txt").write_text("changed again\n")
    assert freeze(built.path, base="main", include_dirty=True).dirty_sha256 != dirty.dirty_sha256


@pytest.mark.parametrize(
    ("setup", "args", "code", "message"),
    [
        ("plain", ("--base", "no-such-branch"), 2, "'no-such-branch' (from --base) is not a local ref"),
        ("plain", ("--head", "nope"), 2, "--head: 'nope' does not name a commit"),
        ("unrelated", ("--base", "other"), 2, "share no history (unrelated histories"),
        ("empty", (), 2, "has no commits yet"),
        ("detached", (), 2, "HEAD is detached and no default branch"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, setup: str, args: tuple[str, ...], code: int, message: str
) -> None:
    if setup == "empty":
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
    else:
        built = make_repo(tmp_path, {"a.txt": "x\n"}, {"a.txt": "y\n"})
        repo = built.path
        if setup == "unrelated":
            git(repo, "checkout", "-q", "--orphan", "other")
            commit(repo, {"b.txt": "unrelated\n"}, "root")
            git(repo, "checkout", "-q", "feature")
        if setup == "detached":
            git(repo, "checkout", "-q", "--detach")
            git(repo, "branch", "-q", "-D", "main")
    result = run_cli(repo, "freeze", *args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_submodule_checkout_is_refused_unless_a_base_is_given(tmp_path: Path) -> None:
    inner = make_repo(tmp_path / "inner", {"lib.py": "X = 1\n"}, {"lib.py": "X = 2\n"}).path
    outer = make_repo(tmp_path, {"a.txt": "x\n"}).path
    git(
        outer,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        "-b",
        "feature",
        str(inner),
        "lib",
    )
    result = run_cli(outer / "lib", "freeze")
    assert result.returncode == 2
    assert "submodule checkout of" in result.stderr and "--base" in result.stderr
    assert run_cli(outer / "lib", "freeze", "--base", "origin/main").returncode == 0


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to hand the repo to another user"
)
def test_a_workspace_owned_by_another_user_is_reviewed_without_touching_global_config(tmp_path: Path) -> None:
    """Container actions mount the workspace owned by the runner's user: git refuses it as
    'dubious ownership' unless safe.directory allows it, which reviewgate sets per call."""
    built = make_repo(tmp_path, {"a.txt": "x\n"}, {"a.txt": "y\n"})
    home = tmp_path / "home"
    home.mkdir()
    for path in [built.path, *built.path.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    result = run_cli(built.path, "freeze", "--base", "main", env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert '"path": "a.txt"' in result.stdout
    assert not (home / ".gitconfig").exists(), "the user's global config is never written"


def test_refs_resolved_in_one_process_name_what_each_names_alone(tmp_path: Path) -> None:
    # resolve_refs asks for HEAD and a named base with one `cat-file --batch-check`: each answer
    # must be the one `rev-parse --verify` gives for that ref alone, a missing or odd one included.
    from reviewgate.freeze.commit_names import resolve_commits
    from reviewgate.freeze.git import resolve_commit

    built = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    git(built.path, "tag", "-a", "-m", "annotated", "v1", "main")
    tree = git(built.path, "rev-parse", "HEAD^{tree}")
    refs = ["HEAD", "main", "v1", built.head_sha, built.head_sha[:10], "missing-branch", tree, "main..HEAD",
            "-main", "HEAD~1", "main\nHEAD", "", "HEAD ", built.base_sha.upper()]
    assert resolve_commits(built.path, refs) == [resolve_commit(built.path, ref) for ref in refs]
    assert resolve_commits(built.path, ["HEAD", "main"]) == [built.head_sha, built.base_sha]


def test_the_reviewed_files_added_lines_are_decoded_while_git_writes_the_diff(tmp_path: Path) -> None:
    built = make_repo(
        tmp_path,
        {"app.py": "a = 1\n", "package-lock.json": "{}\n"},
        {"app.py": "a = 1\nb = 2\n", "package-lock.json": '{"lockfileVersion": 3}\n'},
    )
    target = freeze(built.path, base="main", for_review=True)
    reviewed = {change.path: change for change in target.files}
    # Decoded in the freeze (cached on the change), not left to the review's own time after it.
    assert reviewed["app.py"].__dict__.get("_added_lines") == {2: "b = 2"}
    every_file = diff_between(built.path, built.base_sha, built.head_sha,
                              read_ahead=partial(_reviewed_by_path, ExclusionRules()))
    lock_file = next(change for change in every_file if change.path == "package-lock.json")
    assert "_added_lines" not in lock_file.__dict__, "a file the policy leaves out is not decoded for nothing"


def test_the_files_read_for_their_headers_are_not_read_again_for_the_review(tmp_path: Path) -> None:
    base = "".join(f"value_{number} = {number}\n" for number in range(20))
    built = make_repo(tmp_path, {"app.py": base}, {"app.py": base + "value_20 = 20\n"})
    target = freeze(built.path, base="main", for_review=True)  # the diff hides line 1: its header is read
    shutil.rmtree(built.path / ".git" / "objects")  # nothing can come from git any more
    assert reader_for(target).read_bytes("app.py") == (base + "value_20 = 20\n").encode()


def test_a_freeze_that_no_review_follows_neither_decodes_nor_keeps_files(tmp_path: Path) -> None:
    base = "".join(f"value_{number} = {number}\n" for number in range(20))
    built = make_repo(tmp_path, {"app.py": base}, {"app.py": base + "value_20 = 20\n"})
    target = freeze(built.path, base="main")  # `reviewgate freeze`: the JSON, and nothing held for later
    assert "_added_lines" not in target.files[0].__dict__
    shutil.rmtree(built.path / ".git" / "objects")
    with pytest.raises(GitFailure):
        reader_for(target).read_bytes("app.py")
