"""Suppression comments the change adds on blocking findings: listed for people (`list`, the
default), refused (`refuse`) or silent (`allow`), by the target side's `[review]
branch_suppressions`. A suppression already at the target side always counts. Real repositories,
the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.cli import CliResult, run_cli
from testing.conformance import validate_report
from testing.repo import make_repo

RULE = "security/sql-injection"
REASON = "the name is one of the scheduler's fixed job names"
TESTS = {"tests/test_jobs.py": "from app.jobs import run\n\n\ndef test_run(cursor):\n    assert run(cursor, 'nightly') is None\n"}
BASE = {"README.md": "# app\n", "app/__init__.py": "", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}
# A query built by formatting the name in (blocking by default), the suppression on its own line above.
SUPPRESSION_ABOVE = f"def run(cursor, name):\n    # reviewgate: ignore[{RULE}] {REASON}\n"
FORMATTED_QUERY = "    cursor.execute(f\"SELECT id FROM jobs WHERE name = '{request.args['name']}'\")\n"
SUPPRESSED = {"app/jobs.py": SUPPRESSION_ABOVE + FORMATTED_QUERY, **TESTS}


def _config(mode: str | None) -> dict[str, str]:
    return {} if mode is None else {".reviewgate.toml": f'[review]\nbranch_suppressions = "{mode}"\n'}


def _run(tmp_path: Path, mode: str | None, branch: dict[str, str] = SUPPRESSED) -> CliResult:
    repo = make_repo(tmp_path, {**BASE, **_config(mode)}, branch)
    return run_cli(repo.path, "run", "--base", "main")


def _summary(result: CliResult) -> str:
    return (result.output_dir / "summary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", [None, "list"])
def test_by_default_a_branch_suppression_counts_and_is_listed(tmp_path: Path, mode: str | None) -> None:
    result = _run(tmp_path, mode)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report()
    validate_report(report)
    [listed] = report["suppressed_by_change"]
    assert (listed["path"], listed["line"], listed["rule"], listed["reason"], listed["refused"]) == (
        "app/jobs.py", 3, RULE, REASON, False)
    summary = _summary(result)
    assert "### Suppressed by this change" in summary
    assert f"| `app/jobs.py:3` | {RULE} |" in summary and REASON in summary


def test_refuse_keeps_the_finding_blocking_and_lists_it_as_refused(tmp_path: Path) -> None:
    result = _run(tmp_path, "refuse")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    [finding] = [item for item in report["findings"] if item["rule"] == RULE]
    assert finding["blocking"] is True and finding["dismissed"] is None
    assert report["suppressed_by_change"][0]["refused"] is True
    assert "**refused: it blocks**" in _summary(result)


def test_allow_counts_silently(tmp_path: Path) -> None:
    result = _run(tmp_path, "allow")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.report()["suppressed_by_change"] == []
    assert "Suppressed by this change" not in _summary(result)


def test_the_branch_cannot_switch_refuse_off_in_its_own_config(tmp_path: Path) -> None:
    result = _run(tmp_path, "refuse", {**SUPPRESSED, **_config("allow")})
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.report()["suppressed_by_change"][0]["refused"] is True


def test_a_suppression_already_at_the_target_side_always_counts(tmp_path: Path) -> None:
    # The branch changes the query under the suppression, not the suppression's own line.
    base_jobs = SUPPRESSION_ABOVE + "    cursor.execute(\"SELECT id FROM jobs WHERE name = ?\", (name,))\n"
    repo = make_repo(tmp_path, {**BASE, **_config("refuse"), "app/jobs.py": base_jobs, **TESTS},
                     {"app/jobs.py": SUPPRESSION_ABOVE + FORMATTED_QUERY,
                      "tests/test_jobs.py": TESTS["tests/test_jobs.py"] + "\n\ndef test_again():\n    pass\n"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report()
    [finding] = [item for item in report["findings"] if item["rule"] == RULE]
    assert finding["dismissed"] == f"suppressed: {REASON}"
    assert report["suppressed_by_change"] == []


def test_a_bad_mode_at_the_target_side_exits_2_naming_the_key(tmp_path: Path) -> None:
    result = _run(tmp_path, "sometimes")
    assert result.returncode == 2
    assert ".reviewgate.toml: review.branch_suppressions: expected allow | list | refuse, got 'sometimes'" in (
        result.stderr)
