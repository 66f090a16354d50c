"""review.sarif: valid SARIF 2.1.0 for github/codeql-action/upload-sarif."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reviewgate.findings import FindingClass, Severity
from reviewgate.report.sarif import build_sarif
from testing.changes import BLOCKING_CHANGE, BLOCKING_LINE, BLOCKING_PATH, BLOCKING_RULE
from testing.cli import run_cli
from testing.forge_server import conformance_dir, load_schema
from testing.golden import check_golden
from testing.repo import make_repo
from testing.results import sample_finding, sample_result

pytestmark = pytest.mark.skipif(conformance_dir() is None,
                                reason="../shared/conformance is absent: no SARIF schema")


def _sarif(tmp_path: Path, *args: str) -> dict:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"repro/case.txt": "x\n", **BLOCKING_CHANGE}).path
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
    query = next(item for item in results if item["ruleId"] == BLOCKING_RULE)
    location = query["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": BLOCKING_PATH, "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": BLOCKING_LINE}
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


# --- rules as code scanning shows them ---------------------------------------------------------


def assert_github_accepts(sarif: dict) -> None:
    """GitHub's documented requirements for upload-sarif ("SARIF support for code scanning"), beyond the schema."""
    jsonschema.Draft4Validator(load_schema("sarif-schema-2.1.0.json")).validate(sarif)
    assert len(sarif["runs"]) <= 20
    for run in sarif["runs"]:
        assert len(run["results"]) <= 25_000
        for rule in run["tool"]["driver"]["rules"]:
            assert rule["id"] and len(rule.get("name", "")) <= 255
            for key in ("shortDescription", "fullDescription"):
                assert 0 < len(rule[key]["text"]) <= 1024, (rule["id"], key)
            assert rule["help"]["text"].strip(), rule["id"]
            properties = rule["properties"]
            assert len(properties["tags"]) <= 10 and properties["precision"] in ("very-high", "high", "medium", "low")
            if "security-severity" in properties:
                assert "security" in properties["tags"] and 0.0 < float(properties["security-severity"]) <= 10.0
        for item in run["results"]:
            assert item["message"]["text"].strip() and item["partialFingerprints"]
            assert 1 <= len(item["locations"]) <= 10
            uri = item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert "://" not in uri and not uri.startswith("/"), uri


def _descriptor(sarif: dict, rule_id: str) -> dict:
    return next(rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"] if rule["id"] == rule_id)


def test_rules_come_from_the_registry_never_from_a_finding(tmp_path: Path) -> None:
    from reviewgate.reviewers.builtin.rules import RULES_BY_ID

    copies = tuple(sample_finding(path=f"pkg/mod_{index:02}.py", line=7, rule="reuse/duplicate-code", category="reuse",
                                  finding_class=FindingClass.SYSTEMATIC,
                                  title=f"Repeats code of `helper_{index}` at pkg/mod_00.py:7", body="**Use** `helper`.")
                   for index in range(2))
    secret = sample_finding(path="app/pay.py", line=1, severity=Severity.BLOCKER, rule="security/committed-secret",
                            title="A GitHub token, 40 characters")
    sarif = build_sarif(sample_result(tmp_path, findings=(*copies, secret)))
    assert_github_accepts(sarif)
    duplicate = _descriptor(sarif, "reuse/duplicate-code")
    assert duplicate["shortDescription"]["text"] == RULES_BY_ID["reuse/duplicate-code"].short
    assert "helper_" not in json.dumps(duplicate) and "mod_00" not in json.dumps(duplicate)
    assert duplicate["helpUri"].endswith("/docs/rules.md#reuseduplicate-code")
    assert "def read_job_config(filename, fallback):" in duplicate["help"]["text"]  # the docs' example that fires it
    assert "```python\n" in duplicate["help"]["markdown"]
    assert "security-severity" not in duplicate["properties"]
    assert {"maintainability", "systematic"} <= set(duplicate["properties"]["tags"])
    security = _descriptor(sarif, "security/committed-secret")
    assert security["properties"]["security-severity"] == "9.0" and "security" in security["properties"]["tags"]
    # The message is plain text: code scanning does not render a finding's Markdown.
    message = next(item for item in sarif["runs"][0]["results"] if item["ruleId"] == "reuse/duplicate-code")["message"]
    assert message["text"] == "Repeats code of helper_0 at pkg/mod_00.py:7\n\nUse helper."


def test_every_builtin_rule_has_a_descriptor_with_examples_and_a_docs_anchor_that_exists() -> None:
    from reviewgate.report.sarif_rules import docs_anchor, rule_descriptor
    from reviewgate.reviewers.builtin.rules import RULES
    from testing.lens_docs import RULE_PAGES, github_anchors

    anchors = github_anchors(RULE_PAGES.read_text(encoding="utf-8"))
    for rule in RULES:
        rule_id = rule.id
        assert docs_anchor(rule_id) in anchors, rule_id
        descriptor = rule_descriptor(rule_id, sample_finding(rule=rule_id))
        assert rule.fires[0].file.code.strip() in descriptor["help"]["text"]
        assert rule.does_not_fire[0].file.code.strip() in descriptor["help"]["text"]
        assert ("security-severity" in descriptor["properties"]) == rule_id.startswith("security/"), rule_id


def test_model_and_imported_rules_get_fixed_words_for_their_kind(tmp_path: Path) -> None:
    hostile = "Ignore <b>this</b> @octocat `x`"
    model = sample_finding(path="a.py", rule="model/whatever-it-said", category="whatever-it-said", source="llm",
                           title=hostile, body=hostile)
    imported = sample_finding(path="b.py", rule="S1234", category="imported", source="sonar", title=hostile)
    sarif = build_sarif(sample_result(tmp_path, findings=(model, imported)))
    assert_github_accepts(sarif)
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(hostile not in json.dumps(rule) and "octocat" not in json.dumps(rule) for rule in rules)
    assert _descriptor(sarif, "model/whatever-it-said")["shortDescription"]["text"] == (
        "A model reviewer's finding: a correctness problem")
    assert _descriptor(sarif, "S1234")["shortDescription"]["text"] == "A result imported from another analyzer's SARIF"


def test_a_run_holds_at_most_githubs_result_limit_the_most_severe_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewgate.report import sarif as sarif_module

    monkeypatch.setattr(sarif_module, "MAX_RESULTS", 3)
    findings = tuple(sample_finding(path=f"f{index}.py", severity=Severity.MINOR, rule="readability/narrating-comment",
                                    title=f"minor {index}") for index in range(4))
    findings += (sample_finding(path="z.py", severity=Severity.BLOCKER, title="the blocker"),)
    run = build_sarif(sample_result(tmp_path, findings=findings))["runs"][0]
    assert len(run["results"]) == 3 and run["properties"]["results_left_out"] == 2
    assert run["results"][0]["message"]["text"].startswith("the blocker")
