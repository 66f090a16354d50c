"""A branch of text on which tree-sitter's runtime spends minutes in a step that makes no progress
report (near the end of the file, holding the GIL) ends its review: the file's parse is given up at
its budget, the run names the file, and the line lenses still read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.hostile_parses import LINES, SLOW_FILES
from testing.repo import make_repo

# A made-up token in GitHub's format, assembled so no scanner takes this file for a leak: the
# secrets lens reads lines, not trees, so it still finds it in a file given up.
TOKEN = "gh" + "p_" + "givenUpParse" * 3 + "Tk0"

@pytest.mark.timeout(90)
@pytest.mark.parametrize(("path", "line"), SLOW_FILES)
def test_a_branch_of_such_text_ends_its_review_and_names_the_file(tmp_path: Path, path: str, line: str) -> None:
    repo = make_repo(tmp_path, {"README.md": "x\n", ".gitignore": ".reviewgate/\n"},
                     {path: f"// token = '{TOKEN}'\n" + line * LINES})
    result = run_cli(repo.path, "run", "--base", "main", "--reviewer", "builtin", "--no-verify", timeout=60)
    assert result.returncode == 1, result.stderr[-2000:]  # the key blocks: not blocked, not approved
    assert f"reviewgate: warning: {path}: not parsed, its " in result.stderr
    report = result.report()
    notes = next(outcome["notes"] for outcome in report["reviewers"] if outcome["reviewer"] == "builtin")
    assert notes == [f"{path}: not parsed (its syntax tree went over the parse budget), read by the line lenses only"]
    assert [(item["path"], item["line"]) for item in report["findings"] if item["rule"] == "security/committed-secret"] \
        == [(path, 1)]
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert f"{path}: not parsed" in summary
