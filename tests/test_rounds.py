"""Round counting per distinct reviewed patch, blocked runs not counting, and the cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.forge.metadata import MARKER, parse_metadata
from reviewgate.forge.rounds import RoundEntry, count_rounds, decide_rounds, record
from testing.cli import run_cli
from testing.forge_server import ForgeServer, conformance_dir, fast_retry_config, github_environment
from testing.repo import commit, make_repo


def _finding(severity: Severity) -> Finding:
    return Finding(id=severity.value, finding_class=FindingClass.CORRECTNESS, severity=severity,
                   category="correctness", title=f"a {severity.value} problem", body="", source="builtin")


def test_each_distinct_patch_with_request_changes_is_one_round() -> None:
    history = record((), RoundEntry("a", "p1", "request_changes"))
    history = record(history, RoundEntry("a", "p1", "request_changes"))  # a re-run: same round
    history = record(history, RoundEntry("b", "p2", "request_changes"))
    history = record(history, RoundEntry("c", "p3", "approve"))
    assert count_rounds(history) == 2
    assert [entry.patch_sha256 for entry in history] == ["p1", "p2", "p3"]


def test_a_blocked_run_consumes_no_round_and_keeps_the_history() -> None:
    history = record((), RoundEntry("a", "p1", "request_changes"))
    after = record(history, RoundEntry("a", "p1", "blocked"))
    assert after == history
    assert count_rounds(record(after, RoundEntry("b", "p2", "blocked"))) == 1


def test_the_cap_gives_up_on_the_still_open_blocker_and_major_findings() -> None:
    history = (RoundEntry("a", "p1", "request_changes"), RoundEntry("b", "p2", "request_changes"))
    blocking = [_finding(Severity.BLOCKER), _finding(Severity.MAJOR), _finding(Severity.MINOR)]
    rounds = decide_rounds(history, RoundEntry("c", "p3", "request_changes"), 3, blocking)
    assert rounds.counted == 3 and rounds.gave_up
    assert [item.severity for item in rounds.given_up_findings] == [Severity.BLOCKER, Severity.MAJOR]
    under = decide_rounds(history[:1], RoundEntry("c", "p3", "request_changes"), 3, blocking)
    assert under.counted == 2 and not under.gave_up and under.given_up_findings == ()
    approved = decide_rounds(history, RoundEntry("c", "p3", "approve"), 3)
    assert not approved.gave_up


@pytest.mark.skipif(conformance_dir() is None, reason="../shared/conformance is absent: the stand-in "
                    "cannot validate check-run bodies")
def test_three_pushes_count_three_rounds_and_the_third_hits_the_cap(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"repro/case.txt": "one\n"}).path
    with ForgeServer() as server:
        env = github_environment(server, tmp_path)
        config = str(fast_retry_config(tmp_path))
        first = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        commit(repo, {"repro/case.txt": "two\n"}, "second push")
        second = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        again = run_cli(repo, "run", "--no-verify", "--config", config, env=env)  # same patch: same round
        commit(repo, {"repro/case.txt": "three\n"}, "third push")
        third = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
    assert [first.returncode, second.returncode, again.returncode, third.returncode] == [1, 1, 1, 1]
    state = server.state
    assert len(state.comments) == 1
    body = next(iter(state.comments.values()))["body"]
    metadata = parse_metadata(body)
    assert metadata is not None and MARKER in body
    assert [entry.verdict for entry in metadata.rounds] == ["request_changes"] * 3
    assert metadata.head_sha == third.report()["target"]["head_sha"]
    assert body.startswith("REVIEW: REQUEST CHANGES\n")
    assert "Review round 3 of 3: the review loop gave up (label `needs-human-review`)" in body
    assert "/repro/case.txt) Reproduction files are part of the change\\\n  **blocks** · major · `process/repro-in-diff`" in body
    assert state.labels == ["needs-human-review"]
    assert "the review loop gave up" in (third.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "Review round 2 of 3" not in body


def test_an_approval_after_the_cap_takes_the_label_off(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"repro/case.txt": "one\n"}).path
    with ForgeServer() as server:
        env = github_environment(server, tmp_path)
        config = str(fast_retry_config(tmp_path, extra="[review]\nmax_rounds = 1\n"))
        capped = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        labelled = list(server.state.labels)
        commit(repo, {"repro/case.txt": None}, "drop the reproduction files")
        approved = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
        approved_again = run_cli(repo, "run", "--no-verify", "--config", config, env=env)
    assert (capped.returncode, approved.returncode, approved_again.returncode) == (1, 0, 0), approved.stdout
    assert labelled == ["needs-human-review"]
    assert server.state.labels == []
    assert len(server.state.posts("DELETE", r"/labels/needs-human-review$")) == 1


def test_max_rounds_below_one_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"}).path
    result = run_cli(repo, "run", "--no-verify", "--max-rounds", "0")
    assert result.returncode == 2
    assert "--max-rounds: expected a whole number of at least 1" in result.stderr
