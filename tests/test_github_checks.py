"""The GitHub check run, the summary comment and the fork fallback, against the local stand-in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.gate import Decision
from reviewgate.report.github_checks import check_annotation, conclusion_for
from testing.cli import CliResult, run_cli
from testing.forge_server import ForgeServer, conformance_dir, fast_retry_config, github_environment, run_on_github
from testing.repo import make_repo

pytestmark = pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent: "
                                "check-run bodies cannot be validated against GitHub's schemas")

REPRO_FILES = {f"repro/case_{index:03}.txt": f"case {index}\n" for index in range(120)}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    # Every file under repro/ is one systematic major finding of the builtin reviewer: 120.
    return make_repo(tmp_path, {"app.py": "print('hello')\n"}, REPRO_FILES).path


def _run(repo: Path, server: ForgeServer, tmp_path: Path, token: str = "write-token") -> CliResult:
    return run_on_github(repo, tmp_path, server, token=token)


def test_a_pr_run_with_120_findings_posts_one_check_run_in_three_updates_and_one_comment(
    repo: Path, tmp_path: Path
) -> None:
    with ForgeServer() as server:
        result = _run(repo, server, tmp_path)
    state = server.state
    assert result.returncode == 1, result.stderr
    assert state.schema_errors == []
    assert len(state.check_runs) == 1
    check_run = next(iter(state.check_runs.values()))
    assert check_run["status"] == "completed" and check_run["conclusion"] == "failure"
    assert check_run["name"] == "reviewgate"
    head = result.report()["target"]["head_sha"]
    assert check_run["head_sha"] == head
    assert check_run["external_id"] == f"{head}:{result.report()['target']['patch_sha256']}"
    updates = state.posts("PATCH", r"/check-runs/\d+$")
    assert [len(item.body["output"].get("annotations", [])) for item in updates] == [50, 50, 20]
    assert updates[-1].body["status"] == "completed"
    assert len(check_run["annotations"]) == 120
    assert {item["annotation_level"] for item in check_run["annotations"]} == {"failure"}
    assert len(state.comments) == 1
    comment = next(iter(state.comments.values()))["body"]
    assert comment.splitlines()[0] == "REVIEW: REQUEST CHANGES"
    # The check run carries the annotations, so no workflow-command copies on stdout.
    assert "::error " not in result.stdout


def test_three_runs_on_the_same_sha_leave_one_comment_and_one_set_of_annotations(
    repo: Path, tmp_path: Path
) -> None:
    with ForgeServer() as server:
        codes = [_run(repo, server, tmp_path).returncode for _ in range(3)]
    state = server.state
    assert codes == [1, 1, 1]
    assert len(state.comments) == 1
    assert len(state.posts("POST", r"/issues/7/comments$")) == 1
    assert len(state.posts("PATCH", r"/issues/comments/\d+$")) == 2
    assert len(state.check_runs) == 1
    assert len(next(iter(state.check_runs.values()))["annotations"]) == 120
    assert state.schema_errors == []


def test_a_read_only_token_falls_back_to_workflow_commands_and_keeps_the_exit_code(
    repo: Path, tmp_path: Path
) -> None:
    with ForgeServer() as server:
        server.state.read_only_tokens.add("fork-token")
        result = _run(repo, server, tmp_path, token="fork-token")
    assert result.returncode == 1
    assert result.stdout.count("::error ") == 10  # GitHub shows 10 per level per step
    assert result.stdout.count("GitHub check run not published") == 1
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "GitHub check run not published (POST repos/octo/app/check-runs: HTTP 403)" in summary
    assert "The PR comment (and any round-cap label) was not published" in summary
    assert server.state.check_runs == {} and server.state.comments == {}


def test_429_with_retry_after_and_a_502_are_retried(repo: Path, tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.retry_after = "0"
        server.state.throttle_once.append(("POST", r"/check-runs$"))
        server.state.fail_once.append(("PATCH", r"/check-runs/\d+$"))
        result = _run(repo, server, tmp_path)
    assert result.returncode == 1
    assert len(server.state.check_runs) == 1
    assert len(server.state.posts("POST", r"/check-runs$")) == 2
    assert len(next(iter(server.state.check_runs.values()))["annotations"]) == 120


def test_an_approved_change_concludes_success_and_says_approve(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "print('hello')\n"}, {"app.py": "print('hello, world')\n"}).path
    with ForgeServer() as server:
        result = _run(repo, server, tmp_path)
    assert result.returncode == 0
    check_run = next(iter(server.state.check_runs.values()))
    assert check_run["conclusion"] == "success"
    # No finding on a first review: the check says it all, a comment would only be noise.
    assert result.report()["findings"] == [] and server.state.comments == {}
    assert ("No PR comment: approved with no findings, and there is no earlier one to update"
            in (result.output_dir / "summary.md").read_text(encoding="utf-8"))


def test_an_approved_change_with_findings_gets_its_comment(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "print('hello')\n"},
                     {"app.py": "def total(items):\n    return sum(items)\n"}).path
    with ForgeServer() as server:  # report-only: findings, and an approval
        result = run_cli(repo, "run", "--no-verify", "--fail-on", "none", "--config",
                         str(fast_retry_config(tmp_path)), env=github_environment(server, tmp_path, number=7))
    assert result.returncode == 0 and result.report()["findings"], result.stdout
    assert next(iter(server.state.comments.values()))["body"].startswith("REVIEW: APPROVE\n")


def test_a_bad_blocked_conclusion_is_a_config_error_before_anything_is_posted(
    repo: Path, tmp_path: Path
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[github]\nblocked_conclusion = "success"\n', encoding="utf-8")
    with ForgeServer() as server:
        result = run_cli(repo, "run", "--no-verify", "--config", str(config),
                         env=github_environment(server, tmp_path))
    assert result.returncode == 2
    assert "github.blocked_conclusion: expected neutral or failure, got 'success'" in result.stderr
    assert "Traceback" not in result.stderr
    assert server.state.requests == []


def test_annotation_text_is_cut_to_githubs_limits() -> None:
    finding = Finding(id="x", finding_class=FindingClass.CORRECTNESS, severity=Severity.MINOR, category="c",
                      title="t" * 400, body="é" * 70_000, source="builtin", path="a.py", line=3, end_line=2)
    annotation = check_annotation(finding, blocking=False)
    assert annotation is not None
    assert len(annotation["title"]) == 255 and annotation["title"].endswith("…")
    assert len(annotation["message"].encode()) <= 64 * 1024 and annotation["message"].endswith("truncated")
    assert (annotation["start_line"], annotation["end_line"]) == (3, 3)
    assert annotation["annotation_level"] == "warning"
    assert check_annotation(finding.with_changes(path=None), blocking=True) is None
    assert conclusion_for(Decision.BLOCKED, "neutral") == "neutral"
    assert conclusion_for(Decision.REQUEST_CHANGES, "neutral") == "failure"


def test_a_summary_over_65535_characters_leaves_entries_out_with_a_pointer_to_the_artifact(tmp_path: Path) -> None:
    files = {f"repro/{'deep/' * 8}case_{index:04}.txt": "x\n" for index in range(500)}
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, files).path
    with ForgeServer() as server:
        result = _run(repo, server, tmp_path)
    assert result.returncode == 1
    assert server.state.schema_errors == []
    summary = next(iter(server.state.check_runs.values()))["output"]["summary"]
    assert len(summary.encode()) <= 65535
    assert "**Left out to stay within GitHub's 65,535-character limit of a check run's summary:** " in summary
    assert "https://github.example/octo/app/actions/runs/42" in summary
    assert len(server.state.posts("PATCH", r"/check-runs/\d+$")) == 10


def test_a_forge_that_keeps_failing_is_listed_and_the_annotations_fall_back(
    repo: Path, tmp_path: Path
) -> None:
    with ForgeServer() as server:
        server.state.fail_once.extend([("POST", r"/check-runs$")] * 8)  # the start and the sink's retry
        result = _run(repo, server, tmp_path)
    assert result.returncode == 1
    assert server.state.check_runs == {}
    assert len(server.state.posts("POST", r"/check-runs$")) == 8
    assert result.stdout.count("::error ") == 10
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "GitHub check run not published (POST repos/octo/app/check-runs: HTTP 502)" in summary
    assert "read-only" not in summary
    assert len(server.state.comments) == 1  # the comment is another call, and it went through


def test_a_check_run_that_failed_to_start_is_created_by_the_sink(repo: Path, tmp_path: Path) -> None:
    with ForgeServer() as server:
        server.state.fail_once.extend([("POST", r"/check-runs$")] * 4)  # every attempt of the start
        result = _run(repo, server, tmp_path)
    assert result.returncode == 1
    assert len(server.state.check_runs) == 1
    assert next(iter(server.state.check_runs.values()))["conclusion"] == "failure"


def test_a_gate_that_stops_early_completes_its_check_run_as_not_approved(tmp_path: Path) -> None:
    from reviewgate.forge.session import ForgeRun
    from reviewgate.forge.settings import ForgeSettings
    from reviewgate.forge.steps import abandon_check_run

    with ForgeServer() as server:
        forge = ForgeRun(provider="github", settings=ForgeSettings(), api_url=server.url, repository="octo/app",
                         number=7, token="write-token")
        created = forge.github().create_check_run({"name": "reviewgate", "head_sha": "a" * 40, "status": "in_progress"})
        abandon_check_run(replace(forge, check_run_id=created["id"]), "KeyboardInterrupt")
        abandon_check_run(None, "no forge: nothing to do")
    [run] = server.state.check_runs.values()
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert "KeyboardInterrupt" in run["output"]["summary"]
    assert server.state.schema_errors == []
