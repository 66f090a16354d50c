"""One finding per place: identical lines at different places are separate findings with ids of
their own (the first keeps the line-free id), in the report and in the check run's annotations."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from reviewgate.findings import Finding, FindingClass, Severity, one_per_place
from testing.cli import run_cli
from testing.forge_server import ForgeServer, conformance_dir, fast_retry_config, github_environment
from testing.lenses import review_change
from testing.repo import make_repo

HANDLERS = 120
SWALLOWING = "".join(
    f"\n\ndef step_{index}(job):\n    try:\n        job.run({index})\n    except Exception:\n        pass\n"
    for index in range(HANDLERS)
)
SWALLOWED = "correctness/swallowed-exception"
TEST = "def test_jobs():\n    assert True\n"


def _finding(identifier: str, line: int | None, path: str = "a.py") -> Finding:
    return Finding(id=identifier, finding_class=FindingClass.CORRECTNESS, severity=Severity.MAJOR,
                   category="c", title="t", body="", source="builtin", path=path, line=line)


def test_the_first_place_keeps_the_id_and_later_places_get_ordinals_in_line_order() -> None:
    findings = one_per_place([_finding("x", 30), _finding("x", 10), _finding("y", 5), _finding("x", 10),
                              _finding("x", 20)])
    assert sorted((item.id, item.line) for item in findings) == [("x", 10), ("x-2", 20), ("x-3", 30), ("y", 5)]


def test_ids_survive_a_shift_of_every_line(tmp_path: Path) -> None:
    base = {"app/jobs.py": "import os\n", "tests/test_jobs.py": TEST}
    first = review_change(tmp_path / "one", base, {"app/jobs.py": "import os\n" + SWALLOWING})
    shifted = review_change(tmp_path / "two", base, {"app/jobs.py": "import os\n# jobs\n\n" + SWALLOWING})
    ids = [item.id for item in sorted(first, key=lambda item: item.line or 0) if item.rule == SWALLOWED]
    assert [item.id for item in sorted(shifted, key=lambda item: item.line or 0) if item.rule == SWALLOWED] == ids
    assert len(set(ids)) == len(ids) == HANDLERS


@pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent: check-run bodies "
                    "cannot be validated against GitHub's schemas")
def test_120_identical_handlers_are_120_findings_and_120_annotations_in_batches_of_50(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/jobs.py": "import os\n", "tests/test_jobs.py": TEST},
                     {"app/jobs.py": "import os\n" + SWALLOWING, "tests/test_jobs.py": TEST + "\n"}).path
    # Swallowed failures are advisory by default: they block here, so the check run fails on them.
    # The job's --config (outside the repository) is the policy, so the switch goes in it.
    config = fast_retry_config(tmp_path, extra="[lenses]\nblock_on_swallowed_failures = true\n")
    with ForgeServer() as server:
        result = run_cli(repo, "run", "--no-verify", "--config", str(config), env=github_environment(server, tmp_path))
    assert result.returncode == 1, result.stderr
    swallowed = [item for item in result.report()["findings"] if item["rule"] == SWALLOWED]
    assert len(swallowed) == HANDLERS
    assert len({item["id"] for item in swallowed}) == HANDLERS
    assert sorted(item["line"] for item in swallowed) == [7 + 7 * index for index in range(HANDLERS)]
    updates = server.state.posts("PATCH", r"/check-runs/\d+$")
    sizes = [len(item.body["output"].get("annotations", [])) for item in updates]
    assert max(sizes) <= 50 and sum(sizes) == len(result.report()["findings"]) >= HANDLERS
    [check_run] = server.state.check_runs.values()
    lines = [item["start_line"] for item in check_run["annotations"] if "swallowed-exception" in item["raw_details"]]
    assert sorted(lines) == [7 + 7 * index for index in range(HANDLERS)]
    assert server.state.schema_errors == []
    # Every file sink keeps them apart too.
    quality = json.loads((result.output_dir / "codequality.json").read_text(encoding="utf-8"))
    assert len({item["fingerprint"] for item in quality if "swallowed-exception" in item["check_name"]}) == HANDLERS
    sarif = json.loads((result.output_dir / "review.sarif").read_text(encoding="utf-8"))
    results = [item for item in sarif["runs"][0]["results"] if item["ruleId"] == SWALLOWED]
    assert len({item["partialFingerprints"]["reviewgateFindingId/v1"] for item in results}) == HANDLERS
    cases = ElementTree.parse(result.output_dir / "junit.xml").getroot().iter("testcase")
    assert len({case.get("name") for case in cases if "Broad exception handler" in (case.get("name") or "")}) == HANDLERS
