"""benchmarks/pr_replay.py end to end: a merged PR of three commits in a real repository,
replayed as three pushes against the stand-in model server, with and without the chunk cache."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from testing.cli import clean_environment
from testing.repo import commit, git, make_repo

REPO_ROOT = Path(__file__).resolve().parent.parent


def _module(name: str, functions: int) -> str:
    return "".join(f"def {name}_{index}(value):\n    return value * {index}\n\n\n" for index in range(functions))


def test_a_replayed_pr_prints_each_push_and_what_the_cache_saved(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"api/orders.py": _module("orders", 40),
                                                          "web/pages.py": _module("pages", 40)})
    commit(repo.path, {"web/pages.py": _module("pages", 41)}, "second push")
    commit(repo.path, {"web/pages.py": _module("pages", 42)}, "third push")
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "--no-ff", "-m", "Merge the feature (#7)", "feature")
    merge = git(repo.path, "rev-parse", "HEAD")
    completed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "pr_replay.py"), "--repo", str(repo.path), "--merge", merge],
        cwd=tmp_path, env=clean_environment(), capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout
    print(output)
    assert f"PR {merge[:10]} Merge the feature (#7): 3 push(es)" in output
    rows = [line.split() for line in output.splitlines() if re.match(r"  [0-9a-f]{10} ", line)]
    # push, lines, requests, characters, tokens per line, and the same without the cache, saved
    assert [row[2] for row in rows] == ["1", "1", "1"]  # one request a push: both files, then web/'s new function
    assert [row[5] for row in rows] == ["1", "1", "1"]  # without it: every chunk on every push, in one request
    assert [row[1] for row in rows] == ["320", "4", "4"]  # changed lines: from the merge base, then per push
    total = next(line for line in output.splitlines() if line.startswith("  PR total")).split()
    assert total[2:4] == ["328", "3"] and total[6] == "3"
    assert "all PRs: 328 changed lines; with the cache 3 requests" in output
    assert re.search(r"the cache saved \d+% of the characters and 0% of the requests", output)


def test_a_commit_that_is_not_a_merge_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"a.py": "A = 1\n"})
    completed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "pr_replay.py"), "--repo", str(repo.path),
         "--merge", repo.head_sha], cwd=tmp_path, env=clean_environment(), capture_output=True, text=True,
        timeout=60, check=False)
    assert completed.returncode == 2
    assert f"--merge {repo.head_sha}: not a merge commit of --repo" in completed.stderr
