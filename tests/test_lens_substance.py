"""Findings only on lines a change alters in substance: a reformat is not code the change wrote."""

from __future__ import annotations

from pathlib import Path

from reviewgate.reviewers.builtin import BuiltinReviewer
from testing.lenses import review_request
from testing.repo import make_repo

_TWO_SPACES = '''import subprocess


def load(path):
  try:
    return open(path).read()
  except Exception:
    pass


def run(name):
  return subprocess.run("ls " + name, shell=True)
'''
_FOUR_SPACES = _TWO_SPACES.replace("\n  ", "\n    ").replace("\n    return open", "\n        return open").replace(
    "\n    pass", "\n        pass").replace("( \"ls", "(\"ls")


def _review(root: Path, base: dict[str, str], branch: dict[str, str]) -> tuple[list[str], tuple[str, ...]]:
    repo = make_repo(root, base, branch)
    outcome = BuiltinReviewer().review(review_request(repo.path))
    return sorted(item.rule for item in outcome.findings), outcome.notes


def test_a_whitespace_only_reformat_gets_no_findings_on_code_that_was_there(tmp_path: Path) -> None:
    assert _FOUR_SPACES != _TWO_SPACES
    rules, _ = _review(tmp_path / "new", {"README.md": "x\n"}, {"app/io.py": _FOUR_SPACES})
    assert "correctness/swallowed-exception" in rules  # the same code, written by the change, is reported
    rules, notes = _review(tmp_path / "reformat", {"app/io.py": _TWO_SPACES}, {"app/io.py": _FOUR_SPACES})
    assert rules == []
    assert any(note.startswith("app/io.py: ") and "only re-formats" in note for note in notes)


def test_a_line_changed_in_substance_inside_a_reformat_is_still_reviewed(tmp_path: Path) -> None:
    changed = _FOUR_SPACES.replace("except Exception:", "except BaseException:")
    rules, _ = _review(tmp_path, {"app/io.py": _TWO_SPACES}, {"app/io.py": changed})
    assert "correctness/swallowed-exception" in rules
