"""The history benchmark lists merged PRs from a real first-parent history and runs the gate on
one as a GitHub pull_request run would, with the head branch name reaching the fix marker."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from benchmarks.history_benchmark import error_summary
from benchmarks.history_gate import review_pull_request, run_bounded, shared_clone
from benchmarks.history_lift import mantel_haenszel, mantel_haenszel_interval, print_szz
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
    assert (record["exit_code"], record["verdict"]) == (0, "approve"), record.get("error")  # tests rules advise
    assert record["rule_counts"].get("tests/fix-without-test") == 1
    assert record["added_lines"] == 4
    assert git(clone, "worktree", "list").count("\n") == 0  # the run's checkout is gone


def _later_fixed_history(tmp_path: Path) -> Path:
    """PR #1 adds `total` (line 6 returns len), #2 touches another file, #3 fixes line 6 of #1."""
    made = make_repo(tmp_path, {"app.py": "def keep():\n    return 0\n"}, None)
    repo = made.path
    git(repo, "checkout", "-q", "main")
    commit(repo, {"app.py": "def keep():\n    return 0\n\n\ndef total(items):\n    return len(items)\n"},
           "Add total (#1)")
    commit(repo, {"other.py": "X = 1\n"}, "Add other (#2)")
    commit(repo, {"app.py": "def keep():\n    return 0\n\n\ndef total(items):\n    return sum(items)\n"},
           "fix: total sums the items (#3)")
    return repo


def _records(repo: Path, blocking: list[dict[str, object]], located: list[dict[str, object]] | None = None
             ) -> list[dict[str, object]]:
    """Gate records of every PR: PR #1 blocked by `blocking` (and `located` kept when given), the rest approved."""
    records = []
    for item in list_pull_requests(repo, 10):
        first = item.number == 1
        record: dict[str, object] = {
            "pr": item.number, "kind": item.kind, "base": item.base, "head": item.head,
            "head_ref": item.head_ref, "subject": item.subject, "merged_commit": item.merged_commit,
            "exit_code": 1 if first else 0, "verdict": "request_changes" if first else "approve",
            "blocking": blocking if first else []}
        if located is not None:
            record["located"] = located if first else []
        records.append(record)
    return records


def test_szz_finds_the_pull_request_a_later_fix_changed(tmp_path: Path) -> None:
    repo = _later_fixed_history(tmp_path)
    records = _records(repo, [{"rule": "r", "path": "app.py", "line": 5}])
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


def test_szz_counts_a_finding_of_any_severity_on_a_line_the_fix_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                       ) -> None:
    repo = _later_fixed_history(tmp_path)
    blocking = [{"rule": "tests/missing-tests", "path": "app.py", "line": 5}]
    # Line 5 is next to the fixed line 6, not on it: only the minor finding spanning 4..6 is on it.
    located = [*blocking, {"rule": "correctness/r", "severity": "minor", "class": "correctness", "path": "app.py",
                           "line": 4, "end_line": 6}]
    rows = {row["pr"]: row for row in szz_lift(repo, _records(repo, blocking, located), SzzLimits(10, 60)).rows}
    assert (rows[1]["on_fixed_line"], rows[1]["blocked"], rows[1]["code_blocked"]) == (1, True, False)
    near_only = {row["pr"]: row for row in szz_lift(repo, _records(repo, blocking, blocking), SzzLimits(10, 60)).rows}
    assert near_only[1]["on_fixed_line"] == 0
    print_szz([szz_lift(repo, _records(repo, blocking, located), SzzLimits(10, 60))])
    printed = capsys.readouterr().out
    assert "later-fixed PRs with a finding (any severity) on a line the fix changed: 1 of 1 (100.0%)" in printed
    assert "    #1: correctness/r minor app.py:4\n" in printed
    assert "    of them by a code-reading rule (not tests/, process/) outside test files: 1\n" in printed
    assert "a finding at any severity: later-fixed 1/1 (100.0%) vs not fixed 0/2 (0.0%)" in printed
    assert "code-reading blocks (not tests/, process/): later-fixed 0/1 (0.0%)" in printed
    # The minor correctness finding counts as a code-reading finding; the tests rule's block does not.
    assert "a code-reading finding outside test files, any severity: later-fixed 1/1 (100.0%)" in printed
    assert rows[1]["code_found"] and not near_only[1]["code_found"]
    assert "  correctness/r: 1/1 (100.0%) vs 0/2 (0.0%); size-adjusted undefined" in printed
    assert "of class correctness (the class a bug blocks on), outside test files: later-fixed 1/1" in printed
    assert rows[1]["correctness_found"] and not near_only[1]["correctness_found"]


def test_a_block_by_a_rule_that_reads_code_is_a_code_reading_block(tmp_path: Path) -> None:
    repo = _later_fixed_history(tmp_path)
    blocking = [{"rule": "tests/missing-tests", "path": "app.py", "line": 5},
                {"rule": "correctness/swallowed-exception", "path": "app.py", "line": 6}]
    rows = {row["pr"]: row for row in szz_lift(repo, _records(repo, blocking), SzzLimits(10, 60)).rows}
    assert (rows[1]["code_blocked"], rows[1]["on_fixed_line"], rows[2]["code_blocked"]) == (True, 1, False)
    assert rows[1]["on_fixed_code"] == 1


def test_a_finding_on_a_fixed_line_of_a_test_file_is_not_counted_as_shipped_code(tmp_path: Path) -> None:
    made = make_repo(tmp_path, {"keep.py": "X = 0\n"}, None)
    repo = made.path
    git(repo, "checkout", "-q", "main")
    commit(repo, {"test_app.py": "def test_total():\n    assert total([1]) == 1\n"}, "Add a test (#1)")
    commit(repo, {"test_app.py": "def test_total():\n    assert total([2]) == 2\n"}, "fix: the test's input (#2)")
    located = [{"rule": "correctness/r", "severity": "minor", "class": "correctness", "path": "test_app.py", "line": 2}]
    rows = {row["pr"]: row for row in szz_lift(repo, _records(repo, located, located), SzzLimits(10, 60)).rows}
    assert (rows[1]["on_fixed_line"], rows[1]["on_fixed_code"]) == (1, 0)
    # A finding in a test file is not the code-reading rules' catch.
    assert not rows[1]["code_found"] and not rows[1]["correctness_found"]
