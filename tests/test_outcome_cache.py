"""The builtin reviewer's outcome reused for the same change (outcome_cache.py): the same findings
with no lens loaded, reviewed again when the config or the code changes, never read from an entry
this gate did not seal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import reviewgate
from reviewgate.outcome_cache import OUTCOMES_DIRECTORY, code_identity
from testing.cli import clean_environment
from testing.hostile_parses import LINES, SLOW_FILES
from testing.repo import make_repo

# The gate's `main` in a fresh interpreter, then its report's findings and reviewer outcome and
# whether the builtin review's module (which loads every lens) was.
_RUN = """
import io, json, sys
from reviewgate.cli import main
code = main(["run", "--reviewer", "builtin", "--base", "main", "--no-verify", *sys.argv[1:]], stdout=io.StringIO())
report = json.load(open(".reviewgate/report.json", encoding="utf-8"))
print(json.dumps({"code": code, "findings": report["findings"], "outcome": report["reviewers"][0],
                  "lenses_loaded": "reviewgate.reviewers.builtin.lens_review" in sys.modules}))
"""
EVAL = "def compute(expression):\n    return eval(expression)\n"


def _run(repo: Path, *arguments: str) -> dict[str, Any]:
    completed = subprocess.run([sys.executable, "-c", _RUN, *arguments], cwd=repo, env=clean_environment(),
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def _rules(findings: list[dict[str, Any]]) -> list[str]:
    return [finding["rule"] for finding in findings]


def test_the_same_change_again_reuses_the_outcome_without_loading_a_lens(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/calc.py": "\n"}, {"app/calc.py": EVAL}).path
    first, second = _run(repo), _run(repo)
    assert "security/eval" in _rules(first["findings"])
    assert first["lenses_loaded"] and not first["outcome"]["cached"]
    assert second["findings"] == first["findings"] and second["code"] == first["code"]
    assert second["outcome"]["cached"] and not second["lenses_loaded"]


def test_a_changed_config_is_reviewed_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/calc.py": "\n"}, {"app/calc.py": EVAL}).path
    assert "security/eval" in _rules(_run(repo)["findings"])
    config = tmp_path / "lenses.toml"
    config.write_text('[lenses]\ndisable = ["security/eval"]\n', encoding="utf-8")
    again = _run(repo, "--config", str(config))
    assert "security/eval" not in _rules(again["findings"])
    assert not again["outcome"]["cached"]


@pytest.mark.timeout(120)
def test_an_outcome_with_a_parse_given_up_is_not_kept(tmp_path: Path) -> None:
    path, line = SLOW_FILES[0]  # its parse runs out of time: another run's may not
    repo = make_repo(tmp_path, {"README.md": "x\n"}, {path: line * LINES}).path
    first, second = _run(repo), _run(repo)
    assert first["outcome"]["notes"] == [f"{path}: not parsed (its syntax tree went over the parse budget), read by "
                                         "the line lenses only"]
    assert second["outcome"]["notes"] == first["outcome"]["notes"] and not second["outcome"]["cached"]
    assert not list((repo / ".reviewgate-cache" / OUTCOMES_DIRECTORY).glob("*.json"))


def test_an_entry_this_gate_did_not_seal_is_reviewed_again_and_replaced(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/calc.py": "\n"}, {"app/calc.py": EVAL}).path
    first = _run(repo)
    [entry] = (repo / ".reviewgate-cache" / OUTCOMES_DIRECTORY).glob("*.json")
    stored = entry.read_bytes()
    # What a branch could plant under the name: the outcome without its finding, an old tag kept.
    data, tag = stored[:-65], stored[-65:]
    planted = json.loads(data)
    planted["findings"], planted["finding_count"] = [], 0
    entry.write_bytes(json.dumps(planted, sort_keys=True).encode() + tag)
    second = _run(repo)
    assert second["findings"] == first["findings"] and not second["outcome"]["cached"]
    replaced = json.loads(entry.read_bytes()[:-65])
    assert _rules(replaced["findings"]) == _rules(first["findings"]), "replaced by the outcome the gate sealed"


def test_the_code_identity_changes_with_a_file_of_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "reviewgate"
    (package / "reviewers" / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    lens = package / "reviewers" / "lens.py"
    lens.write_text("RULE = 1\n", encoding="utf-8")
    monkeypatch.setattr(reviewgate, "__file__", str(package / "__init__.py"))
    before = code_identity()
    (package / "reviewers" / "__pycache__" / "lens.cpython.pyc").write_bytes(b"bytecode")
    assert code_identity() == before, "bytecode is not code that changed"
    lens.write_text("RULE = 2\n", encoding="utf-8")  # same size: told by its modification time
    os.utime(lens, ns=(lens.stat().st_atime_ns, lens.stat().st_mtime_ns + 1_000_000))
    assert code_identity() != before


def test_only_the_newest_outcomes_are_kept_and_nothing_through_a_link(tmp_path: Path) -> None:
    from reviewgate.outcome_cache import KEPT_OUTCOMES

    repo = make_repo(tmp_path, {"app/calc.py": "\n"}, {"app/calc.py": EVAL}).path
    cache = tmp_path / "cache"
    outcomes = cache / OUTCOMES_DIRECTORY
    outcomes.mkdir(parents=True)
    # Older entries than the run's own (as a restored cache holds them), one more than are kept,
    # a link to a file outside the cache, and a file that is not an outcome.
    for number in range(KEPT_OUTCOMES):
        old = outcomes / f"{number:04d}.json"
        old.write_text("{}\n")
        os.utime(old, ns=(1_000_000_000 * (number + 1),) * 2)
    outside = tmp_path / "outside.json"
    outside.write_text("mine\n")
    (outcomes / "zz-link.json").symlink_to(outside)
    (outcomes / "notes.txt").write_text("kept\n")
    first = _run(repo, "--cache-dir", str(cache))
    names = sorted(path.name for path in outcomes.iterdir())
    plain = [name for name in names if name.endswith(".json") and not (outcomes / name).is_symlink()]
    assert len(plain) == KEPT_OUTCOMES
    assert "0000.json" not in names and f"{KEPT_OUTCOMES - 1:04d}.json" in names  # the oldest went
    assert "zz-link.json" in names and outside.read_text() == "mine\n" and "notes.txt" in names
    # The run's own outcome is among those kept: the same change again reuses it.
    second = _run(repo, "--cache-dir", str(cache))
    assert second["outcome"]["cached"] and second["findings"] == first["findings"]
