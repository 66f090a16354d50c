"""A reused chunk answer on a head where its hunks moved: lines inside a hunk move with it; a
line outside every hunk of the chunk has no known new place and goes to file level, never to
whatever line now has its old number."""

from __future__ import annotations

from reviewgate.reviewers.model.rebasing import rebase_findings

SUGGESTION = {"start_line": 12, "end_line": 13, "original": "a\nb", "replacement": "c"}


def test_lines_move_with_their_hunk_and_a_line_outside_every_hunk_goes_to_file_level() -> None:
    findings = (
        {"path": "app/a.py", "line": 12, "end_line": 14, "suggestion": SUGGESTION},  # in the first hunk
        {"path": "./app/a.py", "line": 31, "end_line": None, "suggestion": None},  # in the second
        {"path": "app/a.py", "line": 40, "end_line": 41, "suggestion": SUGGESTION},  # in no hunk
        {"path": "app/b.py", "line": 5, "end_line": None, "suggestion": None},  # another file
        {"path": None, "line": None, "end_line": None, "suggestion": None},  # the whole change
    )
    rebased = rebase_findings(findings, {"app/a.py": ((10, 20), (30, 33))}, {"app/a.py": ((17, 27), (45, 48))})
    assert [(item["line"], item["end_line"]) for item in rebased.findings] == [
        (19, 21), (46, None), (None, None), (5, None), (None, None)]
    assert rebased.findings[0]["suggestion"] == {**SUGGESTION, "start_line": 19, "end_line": 20}
    assert rebased.findings[2]["suggestion"] is None
    assert rebased.unplaced == 1


def test_an_end_line_or_suggestion_reaching_past_its_hunk_is_not_carried_over() -> None:
    findings = ({"path": "a.py", "line": 19, "end_line": 25,
                 "suggestion": {"start_line": 19, "end_line": 25, "original": "x", "replacement": "y"}},)
    rebased = rebase_findings(findings, {"a.py": ((10, 20),)}, {"a.py": ((11, 21),)})
    assert (rebased.findings[0]["line"], rebased.findings[0]["end_line"], rebased.findings[0]["suggestion"]) == (
        20, None, None)


def test_unmoved_hunks_leave_the_answer_as_it_was() -> None:
    findings = ({"path": "a.py", "line": 99, "end_line": None, "suggestion": None},)
    spans = {"a.py": ((10, 20),)}
    assert rebase_findings(findings, spans, dict(spans)).findings == findings
