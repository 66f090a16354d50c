"""The gate's own directories (output, cache) live in the repository under review, whatever the
working directory; each ignores itself; and they are never reviewed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testing.cli import clean_environment, run_cli
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Reply, review_document
from testing.repo import git, make_repo

BASE = {"app.py": "x = 1\n"}
CHANGE = {"app.py": "x = 2\n"}


def run_from(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reviewgate", *args], cwd=cwd, env=clean_environment(env),
                          capture_output=True, text=True, timeout=120, check=False)


def reviewed_paths(report_file: Path) -> list[str]:
    report = json.loads(report_file.read_text(encoding="utf-8"))
    return [item["path"] for item in report["target"]["files"]] + [
        item["path"] for item in report["target"]["excluded"]]


def test_repo_from_another_directory_writes_into_that_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_from(elsewhere, "run", "--repo", "../repo")
    assert result.returncode == 0, result.stderr
    assert (repo.path / ".reviewgate" / "report.json").is_file()
    assert not (elsewhere / ".reviewgate").exists()
    assert "outputs: " + str(repo.path / ".reviewgate") in result.stdout


def test_a_relative_output_dir_is_the_repositorys_and_an_absolute_one_stays(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    relative = run_from(tmp_path, "run", "--repo", "repo", "--output-dir", "reports/gate")
    assert relative.returncode == 0, relative.stderr
    assert (repo.path / "reports" / "gate" / "summary.md").is_file()
    absolute = tmp_path / "artifacts"
    given = run_from(tmp_path, "run", "--repo", "repo", "--output-dir", str(absolute))
    assert given.returncode == 0, given.stderr
    assert (absolute / "summary.md").is_file() and (absolute / ".gitignore").is_file()
    assert not (tmp_path / "reports").exists()


def test_the_output_directory_ignores_itself_and_git_status_stays_clean(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run")
    assert result.returncode == 0, result.stderr
    assert "*" in (repo.path / ".reviewgate" / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert git(repo.path, "status", "--porcelain") == ""
    # The reproduction the process lens reads there stays the user's to commit.
    (repo.path / ".reviewgate" / "reproduction.md").write_text("inputs, expected, observed\n", encoding="utf-8")
    assert git(repo.path, "status", "--porcelain", "--untracked-files=all") == "?? .reviewgate/reproduction.md"


def test_a_directory_that_already_exists_gets_no_gitignore(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    mine = repo.path / "build"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's\n", encoding="utf-8")
    result = run_cli(repo.path, "run", "--output-dir", "build")
    assert result.returncode == 0, result.stderr
    assert not (mine / ".gitignore").exists(), "the user's directory is not ours to hide"


def test_include_dirty_never_reviews_the_gates_own_outputs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    assert run_cli(repo.path, "run").returncode == 0
    # As an older gate left it, or a directory the user named: no .gitignore to hide it.
    (repo.path / ".reviewgate" / ".gitignore").unlink()
    (repo.path / "new.py").write_text("y = 3\n", encoding="utf-8")
    first = run_cli(repo.path, "run", "--include-dirty")
    assert first.returncode == 0, first.stderr
    assert reviewed_paths(first.output_dir / "report.json") == ["app.py", "new.py"]
    second = run_cli(repo.path, "run", "--include-dirty")
    assert reviewed_paths(second.output_dir / "report.json") == ["app.py", "new.py"]
    # The outputs of the first run are not part of the change: the dirty identity is the same.
    assert first.report()["target"]["dirty_sha256"] == second.report()["target"]["dirty_sha256"]


def test_committed_outputs_are_listed_as_never_reviewed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, {**CHANGE, ".reviewgate/summary.md": "## old\n",
                                      ".reviewgate/reproduction.md": "steps\n"})
    result = run_cli(repo.path, "run")
    assert result.returncode == 0, result.stderr
    assert [item["path"] for item in result.report()["target"]["files"]] == [".reviewgate/reproduction.md", "app.py"]
    excluded = result.report()["target"]["excluded"]
    assert [item["path"] for item in excluded] == [".reviewgate/summary.md"]
    assert "never reviewed" in excluded[0]["reason"]


def test_the_cache_directory_is_the_repositorys_and_ignores_itself(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with ModelServer([Reply(review=review_document([], "approve"))]) as server:
        write_config(repo.path, "openai", fast_openai(server.url), cache=True)
        result = run_from(elsewhere, "run", "--repo", str(repo.path), "--base", "main",
                          env={"OPENAI_API_KEY": "sk-test-key-not-real"})
    assert result.returncode == 0, result.stderr
    cache = repo.path / ".reviewgate-cache"
    assert list((cache / "openai").rglob("*.json")) and (cache / ".gitignore").is_file()
    assert not (elsewhere / ".reviewgate-cache").exists()
    assert git(repo.path, "status", "--porcelain") == ""
