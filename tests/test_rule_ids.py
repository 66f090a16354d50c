"""One name per rule: every output shows the rule id that `reviewgate: ignore[...]` takes, a
suppression naming an unknown id says which id was meant, and a suppressed finding is marked as
suppressed in every output rather than counted as open."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest

from reviewgate.ci.context import CiContext
from reviewgate.findings import Severity
from reviewgate.report import publish
from reviewgate.report.console import render_console
from reviewgate.report.github_checks import check_annotation
from reviewgate.report.pr_comment import render_comment
from reviewgate.reviewers.builtin.rules import BUILTIN_RULES, RULE_FAMILIES, closest_rule
from testing.cli import CliResult, run_cli
from testing.conformance import conformance_json, validate_junit
from testing.markdown_render import render_gfm
from testing.repo import make_repo
from testing.results import SAMPLE_FINDINGS, sample_finding, sample_result

# These tests are about the swallowed-exception rule's id. Its findings are advisory by default;
# the merge base's config makes them block, so one left open (not suppressed) fails the run.
BASE = {"app/cache.py": "import json\n", "tests/test_cache.py": "def test_x():\n    pass\n",
        ".reviewgate.toml": "[lenses]\nblock_on_swallowed_failures = true\n"}
TESTS = {"tests/test_cache.py": "def test_x():\n    pass\n\n\ndef test_y():\n    pass\n"}


def _swallowing(marker: str) -> dict[str, str]:
    source = (
        "import json\n\n\n"
        "def load(text):\n"
        "    try:\n"
        "        return json.loads(text)\n"
        f"    {marker}\n"
        "    except Exception:\n"
        "        return {}\n"
    )
    return {"app/cache.py": source, **TESTS}


def _run(tmp_path: Path, marker: str) -> CliResult:
    repo = make_repo(tmp_path, BASE, _swallowing(marker))
    return run_cli(repo.path, "run", "--base", "main", "--no-verify")


def test_the_console_shows_the_rule_id_not_the_category(tmp_path: Path) -> None:
    result = _run(tmp_path, "# a comment")
    assert result.returncode == 1, result.stdout
    line = next(item for item in result.stdout.splitlines() if "app/cache.py:8" in item)
    assert "correctness/swallowed-exception" in line and "[blocks]" in line
    assert "swallowed-failure" not in result.stdout


def test_an_unknown_id_warns_naming_the_closest_and_suppresses_nothing(tmp_path: Path) -> None:
    result = _run(tmp_path, "# reviewgate: ignore[correctness/swallowed-failure] the cache is optional")
    assert result.returncode == 1, result.stdout
    assert ("ignore[correctness/swallowed-failure] names no rule; did you mean "
            "correctness/swallowed-exception?") in result.stdout
    findings = result.report()["findings"]
    warning = next(item for item in findings if item["rule"] == "suppression/unknown-rule")
    assert (warning["severity"], warning["line"], warning["dismissed"]) == ("minor", 7, None)
    swallowed = next(item for item in findings if item["rule"] == "correctness/swallowed-exception")
    assert swallowed["dismissed"] is None


def test_the_right_id_suppresses_and_every_output_marks_it(tmp_path: Path) -> None:
    result = _run(tmp_path, "# reviewgate: ignore[correctness/swallowed-exception] the cache is optional")
    assert result.returncode == 0, result.stdout
    assert "names no rule" not in result.stdout
    lines = result.stdout.splitlines()
    group = lines.index("  suppressed (1):")
    assert "  correctness/swallowed-exception  " in lines[group + 1]
    assert lines[group + 1].endswith("[suppressed: the cache is optional]")
    assert not any(line.startswith("  major (") for line in lines), "a suppressed finding is not open"

    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "<details><summary>1 suppressed finding</summary>" in summary and "major finding" not in summary
    assert "`correctness/swallowed-exception` · suppressed: the cache is optional" in summary

    junit = (result.output_dir / "junit.xml").read_text(encoding="utf-8")
    validate_junit(junit)
    case = next(item for item in ElementTree.fromstring(junit).iter("testcase")
                if item.get("name", "").startswith("correctness/swallowed-exception at app/cache.py:8"))
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("message") == "suppressed: the cache is optional"
    assert case.find("failure") is None

    sarif = json.loads((result.output_dir / "review.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(conformance_json("sarif-schema-2.1.0.json")).validate(sarif)
    entry = next(item for item in sarif["runs"][0]["results"]
                 if item["ruleId"] == "correctness/swallowed-exception")
    suppression = entry["suppressions"][0]
    assert (suppression["kind"], suppression["justification"]) == ("inSource", "suppressed: the cache is optional")
    assert suppression["location"]["physicalLocation"]["region"] == {"startLine": 7}

    quality = json.loads((result.output_dir / "codequality.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(conformance_json("gitlab-codeclimate-entry.schema.json"))
    for item in quality:
        validator.validate(item)
    issue = next(item for item in quality if item["check_name"] == "correctness/swallowed-exception")
    assert issue["severity"] == "info"
    assert issue["description"].startswith("(suppressed: the cache is optional) ")


def test_annotations_and_the_pr_comment_mark_a_suppressed_finding(tmp_path: Path) -> None:
    suppressed = sample_finding(path="app/other.py", title="Handler swallows the error",
                                dismissed="suppressed: the cache is optional")
    result = sample_result(tmp_path / "out", findings=(*SAMPLE_FINDINGS, suppressed), ci=CiContext(provider="github"))
    stdout = io.StringIO()
    publish(result, stdout)
    command = next(line for line in stdout.getvalue().splitlines() if "file=app/other.py" in line)
    assert command.startswith("::notice ")
    assert "title=(suppressed) [major correctness/swallowed-exception] Handler swallows the error" in command

    annotation = check_annotation(suppressed, blocking=False)
    assert annotation is not None and annotation["annotation_level"] == "notice"
    assert annotation["title"].startswith("(suppressed) [major correctness/swallowed-exception]")

    comment = render_comment(result, [])
    assert "<details><summary>1 suppressed finding</summary>" in comment
    assert "major · `correctness/swallowed-exception` · suppressed: the cache is optional" in comment
    console = render_console(result, [])
    assert console[console.index("  suppressed (1):") + 1].endswith("[suppressed: the cache is optional]")
    assert "  major (2):" in console  # the two open majors; the suppressed one is not counted there


def test_summary_shows_each_finding_body_escaped(tmp_path: Path) -> None:
    hostile = sample_finding(
        path="app/x.py", severity=Severity.MINOR, rule="model/readability", source="llm",
        body="Rename it.\n<img src=x onerror=alert(1)> @admin\n```\nunclosed fence\n</details>",
    )
    result = sample_result(tmp_path / "out", findings=(hostile,))
    publish(result, io.StringIO())
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    start = summary.index("- `app/x.py:4` Broad exception handler does nothing\\\n  minor · `model/readability` · from llm\n")
    # Six lines (the unclosed fence runs to the end and gets its closing line): folded under the
    # finding, quoted line by line.
    folded = summary[start:].split("\n\n", 2)
    assert folded[0].endswith("\n  <details><summary>Details (6 lines)</summary>")
    quoted = folded[1].splitlines()
    assert quoted[0] == "  > Rename it."
    assert quoted[1] == "  > &lt;img src=x onerror=alert(1)&gt; @\u200badmin"
    assert quoted[2:] == ["  > ```", "  > unclosed fence", "  > </details>", "  > ```"]  # code, verbatim
    assert all(line.startswith("  >") for line in quoted), "every body line stays inside the quote"
    assert "<img" not in summary
    # As rendered, the body's </details> is code text and closes none of ours.
    html = render_gfm(summary)
    assert "<pre><code>unclosed fence\n&lt;/details&gt;\n</code></pre>" in html
    outside_code = re.sub(r"<pre><code>.*?</code></pre>", "", html, flags=re.DOTALL)
    assert outside_code.count("<details>") == outside_code.count("</details>") > 0


@pytest.mark.parametrize(("typed", "meant"), [
    ("correctness/swallowed-failure", "correctness/swallowed-exception"),
    ("swallowed-failure", "correctness/swallowed-exception"),
    ("security/tls", "security/tls-verification-off"),
    ("readabilty", "readability"),
])
def test_closest_rule(typed: str, meant: str) -> None:
    assert closest_rule(typed) == meant


def test_the_registry_has_one_entry_per_rule_and_the_families_come_from_it() -> None:
    assert len(set(BUILTIN_RULES)) == len(BUILTIN_RULES)
    assert all(rule.count("/") == 1 for rule in BUILTIN_RULES)
    assert set(RULE_FAMILIES) == {rule.split("/")[0] for rule in BUILTIN_RULES}
    assert closest_rule("E501") is None
