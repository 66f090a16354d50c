"""The whole-tree rule scan reviews a project's every file as added, through the gate, and writes
one line per finding of the bug, security and secrets rules with the source line it points at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.rule_scan import main
from testing.repo import git, make_repo

EVAL = "def calculate(expression):\n    return eval(expression)\n"
SWALLOWED = "import json\n\n\ndef load(text):\n    try:\n        return json.loads(text)\n    except Exception:\n        return {}\n"


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_scans_a_clone_head_as_if_every_file_were_added(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The eval sits in the base commit: only a scan of the whole tree, not of the last change, sees it.
    made = make_repo(tmp_path, {"app/calc.py": EVAL, "app/cache.py": SWALLOWED, "vendor/lib/calc.py": EVAL},
                     {"README.md": "calc\n"})
    git(made.path, "checkout", "-q", "main")
    git(made.path, "merge", "-q", "feature")
    head = git(made.path, "rev-parse", "HEAD")
    out = tmp_path / "findings.jsonl"
    assert main([str(made.path), "--out", str(out)]) == 0
    findings = _lines(out)
    assert [(item["rule"], item["file"], item["line"], item["source"]) for item in findings] == [
        ("security/eval", "app/calc.py", 2, "return eval(expression)")]
    assert findings[0]["severity"] and findings[0]["message"] and findings[0]["project"] == made.path.name
    assert "security/eval 1" in capsys.readouterr().out
    assert git(made.path, "rev-parse", "HEAD") == head and git(made.path, "branch", "--list", "scan-*") == ""
    # --every-rule keeps the rules that are neither bug nor security rules too.
    assert main([str(made.path), "--out", str(out), "--every-rule"]) == 0
    assert {"security/eval", "correctness/swallowed-exception", "tests/missing-tests"} <= {item["rule"] for item in _lines(out)}


def test_scans_a_plain_directory_such_as_an_unpacked_sdist(tmp_path: Path) -> None:
    project = tmp_path / "calc-1.0"
    (project / "calc").mkdir(parents=True)
    (project / "calc" / "core.py").write_text(EVAL, encoding="utf-8")
    out = tmp_path / "findings.jsonl"
    assert main([str(project), "--out", str(out)]) == 0
    assert [(item["rule"], item["file"], item["line"]) for item in _lines(out)] == [("security/eval", "calc/core.py", 2)]
    assert not (project / ".git").exists()


def test_a_project_over_the_file_bound_is_skipped_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "big"
    project.mkdir()
    for index in range(3):
        (project / f"m{index}.py").write_text(EVAL, encoding="utf-8")
    out = tmp_path / "findings.jsonl"
    assert main([str(project), "--out", str(out), "--max-files", "2"]) == 0
    assert "big: skipped: 3 files, more than --max-files 2" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8") == ""


def test_a_project_that_is_not_a_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "missing")])
    assert exit_info.value.code == 2
    assert f"{tmp_path / 'missing'}: not a directory" in capsys.readouterr().err


def test_manifests_in_base_let_the_runtime_rule_read_the_declared_floor(tmp_path: Path) -> None:
    # The runtime rule reads `engines.node` on the target side: with an empty base it never sees it.
    project = tmp_path / "client-1.0"
    (project / "lib").mkdir(parents=True)
    (project / "package.json").write_text('{"name": "client", "engines": {"node": ">=16"}}\n', encoding="utf-8")
    (project / "lib" / "load.js").write_text(
        "export async function load(url) {\n  const response = await fetch(url);\n  return response.json();\n}\n",
        encoding="utf-8")
    out = tmp_path / "findings.jsonl"
    assert main([str(project), "--out", str(out)]) == 0
    assert [item["rule"] for item in _lines(out)] == []
    assert main([str(project), "--out", str(out), "--manifests-in-base"]) == 0
    assert [(item["rule"], item["file"], item["line"]) for item in _lines(out)] == [
        ("correctness/api-newer-than-runtime", "lib/load.js", 2)]
