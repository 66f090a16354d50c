"""The summary comment's text: first line, hidden metadata, the round cap, product questions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reviewgate.ci.context import CiContext
from reviewgate.forge.metadata import MARKER, parse_metadata
from reviewgate.forge.rounds import RoundEntry, decide_rounds
from reviewgate.forge.session import ForgeRun
from reviewgate.forge.settings import ForgeSettings
from reviewgate.gate import Decision, Verdict
from reviewgate.report.pr_comment import render_comment
from testing.golden import check_golden
from testing.results import sample_result

GITHUB = CiContext(provider="github", server_url="https://github.com", repository="octo/app",
                   run_url="https://github.com/octo/app/actions/runs/42")


def test_the_comment_at_the_round_cap(tmp_path: Path) -> None:
    result = sample_result(tmp_path, ci=GITHUB)
    history = (RoundEntry("1" * 40, "e" * 64, "request_changes"), RoundEntry("2" * 40, "f" * 64, "request_changes"))
    entry = RoundEntry(result.target.head_sha, result.target.patch_sha256, result.verdict.decision.value)
    rounds = decide_rounds(history, entry, 3, result.verdict.blocking)
    forge = ForgeRun("github", ForgeSettings(label="stuck"), "http://127.0.0.1", "octo/app", 7, "secret-token")
    text = render_comment(replace(result, forge=forge, rounds=rounds), [])
    lines = text.splitlines()
    assert lines[0] == "REVIEW: REQUEST CHANGES" and lines[2] == MARKER
    metadata = parse_metadata(text)
    assert metadata is not None
    assert (metadata.head_sha, metadata.patch_sha256, metadata.verdict) == ("c" * 40, "d" * 64, "request_changes")
    assert len(metadata.rounds) == 3
    assert "secret-token" not in text and "secret-token" not in repr(forge)
    assert "Should empty input be an error?" in text  # the product question, listed, not blocking
    check_golden("pr_comment.md", text)


def test_a_blocked_review_is_never_worded_as_approval(tmp_path: Path) -> None:
    result = sample_result(tmp_path)
    blocked = replace(result, verdict=Verdict(Decision.BLOCKED, None, (), ("reviewer llm: timed out",)))
    assert render_comment(blocked, []).startswith("REVIEW: BLOCKED\n")


def test_a_huge_review_stays_under_githubs_comment_limit(tmp_path: Path) -> None:
    finding = sample_result(tmp_path).findings[0]
    many = tuple(finding.with_changes(id=f"id{index}", title=f"{'ü' * 400} {index}", path=f"app/f{index}.py")
                 for index in range(400))
    result = sample_result(tmp_path, findings=many)
    entry = RoundEntry(result.target.head_sha, result.target.patch_sha256, "request_changes")
    rounds = decide_rounds([RoundEntry(f"{index:040}", f"{index:064}", "request_changes") for index in range(60)],
                           entry, 3, result.verdict.blocking)
    text = render_comment(replace(result, rounds=rounds), [])
    assert len(text.encode("utf-8")) <= 65536
    left_out = next(line for line in text.splitlines() if line.startswith("**Left out"))
    assert " of 390 more blocking findings" in left_out and left_out.endswith(
        "Read them in `summary.md` and `report.json` of the `reviewgate` artifact of this run.")
    assert text.rstrip().endswith("</details>")
    metadata = parse_metadata(text)
    assert metadata is not None and len(metadata.rounds) == 50  # the history is bounded too
