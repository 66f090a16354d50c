"""Imported SARIF: filtered to the change, mapped by the level table, suppressions honoured,
the tool's name as source, and a malformed file is exit 2 naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testing.cli import run_cli
from testing.repo import make_repo, write_base_config
from testing.sarif import sarif_log, sarif_result, write_sarif

# ../shared/conformance from the repository root; a worktree under wt/ has it one level further up.
_ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = next(
    (
        candidate
        for candidate in (_ROOT.parent / "shared/conformance", _ROOT.parent.parent / "shared/conformance")
        if candidate.is_dir()
    ),
    _ROOT.parent / "shared/conformance",
)

BASE = {"app/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"}
# The branch adds lines 7-8; lines 1-6 are unchanged (line 4-6 are in the hunk's context).
BRANCH = {
    "app/calc.py": BASE["app/calc.py"] + "\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": "from app.calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}


def _results() -> list[dict[str, Any]]:
    return [
        sarif_result("E999", "on an added line", "app/calc.py", 10, level="error"),
        sarif_result("W001", "on a context line", "app/calc.py", 6, level="warning"),
        sarif_result("N001", "on an untouched line", "app/calc.py", 1, level="note"),
        sarif_result("X001", "in a file the change does not touch", "lib/other.py", 3, level="error"),
    ]


def _validate(document: dict[str, Any]) -> None:
    schema_path = CONFORMANCE / "sarif-schema-2.1.0.json"
    if not schema_path.is_file():
        pytest.skip(f"conformance schemas not found at {CONFORMANCE} (outside the project checkout)")
    import jsonschema

    jsonschema.validate(document, json.loads(schema_path.read_text(encoding="utf-8")))


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, BASE, BRANCH).path


def _imported(report: dict[str, Any], tool: str) -> list[tuple[str, str, int | None]]:
    return sorted(
        (item["rule"], item["path"], item["line"]) for item in report["findings"] if item["source"] == tool
    )


def test_added_mode_keeps_only_results_on_added_lines_as_annotations(repo: Path) -> None:
    document = sarif_log("ruff", _results())
    _validate(document)
    write_sarif(repo / "ruff.sarif", document)
    result = run_cli(
        repo, "run", "--base", "main", "--import-sarif", "ruff.sarif", env={"GITHUB_ACTIONS": "true"}
    )
    assert result.returncode == 1, result.stderr
    assert _imported(result.report(), "ruff") == [("E999", "app/calc.py", 10)]
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::") and "E999" in line]
    assert len(annotations) == 1 and "file=app/calc.py,line=10" in annotations[0]
    assert not any("W001" in line or "N001" in line or "X001" in line for line in result.stdout.splitlines())
    finding = next(item for item in result.report()["findings"] if item["source"] == "ruff")
    assert (finding["class"], finding["severity"]) == ("correctness", "major")


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("diff_context", [("E999", "app/calc.py", 10), ("W001", "app/calc.py", 6)]),
        ("file", [("E999", "app/calc.py", 10), ("N001", "app/calc.py", 1), ("W001", "app/calc.py", 6)]),
        (
            "nofilter",
            [
                ("E999", "app/calc.py", 10),
                ("N001", "app/calc.py", 1),
                ("W001", "app/calc.py", 6),
                ("X001", "lib/other.py", 3),
            ],
        ),
    ],
)
def test_filter_modes(repo: Path, mode: str, expected: list[tuple[str, str, int]]) -> None:
    write_sarif(repo / "ruff.sarif", sarif_log("ruff", _results()))
    result = run_cli(repo, "run", "--base", "main", "--import-sarif", "ruff.sarif", "--sarif-filter", mode)
    assert result.returncode in (0, 1), result.stderr
    assert _imported(result.report(), "ruff") == sorted(expected)


def test_level_table_from_config_and_two_tools(repo: Path) -> None:
    write_base_config(repo, '[import]\nfilter = "nofilter"\n[import.levels]\nerror = "readability:minor"\n')
    write_sarif(repo / "ruff.sarif", sarif_log("ruff", _results()[:1]))
    write_sarif(
        repo / "eslint.sarif", sarif_log("ESLint", [sarif_result("no-eval", "eval", "app/calc.py", 10)])
    )
    result = run_cli(
        repo, "run", "--base", "main", "--import-sarif", "ruff.sarif", "--import-sarif", "eslint.sarif"
    )
    assert result.returncode == 0, result.stdout + result.stderr  # error now maps to a non-blocking class
    findings = {
        item["source"]: item for item in result.report()["findings"] if item["category"] == "imported"
    }
    assert (findings["ruff"]["class"], findings["ruff"]["severity"]) == ("readability", "minor")
    assert (findings["ESLint"]["class"], findings["ESLint"]["severity"]) == ("correctness", "minor")
    reviewers = {item["reviewer"] for item in result.report()["reviewers"]}
    assert {"sarif:ruff.sarif", "sarif:eslint.sarif"} <= reviewers


def test_accepted_suppression_is_kept_but_dismissed_and_rejected_one_blocks(repo: Path) -> None:
    results = [
        sarif_result(
            "E1",
            "accepted",
            "app/calc.py",
            9,
            level="error",
            suppressions=[{"kind": "inSource", "justification": "generated by the parser tool"}],
        ),
        sarif_result(
            "E2",
            "rejected",
            "app/calc.py",
            10,
            level="error",
            suppressions=[{"kind": "external", "status": "rejected"}],
        ),
    ]
    document = sarif_log("codeql", results)
    _validate(document)
    write_sarif(repo / "codeql.sarif", document)
    result = run_cli(repo, "run", "--base", "main", "--import-sarif", "codeql.sarif")
    assert result.returncode == 1
    findings = {item["rule"]: item for item in result.report()["findings"] if item["source"] == "codeql"}
    assert findings["E1"]["dismissed"] == "suppressed: generated by the parser tool"
    assert findings["E2"]["dismissed"] is None


def test_absolute_file_uri_and_uri_base_id_map_to_repository_paths(repo: Path) -> None:
    results = [
        sarif_result("A1", "absolute", (repo / "app/calc.py").resolve().as_uri(), 10, level="error"),
        sarif_result("B1", "based", "calc.py", 9, level="error", uri_base_id="SRCROOT"),
        sarif_result("C1", "outside", "file:///elsewhere/app/calc.py", 10, level="error"),
    ]
    based = {"originalUriBaseIds": {"SRCROOT": {"uri": "app/"}}}
    write_sarif(repo / "tool.sarif", sarif_log("tool", results, **based))
    result = run_cli(repo, "run", "--base", "main", "--import-sarif", "tool.sarif")
    assert _imported(result.report(), "tool") == [("A1", "app/calc.py", 10), ("B1", "app/calc.py", 9)]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON SARIF"),
        ('{"version": "2.0.0", "runs": []}', 'version: expected "2.1.0"'),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}',
            "runs[0].tool.driver.name",
        ),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, '
            '"results": [{"message": {}}]}]}',
            "runs[0].results[0].message.text",
        ),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": '
            '[{"message": {"text": "m"}, "level": "fatal"}]}]}',
            "runs[0].results[0].level",
        ),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": '
            '[{"message": {"text": "m"}, "locations": [{"physicalLocation": []}]}]}]}',
            "runs[0].results[0]: not a valid SARIF 2.1.0 result",
        ),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x", "rules": {}}}, "results": []}]}',
            "runs[0].tool.driver.rules: expected a list",
        ),
    ],
)
def test_malformed_sarif_is_exit_2_naming_the_file(repo: Path, content: str, expected: str) -> None:
    (repo / "bad.sarif").write_text(content, encoding="utf-8")
    result = run_cli(repo, "run", "--base", "main", "--import-sarif", "bad.sarif")
    assert result.returncode == 2
    assert "bad.sarif" in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not (repo / ".reviewgate" / "report.json").exists()


def test_missing_file_and_bad_mode_and_bad_table_are_exit_2(repo: Path) -> None:
    missing = run_cli(repo, "run", "--base", "main", "--import-sarif", "nowhere.sarif")
    assert missing.returncode == 2 and "nowhere.sarif: file not found" in missing.stderr
    write_sarif(repo / "ruff.sarif", sarif_log("ruff", []))
    mode = run_cli(repo, "run", "--base", "main", "--import-sarif", "ruff.sarif", "--sarif-filter", "lines")
    assert (
        mode.returncode == 2
        and "--sarif-filter: expected added | diff_context | file | nofilter" in mode.stderr
    )
    write_base_config(repo, '[import.levels]\nerror = "loud"\n')
    table = run_cli(repo, "run", "--base", "main", "--import-sarif", "ruff.sarif")
    assert table.returncode == 2 and ".reviewgate.toml: import.levels.error" in table.stderr


def test_level_defaults_to_the_rules_configuration_then_warning(repo: Path) -> None:
    document = sarif_log(
        "semgrep",
        [
            sarif_result("R1", "rule says error", "app/calc.py", 9, level=None),
            sarif_result("R2", "no level anywhere", "app/calc.py", 10, level=None),
            {**sarif_result("R3", "passes", "app/calc.py", 10), "kind": "pass"},
        ],
    )
    rules = [{"id": "R1", "defaultConfiguration": {"level": "error"}}]
    document["runs"][0]["tool"]["driver"]["rules"] = rules
    _validate(document)
    write_sarif(repo / "semgrep.sarif", document)
    result = run_cli(repo, "run", "--base", "main", "--import-sarif", "semgrep.sarif")
    levels = {
        item["rule"]: item["severity"] for item in result.report()["findings"] if item["source"] == "semgrep"
    }
    assert levels == {"R1": "major", "R2": "minor"}
