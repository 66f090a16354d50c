"""benchmarks/owasp_benchmark.py scores rule_scan's findings against the Benchmark's labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.owasp_benchmark import main


def test_blocks_and_reports_are_scored_per_category(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = tmp_path / "expectedresults-1.2.csv"
    expected.write_text(
        "# test name, category, real vulnerability, cwe\n"
        "BenchmarkTest00001,sqli,true,89\nBenchmarkTest00002,sqli,true,89\n"
        "BenchmarkTest00003,sqli,false,89\nBenchmarkTest00004,sqli,false,89\n"
        "BenchmarkTest00005,cmdi,true,78\nBenchmarkTest00006,cmdi,false,78\n"
    )
    testcode = "src/main/java/org/owasp/benchmark/testcode"
    findings = tmp_path / "findings.jsonl"
    findings.write_text("".join(json.dumps(item) + "\n" for item in (
        {"file": f"{testcode}/BenchmarkTest00001.java", "rule": "security/sql-injection", "severity": "major"},
        {"file": f"{testcode}/BenchmarkTest00003.java", "rule": "security/sql-injection", "severity": "minor"},
        # Another category's rule in a SQL case, and a finding outside the test cases: not counted.
        {"file": f"{testcode}/BenchmarkTest00002.java", "rule": "security/shell-injection", "severity": "major"},
        {"file": "src/main/java/org/owasp/benchmark/helpers/Utils.java", "rule": "security/sql-injection",
         "severity": "major"},
        {"file": f"{testcode}/BenchmarkTest00006.java", "rule": "security/shell-injection", "severity": "major"},
    )))
    assert main([str(expected), str(findings)]) == 0
    printed = capsys.readouterr().out
    assert "sqli: 2 true, 2 false; blocking: TPR 50.0%, FPR 0.0%, score +50.0%; any severity: TPR 50.0%, FPR 50.0%" in printed
    assert "cmdi: 1 true, 1 false; blocking: TPR 0.0%, FPR 100.0%, score -100.0%; any severity: TPR 0.0%, FPR 100.0%" in printed


def test_a_missing_file_is_a_usage_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(tmp_path / "expected.csv"), str(tmp_path / "findings.jsonl")])
    assert exited.value.code == 2
    assert f"{tmp_path / 'expected.csv'}: no such file" in capsys.readouterr().err
