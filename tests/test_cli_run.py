"""The gate end to end: real repositories, the real CLI in a subprocess, real outputs."""

from __future__ import annotations

from pathlib import Path

from testing.cli import run_cli
from testing.conformance import validate_junit, validate_report
from testing.repo import commit, git, make_repo

# Each change comes with its test, so the only finding is the one a test is about.
JOBS_TEST = {"tests/test_jobs.py": "from app.jobs import run\n\n\ndef test_run(cursor):\n    assert run(cursor, 'nightly') is None\n"}
# A query built by formatting the name in: one security/sql-injection finding, blocking by default.
BLOCKING_CHANGE = {"app/jobs.py": "def run(cursor, request):\n    cursor.execute(f\"SELECT id FROM jobs WHERE name = '{request.args['name']}'\")\n", **JOBS_TEST}
CLEAN_SOURCE = "def run(cursor, name):\n    cursor.execute(\"SELECT id FROM jobs WHERE name = ?\", (name,))\n"
CLEAN_CHANGE = {"app/jobs.py": CLEAN_SOURCE, **JOBS_TEST}
BASE = {"README.md": "# app\n", "app/__init__.py": "", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}


def test_a_blocking_finding_requests_changes_with_the_finding_on_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stderr
    report = result.report()
    validate_report(report)
    assert report["verdict"] == "request_changes"
    assert report["route"] == "implementation"
    assert report["target"]["head_sha"] == repo.head_sha
    [finding] = report["findings"]
    assert (finding["rule"], finding["class"], finding["severity"], finding["category"]) == (
        "security/sql-injection", "correctness", "major", "security")
    assert (finding["path"], finding["line"], finding["blocking"]) == ("app/jobs.py", 2, True)
    validate_junit((result.output_dir / "junit.xml").read_text(encoding="utf-8"))
    assert "verdict: changes requested" in result.stdout and "app/jobs.py:2" in result.stdout


def test_github_actions_gets_an_error_annotation_outputs_and_a_step_summary(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    summary.write_text("earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    result = run_cli(repo.path, "run", "--base", "main", env=env)
    assert result.returncode == 1
    assert "::error file=app/jobs.py,line=2,title=" in result.stdout
    assert summary.read_text().startswith("earlier step\n## ❌ reviewgate: changes requested")
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["verdict"] == "request_changes"
    assert (written["findings"], written["blocking"]) == ("1", "1")
    assert written["report"].endswith("report.json")


def test_a_clean_change_is_approved(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CLEAN_CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report()
    validate_report(report)
    assert (report["verdict"], report["route"], report["findings"]) == ("approve", "closeout", [])


def test_base_equal_to_head_approves_with_a_note(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0
    report = result.report()
    assert report["verdict"] == "approve"
    assert any("nothing to review" in note for note in report["notes"])
    assert report["reviewers"][0]["status"] == "skipped"


def test_repro_files_in_the_diff_block_as_systematic(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, {"repro/case_1.py": "print('repro')\n", **CLEAN_CHANGE})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1
    [finding] = result.report()["findings"]
    assert (finding["class"], finding["category"], finding["path"]) == ("systematic", "reproduction", "repro/case_1.py")


def test_fail_on_from_the_config_file_and_the_flag(tmp_path: Path) -> None:
    config = '[review]\nfail_on = ["systematic:blocker"]\n'
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config}, BLOCKING_CHANGE)
    assert run_cli(repo.path, "run", "--base", "main").returncode == 0
    assert run_cli(repo.path, "run", "--base", "main", "--fail-on", "correctness:major").returncode == 1


def test_a_reviewgate_table_in_pyproject_is_read(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "x"\n\n[tool.reviewgate.review]\nfail_on = ["readability:blocker"]\n'
    repo = make_repo(tmp_path, {**BASE, "pyproject.toml": pyproject}, BLOCKING_CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stderr
    assert result.report()["policy"]["fail_on"] == ["readability:blocker"]


def test_the_head_is_read_from_git_not_from_the_work_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    (repo.path / "app/jobs.py").write_text(CLEAN_SOURCE)  # uncommitted fix
    assert run_cli(repo.path, "run", "--base", "main").returncode == 1


def test_outputs_are_replaced_whole_on_a_second_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    assert run_cli(repo.path, "run", "--base", "main").returncode == 1
    commit(repo.path, CLEAN_CHANGE, "pass the name as a query parameter")
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0
    assert result.report()["findings"] == []
    assert sorted(path.name for path in result.output_dir.iterdir()) == [
        ".gitignore", ".lock", "codequality.json", "junit.xml", "report.json", "review.sarif", "summary.md"]


def test_reviewing_another_head_ref(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    git(repo.path, "checkout", "-q", "main")
    result = run_cli(repo.path, "run", "--base", "main", "--head", "feature")
    assert result.returncode == 1
    assert result.report()["target"]["head_sha"] == repo.head_sha


def test_fail_on_none_reports_everything_and_approves(tmp_path: Path) -> None:
    # Report-only, for rolling the gate out: the injectable query is reported, nothing blocks.
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    result = run_cli(repo.path, "run", "--base", "main", "--fail-on", "none")
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report()
    validate_report(report)
    assert report["verdict"] == "approve"
    [finding] = report["findings"]
    assert finding["rule"] == "security/sql-injection" and finding["blocking"] is False
    assert "Report-only (fail-on none)" in (result.output_dir / "summary.md").read_text(encoding="utf-8")


def test_fail_on_none_cannot_be_combined_with_rules(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, BLOCKING_CHANGE)
    result = run_cli(repo.path, "run", "--base", "main", "--fail-on", "none", "--fail-on", "correctness:major")
    assert result.returncode == 2
    assert "--fail-on: 'none' turns blocking off and cannot be combined with rules" in result.stderr
