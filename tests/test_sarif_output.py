"""review.sarif: valid SARIF 2.1.0 for github/codeql-action/upload-sarif."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reviewgate.report.sarif import build_sarif
from testing.changes import SWALLOWING_CHANGE
from testing.cli import run_cli
from testing.forge_server import conformance_dir, load_schema
from testing.golden import check_golden
from testing.repo import make_repo
from testing.results import sample_result

pytestmark = pytest.mark.skipif(conformance_dir() is None,
                                reason="../shared/conformance is absent: no SARIF schema")


def _sarif(tmp_path: Path, *args: str) -> dict:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"repro/case.txt": "x\n", **SWALLOWING_CHANGE}).path
    result = run_cli(repo, "run", "--no-verify", *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads((result.output_dir / "review.sarif").read_text(encoding="utf-8"))


def test_the_sarif_file_validates_and_carries_rules_locations_and_fingerprints(tmp_path: Path) -> None:
    sarif = _sarif(tmp_path)
    jsonschema.Draft4Validator(load_schema("sarif-schema-2.1.0.json")).validate(sarif)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == 2
    for item in results:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        assert item["level"] == "error"
        assert item["partialFingerprints"]["reviewgateFindingId/v1"]
    swallowed = next(item for item in results if item["ruleId"] == "correctness/swallowed-exception")
    location = swallowed["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "load.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 4, "endLine": 5}
    assert run["properties"]["verdict"] == "request_changes"


def test_a_finding_below_the_gate_is_a_warning(tmp_path: Path) -> None:
    sarif = _sarif(tmp_path, "--fail-on", "correctness:blocker", "--fail-on", "systematic:blocker")
    assert {item["level"] for item in sarif["runs"][0]["results"]} == {"warning"}
    assert sarif["runs"][0]["properties"]["verdict"] == "approve"


def test_sarif_golden(tmp_path: Path) -> None:
    sarif = build_sarif(sample_result(tmp_path))
    jsonschema.Draft4Validator(load_schema("sarif-schema-2.1.0.json")).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert len(results) == 3  # the product question has no file: it is left out, and counted
    assert sarif["runs"][0]["properties"]["unlocated_findings"] == 1
    check_golden("review.sarif", json.dumps(sarif, indent=2, ensure_ascii=False) + "\n")
