"""The pre-push hook reviews what a push sends, whatever is checked out: real `git push` through real
pre-commit to a local bare remote, and git's own pre-push lines on stdin (several refs, a deletion,
a new branch, a first push)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing.cli import clean_environment, run_cli
from testing.repo import GIT_IDENTITY, commit, git

ROOT = Path(__file__).resolve().parents[1]
ZEROS = "0" * 40
CLEAN = {"app.py": "def total(items):\n    return sum(items)\n\n\ndef count(items):\n    return len(items)\n",
         "test_app.py": "from app import count\n\n\ndef test_count():\n    assert count([1]) == 1\n"}
BLOCKING = {"app.py": "def find(cursor, request):\n    cursor.execute(f\"SELECT id FROM users WHERE name = '{request.args['name']}'\")\n    return cursor.fetchone()\n"}
BLOCKING_RULE = "security/sql-injection"


def _published_arguments() -> list[str]:
    """The arguments of the hook this repository publishes, after its `reviewgate` command."""
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    command, *arguments = shlex.split(str(hook["entry"]))
    assert command == "reviewgate"
    return arguments


def _clone_with_remote(root: Path) -> Path:
    """A clone of a bare remote that has `main`; the clone knows origin/HEAD."""
    seed = root / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit(seed, {"app.py": "def total(items):\n    return sum(items)\n",
                  ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}, "base")
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(root / "remote.git")], check=True, timeout=60)
    subprocess.run(["git", "clone", "-q", str(root / "remote.git"), str(root / "clone")], check=True, timeout=60)
    return root / "clone"


def _push_environment(root: Path) -> dict[str, str]:
    # The hook's `python -m reviewgate` imports this checkout; pre-commit keeps its store here.
    return clean_environment({**GIT_IDENTITY, "PYTHONPATH": str(ROOT), "PRE_COMMIT_HOME": str(root / "pre-commit"),
                              "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"})


def _remote_commit(root: Path, branch: str) -> str | None:
    listed = git(root / "remote.git", "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
    return listed or None


@pytest.fixture
def hooked_clone(tmp_path: Path) -> Path:
    """A clone with the published hook installed by pre-commit for pushes, as a `repo: local` hook
    running this checkout (language: system: no environment built from the network)."""
    clone = _clone_with_remote(tmp_path)
    entry = shlex.join([sys.executable, "-m", "reviewgate", *_published_arguments()])
    config = {"repos": [{"repo": "local", "hooks": [{
        "id": "reviewgate", "name": "reviewgate", "entry": entry, "language": "system", "pass_filenames": False,
        "always_run": True, "require_serial": True, "verbose": True, "stages": ["pre-push"]}]}]}
    (clone / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    commit(clone, {}, "pre-commit config")  # on main and the remote, so every checkout has it
    git(clone, "push", "-q", "origin", "main")
    subprocess.run([sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"], cwd=clone,
                   env=_push_environment(tmp_path), capture_output=True, check=True, timeout=120)
    return clone


def _push(clone: Path, *refs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", "origin", *refs], cwd=clone, env=_push_environment(clone.parent),
                          capture_output=True, text=True, timeout=180, check=False)


@pytest.mark.timeout(300)
def test_pushing_a_blocking_branch_from_another_checked_out_branch_is_refused(hooked_clone: Path) -> None:
    git(hooked_clone, "checkout", "-q", "-b", "feature")
    commit(hooked_clone, BLOCKING, "format a query")
    git(hooked_clone, "checkout", "-q", "main")  # the clean main is checked out; feature is pushed

    pushed = _push(hooked_clone, "feature")
    output = pushed.stdout + pushed.stderr
    assert pushed.returncode != 0, output
    assert "pre-push: reviewing refs/heads/feature -> origin refs/heads/feature" in output, output
    assert BLOCKING_RULE in output and "the push is refused" in output, output
    assert _remote_commit(hooked_clone.parent, "feature") is None


@pytest.mark.timeout(300)
def test_pushing_a_clean_branch_from_a_blocking_checked_out_branch_passes(hooked_clone: Path) -> None:
    commit(hooked_clone, CLEAN, "count items")
    clean_main = git(hooked_clone, "rev-parse", "HEAD")
    git(hooked_clone, "checkout", "-q", "-b", "feature")
    commit(hooked_clone, BLOCKING, "format a query")  # checked out, and not pushed

    pushed = _push(hooked_clone, "main")
    output = pushed.stdout + pushed.stderr
    assert pushed.returncode == 0, output
    assert "pre-push: reviewing refs/heads/main -> origin refs/heads/main" in output, output
    assert "origin/main...refs/heads/main" in output and BLOCKING_RULE not in output, output
    assert _remote_commit(hooked_clone.parent, "main") == clean_main


def _hook_lines(env: dict[str, str] | None, repo: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    """`reviewgate run --pre-push` as git's own pre-push hook: the pushed refs on stdin."""
    return subprocess.run([sys.executable, "-m", "reviewgate", *_published_arguments()], cwd=repo, input=stdin,
                          env=clean_environment({"PYTHONPATH": str(ROOT), **(env or {})}), capture_output=True,
                          text=True, timeout=120, check=False)


def test_each_ref_of_one_push_is_reviewed_and_a_deleted_one_is_skipped(tmp_path: Path) -> None:
    clone = _clone_with_remote(tmp_path)
    main_before = git(clone, "rev-parse", "HEAD")
    main_after = commit(clone, CLEAN, "count items")
    git(clone, "checkout", "-q", "-b", "feature")
    feature = commit(clone, BLOCKING, "format a query")
    git(clone, "checkout", "-q", "main")
    lines = (f"refs/heads/main {main_after} refs/heads/main {main_before}\n"
             f"refs/heads/feature {feature} refs/heads/feature {ZEROS}\n"
             f"(delete) {ZEROS} refs/heads/old {main_before}\n")

    completed = _hook_lines(None, clone, lines)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "reviewing refs/heads/main -> origin refs/heads/main: the commits it adds to refs/heads/main" in output
    assert "refs/heads/main -> origin refs/heads/main: exit 0" in output, output
    assert ("reviewing refs/heads/feature -> origin refs/heads/feature: a new branch on origin: against the default "
            "branch origin/main") in output, output
    assert "refs/heads/feature -> origin refs/heads/feature: exit 1 (the push is refused)" in output, output
    assert "(delete) -> origin refs/heads/old deletes the remote ref: nothing to review" in output, output


def test_a_push_to_a_branch_the_remote_has_reviews_only_the_commits_it_adds(tmp_path: Path) -> None:
    """As pre-commit passes an update: the blocking commit is on the remote already, the pushed one is clean."""
    clone = _clone_with_remote(tmp_path)
    git(clone, "checkout", "-q", "-b", "feature")
    commit(clone, BLOCKING, "format a query")
    git(clone, "push", "-q", "--no-verify", "origin", "feature")
    remote_tip = git(clone, "rev-parse", "HEAD")
    pushed = commit(clone, {"notes.md": "# Notes\n"}, "notes")
    git(clone, "checkout", "-q", "main")
    env = {"PRE_COMMIT_FROM_REF": remote_tip, "PRE_COMMIT_TO_REF": pushed, "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/feature",
           "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/feature", "PRE_COMMIT_REMOTE_NAME": "origin",
           "PRE_COMMIT_REMOTE_URL": str(tmp_path / "remote.git")}

    completed = _hook_lines(env, clone, "")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "origin/feature...refs/heads/feature" in output and BLOCKING_RULE not in output, output


def test_the_first_push_of_a_new_repository_says_nothing_was_reviewed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, BLOCKING, "first")
    # pre-commit's variables for a push of a root commit ("all files"): no from/to refs.
    env = {"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main",
           "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_URL": "/nowhere.git"}

    completed = _hook_lines(env, repo, "")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert ("pre-push: refs/heads/main -> origin refs/heads/main is new on origin and it is the default branch main "
            "itself, so there is no other branch to compare it with: nothing was reviewed") in completed.stdout
    assert first


def test_the_first_push_of_a_repositorys_only_branch_that_is_no_default_says_nothing_was_reviewed(
        tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "work")
    commit(repo, BLOCKING, "first")
    env = {"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/work", "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/work",
           "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_REMOTE_URL": "/nowhere.git"}

    completed = _hook_lines(env, repo, "")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert ("refs/heads/work -> origin refs/heads/work is new on origin and there is no default branch to compare it "
            "with: nothing was reviewed") in completed.stdout, completed.stdout


def test_a_new_branch_in_a_single_branch_clone_is_reviewed_against_the_default_branch_fetched_then(
        tmp_path: Path) -> None:
    """The clone has only `feature` (no origin/main, no origin/HEAD): the default branch origin names is
    fetched by the review, never skipped as if there were nothing to compare with."""
    first = _clone_with_remote(tmp_path)
    git(first, "push", "-q", "origin", "main:refs/heads/release")
    clone = tmp_path / "single"
    subprocess.run(["git", "clone", "-q", "--single-branch", "--branch", "release", str(tmp_path / "remote.git"),
                    str(clone)], check=True, timeout=60)
    assert git(clone, "for-each-ref", "--format=%(refname)", "refs/remotes") == "refs/remotes/origin/release"
    git(clone, "checkout", "-q", "-b", "feature")
    feature = commit(clone, BLOCKING, "format a query")

    completed = _hook_lines(None, clone, f"refs/heads/feature {feature} refs/heads/feature {ZEROS}\n")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "a new branch on origin: against the default branch main" in output, output
    assert BLOCKING_RULE in output


def test_pre_push_refuses_the_flags_that_name_another_target(tmp_path: Path) -> None:
    clone = _clone_with_remote(tmp_path)
    completed = run_cli(clone, "run", "--pre-push", "--base", "main")
    assert completed.returncode == 2
    assert "--pre-push: not with --base; the push names what is reviewed" in completed.stderr
    bad = _hook_lines(None, clone, "refs/heads/main\n")
    assert bad.returncode == 2 and "is not a pre-push line" in bad.stderr, bad.stderr


def test_a_run_of_a_head_that_is_not_checked_out_reads_no_working_tree(tmp_path: Path) -> None:
    """What the hook relies on: `run --head SHA` reviews that commit, with another branch checked out and
    a dirty working tree that says otherwise."""
    clone = _clone_with_remote(tmp_path)
    git(clone, "checkout", "-q", "-b", "feature")
    feature = commit(clone, BLOCKING, "format a query")
    git(clone, "checkout", "-q", "main")
    (clone / "app.py").write_text(CLEAN["app.py"], encoding="utf-8")

    completed = run_cli(clone, "run", "--reviewer", "builtin", "--no-verify", "--head", feature)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert BLOCKING_RULE in completed.stdout
    assert os.path.exists(clone / ".reviewgate" / "report.json")


def test_an_update_is_judged_by_the_default_branchs_policy_not_the_one_the_branch_pushed(tmp_path: Path) -> None:
    """The branch pushed a report-only config earlier (`git push --no-verify`); its next push, of a blocking
    commit, is reviewed against the branch's remote tip but judged by main's policy."""
    clone = _clone_with_remote(tmp_path)
    commit(clone, {".reviewgate.toml": "[review]\nmax_rounds = 3\n"}, "main's policy")
    git(clone, "push", "-q", "--no-verify", "origin", "main")
    git(clone, "checkout", "-q", "-b", "feature")
    commit(clone, {".reviewgate.toml": '[review]\nfail_on = ["none"]\n'}, "report only, please")
    git(clone, "push", "-q", "--no-verify", "origin", "feature")
    remote_tip = git(clone, "rev-parse", "HEAD")
    pushed = commit(clone, BLOCKING, "format a query")

    completed = _hook_lines(None, clone, f"refs/heads/feature {pushed} refs/heads/feature {remote_tip}\n")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert ("the commits it adds to refs/heads/feature; the policy is the default branch origin/main's"
            in output), output
    assert "origin/feature...refs/heads/feature" in output and BLOCKING_RULE in output
