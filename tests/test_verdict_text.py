"""Verdicts that explain themselves: the console and summary.md (which the step summary, the
check run and the PR comment are made of) say what the verdict means and what to do next, with
no internal word (route names, seeds) and no link outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from testing.changes import BLOCKING_CHANGE
from testing.cli import CliResult, run_cli
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.repo import commit, git, make_repo

ROOT = Path(__file__).resolve().parents[1]
BASE = {"load.py": "def load():\n    return None\n"}
CLEAN = {"util.py": "def double(value):\n    return value * 2\n", "tests/test_util.py":
         "from util import double\n\n\ndef test_double():\n    assert double(2) == 4\n"}
ROUTE_WORDS = ("route", "closeout", "debugging", "implementation")


def verdict_lines(result: CliResult) -> list[str]:
    lines = result.stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("verdict: "))
    return lines[start:]


def summary(result: CliResult) -> str:
    return (result.output_dir / "summary.md").read_text(encoding="utf-8")


def assert_no_internal_words(text: str) -> None:
    lowered = text.lower()
    for word in ROUTE_WORDS:
        assert not re.search(rf"\b{word}\b", lowered), (word, text)
    assert "seed" not in lowered


def test_changes_requested_says_how_many_must_be_fixed_and_how_to_answer_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    result = run_cli(repo.path, "run")
    assert result.returncode == 1, result.stderr
    lines = verdict_lines(result)
    assert lines[0] == "verdict: changes requested (exit 1): 1 finding must be fixed before merge"
    assert lines[1] == "  next: Fix each blocking finding (marked `blocks`) and push again."
    assert "reviewgate: ignore[<rule id>] <reason>" in lines[2] and "REVIEW-REJECTED:" in lines[2]
    text = summary(result)
    assert text.startswith("## ❌ reviewgate: changes requested\n\n**1 finding must be fixed before merge.** Fix each")
    assert_no_internal_words(result.stdout)
    assert_no_internal_words(text)
    assert result.report()["route"] == "implementation", "report.json keeps the machine value"


def test_approved_says_nothing_blocks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CLEAN)
    result = run_cli(repo.path, "run")
    assert result.returncode == 0, result.stderr
    assert verdict_lines(result)[0] == "verdict: approved (exit 0): nothing in this change blocks merging"
    assert "**Nothing in this change blocks merging.**" in summary(result)
    assert_no_internal_words(result.stdout + summary(result))


def test_report_only_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    result = run_cli(repo.path, "run", "--fail-on", "none")
    assert result.returncode == 0, result.stderr
    lines = verdict_lines(result)
    assert lines[0] == "verdict: approved (exit 0): report-only mode: findings are listed and none blocks"
    assert lines[1].startswith("  next: Read the 1 finding listed; nothing has to be fixed before merge.")


def test_not_reviewed_says_it_is_no_judgement_of_the_code(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "openai", fast_openai("http://127.0.0.1:9"))  # and no key: cannot review
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 3, result.stderr
    lines = verdict_lines(result)
    assert lines[0] == ("verdict: not reviewed (exit 3): the review could not be finished; "
                        "this is not a judgement of your code")
    assert "re-run" in lines[1]
    text = summary(result)
    assert text.startswith("## ⛔ reviewgate: not reviewed\n\n**The review could not be finished; this is not a "
                           "judgement of your code.**")
    assert_no_internal_words(result.stdout + text)


def test_user_facing_documents_mention_no_seed_and_link_nothing_outside_the_repository() -> None:
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                 *sorted((ROOT / "reviewgate" / "schemas").glob("*.json"))]
    for document in documents:
        text = document.read_text(encoding="utf-8")
        assert not re.search(r"\bseed 00\d", text, re.IGNORECASE), document
        for target in re.findall(r"\]\(([^)]+)\)", text):
            if "://" in target or target.startswith("#"):
                continue
            resolved = (document.parent / target.split("#")[0]).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), (document, target)


def test_the_first_push_of_a_new_repository_says_nothing_was_reviewed(tmp_path: Path) -> None:
    """One commit on main, reviewed against main (the default branch): an empty change, never
    "nothing in this change blocks merging" as if it had been read."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    head = commit(repo, BLOCKING_CHANGE, "first")
    result = run_cli(repo, "run")
    assert result.returncode == 0, result.stderr
    assert verdict_lines(result)[0] == ("verdict: approved (exit 0): nothing was reviewed: the change is empty "
                                        "(base and head have the same content)")
    assert f"The head {head[:12]} is already part of the base main" in result.stdout
    assert "nothing was reviewed." in result.stdout
    assert "othing was reviewed: the change is empty" in summary(result)
