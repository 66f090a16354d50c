"""A change is marked as a fix by its branch name or head subject starting fix/bug/hotfix."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.fix_marker import is_marked_as_fix, says_fix
from testing.repo import commit, git, make_repo


@pytest.mark.parametrize(
    "text",
    [
        "fix/login",
        "Fix: handle None",
        "fixes #12 crash",
        "bugfix-rounding",
        "bug/123",
        "hotfix/prod",
        "fix",
        "fix(api): retry",
    ],
)
def test_fix_words(text: str) -> None:
    assert says_fix(text)


@pytest.mark.parametrize(
    "text",
    ["fixture-cleanup", "buggy-feature", "prefix/fix", "feature/fix-later", "add fix", "hotfixes-doc", ""],
)
def test_not_fix_words(text: str) -> None:
    assert not says_fix(text)


def test_branch_name_subject_and_head_ref(tmp_path: Path) -> None:
    by_branch = make_repo(tmp_path / "a", {"a.txt": "1\n"}, {"a.txt": "2\n"}, branch_name="fix/overflow")
    assert is_marked_as_fix(by_branch.path, by_branch.head_sha)
    by_subject = make_repo(
        tmp_path / "b", {"a.txt": "1\n"}, {"a.txt": "2\n"}, message="Fix: overflow on empty cart"
    )
    assert is_marked_as_fix(by_subject.path, by_subject.head_sha)
    neither = make_repo(tmp_path / "c", {"a.txt": "1\n"}, {"a.txt": "2\n"}, message="add totals")
    assert not is_marked_as_fix(neither.path, neither.head_sha)
    git(neither.path, "checkout", "-q", "-b", "hotfix/totals")
    head = commit(neither.path, {"a.txt": "3\n"}, "more totals")
    git(neither.path, "checkout", "-q", "--detach", "main")
    assert is_marked_as_fix(neither.path, head, head="hotfix/totals")
    assert not is_marked_as_fix(neither.path, head, head=head)
    assert is_marked_as_fix(neither.path, head, head=head, branch="bug/ci-knows-the-branch")
