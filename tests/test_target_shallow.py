"""Freezing in real CI conditions: depth-1 clones, event payloads naming base and head,
new branches, force-pushes, GitLab merged results, commits that cannot be fetched."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.ci import detect
from reviewgate.errors import BlockedError
from reviewgate.freeze.freeze import freeze
from testing.ci import github_env, load_payload, shallow_clone
from testing.cli import run_cli
from testing.repo import commit, git, make_repo

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    """main: base, then two more commits after the branch point; feature: three commits
    touching app code, package-lock.json and a binary image."""
    root = tmp_path_factory.mktemp("upstream")
    built = make_repo(root, {"src/app.py": "def run():\n    return 1\n", "README.md": "hello\n"})
    repo = built.path
    commit(repo, {"src/app.py": "def run():\n    return 2\n"}, "app change")
    commit(repo, {"package-lock.json": '{"lockfileVersion": 3}\n'}, "lock")
    feature = commit(repo, {"logo.png": PNG, "src/extra.py": "VALUE = 1\n"}, "binary and extra")
    git(repo, "checkout", "-q", "main")
    commit(repo, {"README.md": "hello, main moved on\n"}, "main 2")
    main = commit(repo, {"docs/guide.md": "guide\n"}, "main 3")
    return {"path": repo, "base": built.base_sha, "feature": feature, "main": main}


def full_clone_hash(upstream: dict[str, str | Path]) -> str:
    return freeze(Path(upstream["path"]), base="main", head="feature").patch_sha256


def test_done_when_depth_one_pull_request_run(upstream: dict[str, str | Path], tmp_path: Path) -> None:
    """The issue's acceptance: a depth-1 clone, a pull_request event naming base and head:
    the run reviews exactly the branch's change with the full clone's patch hash, excludes
    package-lock.json with its reason and lists the binary file as not reviewed."""
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "main")
    payload = load_payload(
        "github_pull_request.json", base=str(upstream["main"]), head=str(upstream["feature"])
    )
    env = github_env(tmp_path, "pull_request", payload, GITHUB_SHA=str(upstream["main"]))
    result = run_cli(clone, "run", "--output-dir", "out", env=env)
    assert result.returncode == 0, result.stderr
    target = result.report()["target"]
    assert target["head_sha"] == upstream["feature"]
    assert target["base_sha"] == upstream["main"]
    assert target["merge_base"] == upstream["base"]
    assert target["patch_sha256"] == full_clone_hash(upstream)
    assert [item["path"] for item in target["files"]] == ["src/app.py", "src/extra.py"]
    excluded = {item["path"]: item["reason"] for item in target["excluded"]}
    assert excluded["package-lock.json"] == "lock file"
    assert excluded["logo.png"].startswith("binary file")
    assert target["shallow_fetches"], "a depth-1 clone needs fetches"
    assert "pull_request.head.sha" in target["head_source"]


def test_push_of_a_new_branch_takes_the_merge_base_with_the_default_branch(
    upstream: dict[str, str | Path], tmp_path: Path
) -> None:
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "feature")
    payload = load_payload("github_push_new_branch.json", head=str(upstream["feature"]))
    context = detect(github_env(tmp_path, "push", payload, GITHUB_SHA=str(upstream["feature"])))
    target = freeze(clone, base=None, ci=context)
    assert target.merge_base == upstream["base"]
    assert target.base_ref == "origin/main"
    assert "repository.default_branch" in target.base_source
    assert target.patch_sha256 == full_clone_hash(upstream)


def test_force_push_ignores_the_rewritten_before(upstream: dict[str, str | Path], tmp_path: Path) -> None:
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "feature")
    payload = load_payload("github_push_forced.json", base="a" * 40, head=str(upstream["feature"]))
    context = detect(github_env(tmp_path, "push", payload, GITHUB_SHA=str(upstream["feature"])))
    target = freeze(clone, base=None, ci=context)
    assert target.merge_base == upstream["base"]
    assert target.base_ref == "origin/main"


def test_gitlab_merged_result_reviews_the_source_branch(
    upstream: dict[str, str | Path], tmp_path: Path
) -> None:
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "main", depth=3)
    variables = load_payload(
        "gitlab_merged_result.json",
        base=str(upstream["base"]),
        head=str(upstream["feature"]),
        merge=str(upstream["main"]),
    )
    target = freeze(clone, base=None, ci=detect(variables))
    assert target.head_sha == upstream["feature"]
    assert target.patch_sha256 == full_clone_hash(upstream)


def test_explicit_base_wins_over_the_event(upstream: dict[str, str | Path], tmp_path: Path) -> None:
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "main")
    payload = load_payload(
        "github_pull_request.json", base=str(upstream["main"]), head=str(upstream["feature"])
    )
    context = detect(github_env(tmp_path, "pull_request", payload))
    target = freeze(clone, base=str(upstream["base"]), ci=context)
    assert (target.base_source, target.base_sha) == ("--base", upstream["base"])


def test_a_commit_that_cannot_be_fetched_blocks_naming_it_and_the_checkout_option(
    upstream: dict[str, str | Path], tmp_path: Path
) -> None:
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "main")
    missing = "b" * 40
    payload = load_payload("github_pull_request.json", base=str(upstream["main"]), head=missing)
    result = run_cli(clone, "freeze", env=github_env(tmp_path, "pull_request", payload))
    assert result.returncode == 3
    assert missing in result.stderr and "fetch-depth: 0" in result.stderr and "GIT_DEPTH" not in result.stderr
    assert "Traceback" not in result.stderr
    with pytest.raises(BlockedError):
        freeze(clone, base=None, ci=detect(github_env(tmp_path, "pull_request", payload)))


def test_freeze_prints_what_was_resolved_and_why(upstream: dict[str, str | Path], tmp_path: Path) -> None:
    clone = shallow_clone(Path(upstream["path"]), tmp_path / "clone", "main")
    payload = load_payload(
        "github_pull_request.json", base=str(upstream["main"]), head=str(upstream["feature"])
    )
    result = run_cli(clone, "freeze", env=github_env(tmp_path, "pull_request", payload))
    assert result.returncode == 0, result.stderr
    assert "(from pull_request event: pull_request.base.sha)" in result.stderr
    assert "fetched: git fetch" in result.stderr


@pytest.fixture(scope="module")
def long_branch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    """A feature branch 80 commits past its branch point, more than the first deepening step."""
    root = tmp_path_factory.mktemp("long")
    built = make_repo(root, {"src/app.py": "def run():\n    return 1\n"}, {"src/app.py": "def run():\n    return 2\n"})
    repo = built.path
    for index in range(79):
        git(repo, "commit", "-q", "--allow-empty", "-m", f"step {index}")
    feature = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    main = commit(repo, {"README.md": "main moved on\n"}, "main 2")
    return {"path": repo, "base": built.base_sha, "feature": feature, "main": main}


def test_the_merge_base_is_found_by_deepening_in_steps(long_branch: dict[str, str | Path], tmp_path: Path) -> None:
    clone = shallow_clone(Path(long_branch["path"]), tmp_path / "clone", "main")
    payload = load_payload("github_pull_request.json", base=str(long_branch["main"]), head=str(long_branch["feature"]))
    env = github_env(tmp_path, "pull_request", payload, GITHUB_SHA=str(long_branch["main"]))
    result = run_cli(clone, "run", "--output-dir", "out", env=env)
    assert result.returncode == 0, result.stderr
    target = result.report()["target"]
    assert target["merge_base"] == long_branch["base"]
    assert target["patch_sha256"] == freeze(Path(long_branch["path"]), base="main", head="feature").patch_sha256
    deepening = [fetch for fetch in target["shallow_fetches"] if "--depth=" in fetch and "--depth=1 " not in fetch]
    assert [fetch.split("--depth=")[1].split()[0] for fetch in deepening] == ["50", "200"]
    assert not any("--unshallow" in fetch for fetch in target["shallow_fetches"])


def test_unshallow_is_the_last_resort(long_branch: dict[str, str | Path], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewgate.freeze import shallow

    clone = shallow_clone(Path(long_branch["path"]), tmp_path / "clone", "main")
    log = shallow.FetchLog()
    shallow.ensure_commit(clone, str(long_branch["feature"]), "test", log)
    monkeypatch.setattr(shallow, "DEEPEN_STEPS", (2,))  # too shallow to reach the branch point
    found = shallow.find_merge_base(clone, str(long_branch["main"]), str(long_branch["feature"]), "main and feature", log)
    assert found == long_branch["base"]
    assert "--unshallow" in log.fetches[-1] and "(failed)" not in log.fetches[-1]
    assert not shallow.is_shallow(clone)
