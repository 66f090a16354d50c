"""The history benchmark lists merged PRs from a real first-parent history and runs the gate on
one as a GitHub pull_request run would, with the head branch name reaching the fix marker."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.history_gate import review_pull_request, shared_clone
from benchmarks.history_prs import list_pull_requests
from testing.repo import commit, git, make_repo

REPO_ROOT = Path(__file__).resolve().parent.parent


def _history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """main: base, a merge of PR #1 from fix/thing, a squash of PR #2, a direct push."""
    made = make_repo(tmp_path, {"app.txt": "one\n"}, {"app.txt": "one\ntwo\n"},
                     branch_name="fix/thing", message="Handle the second line")
    repo = made.path
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "fix/thing", "-m", "Merge pull request #1 from owner/fix/thing")
    merged = git(repo, "rev-parse", "HEAD")
    squashed = commit(repo, {"notes.txt": "three\n"}, "Add notes (#2)")
    commit(repo, {"notes.txt": "four\n"}, "Direct push to main")
    return repo, {"base": made.base_sha, "head": made.head_sha, "merged": merged, "squashed": squashed}


def test_lists_merge_and_squash_pull_requests(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path)
    requests = list_pull_requests(repo, 10)
    assert [(item.number, item.kind, item.base, item.head, item.head_ref) for item in requests] == [
        (2, "squash", shas["merged"], shas["squashed"], None),
        (1, "merge", shas["base"], shas["head"], "fix/thing"),
    ]
    assert requests[1].subject == "Handle the second line"
    assert [item.number for item in list_pull_requests(repo, 1)] == [2]


def test_gate_sees_the_head_branch_as_ci_would(tmp_path: Path) -> None:
    repo, _ = _history(tmp_path)
    merge = list_pull_requests(repo, 10)[1]
    clone = shared_clone(repo, tmp_path)
    record = review_pull_request(clone, "repo", merge, sys.executable, REPO_ROOT, timeout=60)
    # Only the branch name says fix (the subject does not), so this finding proves it reached the gate.
    assert (record["exit_code"], record["verdict"]) == (1, "request_changes"), record.get("error")
    assert "tests/fix-without-test" in [item["rule"] for item in record["blocking"]]
    assert record["added_lines"] == 1
    assert git(clone, "worktree", "list").count("\n") == 0  # the run's checkout is gone
