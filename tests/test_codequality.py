"""codequality.json: every entry valid against GitLab's schema, unique fingerprints, severity map."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.report.gitlab import SEVERITIES, build_codequality, codequality_entry, fingerprint
from testing.changes import SWALLOWING_CHANGE
from testing.cli import run_cli
from testing.forge_server import conformance_dir, load_schema
from testing.golden import check_golden
from testing.repo import make_repo
from testing.results import sample_result


@pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent: no GitLab schema")
def test_every_entry_is_valid_and_fingerprints_are_unique(tmp_path: Path) -> None:
    files = {f"repro/case_{index}.txt": "x\n" for index in range(5)}
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {**files, **SWALLOWING_CHANGE}).path
    result = run_cli(repo, "run", "--no-verify")
    assert result.returncode == 1
    entries = json.loads((result.output_dir / "codequality.json").read_text(encoding="utf-8"))
    assert isinstance(entries, list) and len(entries) == 6
    schema = load_schema("gitlab-codeclimate-entry.schema.json")
    for entry in entries:
        jsonschema.validate(entry, schema)
    assert len({entry["fingerprint"] for entry in entries}) == 6
    swallowed = next(entry for entry in entries if entry["location"]["path"] == "load.py")
    assert swallowed["location"]["lines"]["begin"] == 4 and swallowed["severity"] == "major"
    again = run_cli(repo, "run", "--no-verify")
    entries_again = json.loads((again.output_dir / "codequality.json").read_text(encoding="utf-8"))
    assert [entry["fingerprint"] for entry in entries_again] == [entry["fingerprint"] for entry in entries]


def test_severities_map_onto_gitlab_names_and_nit_becomes_info() -> None:
    assert {key.value: value for key, value in SEVERITIES.items()} == {
        "blocker": "blocker", "major": "major", "minor": "minor", "nit": "info"}
    taken: set[str] = set()
    finding = Finding(id="same", finding_class=FindingClass.READABILITY, severity=Severity.NIT,
                      category="naming",
                      title="t", body="", source="builtin", path="a.py", line=None)
    first, second = codequality_entry(finding, False, taken), codequality_entry(finding, False, taken)
    assert first["severity"] == "info" and first["location"]["lines"]["begin"] == 1
    assert first["fingerprint"] != second["fingerprint"]
    assert fingerprint(finding, set()) == first["fingerprint"]


def test_codequality_golden(tmp_path: Path) -> None:
    entries = build_codequality(sample_result(tmp_path))
    if conformance_dir() is not None:
        for entry in entries:
            jsonschema.validate(entry, load_schema("gitlab-codeclimate-entry.schema.json"))
    check_golden("codequality.json", json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
