"""The history benchmark lists merged PRs from a real first-parent history and runs the gate on
one as a GitHub pull_request run would, with the head branch name reaching the fix marker."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from benchmarks.history_benchmark import error_summary
from benchmarks.history_gate import review_pull_request, run_bounded, shared_clone
from benchmarks.history_lift import mantel_haenszel, mantel_haenszel_interval
from benchmarks.history_prs import list_pull_requests
from benchmarks.history_szz import SzzLimits, szz_lift
from testing.repo import commit, git, make_repo

REPO_ROOT = Path(__file__).resolve().parent.parent


def _history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """main: base, a merge of PR #1 from fix/thing, a squash of PR #2, a direct push."""
    # A fix that adds two branches: only new behaviour like this makes a fix without a test block.
    fixed = "def value(x):\n    if x is None:\n        return 0\n    if x < 0:\n        return -1\n    return 1\n"
    made = make_repo(tmp_path, {"app.py": "def value(x):\n    return 1\n"}, {"app.py": fixed},
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
    assert [item.number for item in list_pull_requests(repo, 5, skip=1)] == [1]


def test_gate_sees_the_head_branch_as_ci_would(tmp_path: Path) -> None:
    repo, _ = _history(tmp_path)
    merge = list_pull_requests(repo, 10)[1]
    clone = shared_clone(repo, tmp_path)
    record = review_pull_request(clone, "repo", merge, sys.executable, REPO_ROOT, timeout=60)
    # Only the branch name says fix (the subject does not), so this finding proves it reached the gate.
    assert (record["exit_code"], record["verdict"]) == (1, "request_changes"), record.get("error")
    assert "tests/fix-without-test" in [item["rule"] for item in record["blocking"]]
    assert record["added_lines"] == 4
    assert git(clone, "worktree", "list").count("\n") == 0  # the run's checkout is gone


def test_szz_finds_the_pull_request_a_later_fix_changed(tmp_path: Path) -> None:
    made = make_repo(tmp_path, {"app.py": "def keep():\n    return 0\n"}, None)
    repo = made.path
    git(repo, "checkout", "-q", "main")
    commit(repo, {"app.py": "def keep():\n    return 0\n\n\ndef total(items):\n    return len(items)\n"},
           "Add total (#1)")
    commit(repo, {"other.py": "X = 1\n"}, "Add other (#2)")
    commit(repo, {"app.py": "def keep():\n    return 0\n\n\ndef total(items):\n    return sum(items)\n"},
           "fix: total sums the items (#3)")
    records = [{"pr": item.number, "kind": item.kind, "base": item.base, "head": item.head,
                "head_ref": item.head_ref, "subject": item.subject, "merged_commit": item.merged_commit,
                "exit_code": 1 if item.number == 1 else 0,
                "verdict": "request_changes" if item.number == 1 else "approve",
                "blocking": [{"rule": "r", "path": "app.py", "line": 5}] if item.number == 1 else []}
               for item in list_pull_requests(repo, 10)]
    result = szz_lift(repo, records, SzzLimits(window=10, budget_seconds=60))
    assert (result.fixes_found, result.fixes_scanned) == (1, 1)
    assert result.fixed_lines == {1: {"app.py": {6}}}
    assert result.fixed_by == {1: {git(repo, "rev-parse", "HEAD")}}
    rows = {row["pr"]: row for row in result.rows}
    assert (rows[1]["fixed"], rows[2]["fixed"], rows[3]["fixed"]) == (True, False, False)
    # The finding on line 5 is within 10 lines of fixed line 6; so are all 4 added lines.
    assert (rows[1]["near"], rows[1]["chance"]) == (1, 1.0)


def test_mantel_haenszel_weights_each_size_stratum() -> None:
    def rows(fixed_blocked: int, fixed: int, unfixed_blocked: int, unfixed: int) -> list[dict[str, object]]:
        return ([{"fixed": True, "blocked": index < fixed_blocked} for index in range(fixed)]
                + [{"fixed": False, "blocked": index < unfixed_blocked} for index in range(unfixed)])

    strata = {"small": rows(1, 2, 2, 8), "large": rows(3, 4, 1, 4)}
    # (1*8/10 + 3*4/8) / (2*2/10 + 1*4/8) = 2.3 / 0.9
    assert mantel_haenszel(strata) == pytest.approx(2.3 / 0.9)
    assert mantel_haenszel({"only": rows(1, 1, 0, 3)}) is None
    # One stratum: the variance of log RR is 1/a - 1/n1 + 1/c - 1/n0 = 1/2 - 1/4 + 1/3 - 1/12 = 0.5.
    single = {"only": rows(2, 4, 3, 12)}
    low, high = mantel_haenszel_interval(single) or (0.0, 0.0)
    assert mantel_haenszel(single) == pytest.approx(2.0)
    assert (low, high) == (pytest.approx(2.0 * math.exp(-1.96 * math.sqrt(0.5))),
                           pytest.approx(2.0 * math.exp(1.96 * math.sqrt(0.5))))


def test_a_run_past_its_timeout_is_stopped_and_leaves_its_stack(tmp_path: Path) -> None:
    environment = {"PATH": "/usr/bin:/bin", "PYTHONFAULTHANDLER": "1"}
    stdout, stderr = tmp_path / "out", tmp_path / "err"
    code = run_bounded([sys.executable, "-c", "import time\ntime.sleep(60)"], tmp_path, environment,
                       stdout, stderr, timeout=0.5)
    assert code is None
    assert 'File "<string>", line 2' in stderr.read_text()
    summary = error_summary("timed out after 1s: " + stderr.read_text())
    assert summary.startswith("timed out after 1s") and 'File "<string>", line 2' in summary
