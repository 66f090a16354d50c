"""The PR comment as a reader meets it, rendered as GitHub renders Markdown (GFM), with 0, 3 and
120 findings: the verdict and the counts first, the blocking findings next with each place a
link to the line at the head, the rest folded; within the size limit, whole entries are left
out from the end with a line saying what and where, never a block cut in half."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from reviewgate.ci.context import CiContext
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.forge.session import ForgeRun
from reviewgate.forge.settings import ForgeSettings
from reviewgate.report.github_checks import MAX_OUTPUT_CHARS, output_summary
from reviewgate.report.pr_comment import MAX_COMMENT_BYTES, render_comment
from reviewgate.report.summary import render_summary
from reviewgate.result import GateResult
from testing.markdown_render import half_table_rows, lines_before_first_fold, render_gfm, unclosed_details
from testing.results import SAMPLE_FINDINGS, sample_finding, sample_result

GITHUB = CiContext(provider="github", server_url="https://github.com", repository="octo/app",
                   run_url="https://github.com/octo/app/actions/runs/42")
GITLAB = CiContext(provider="gitlab", server_url="https://gitlab.example.com", repository="group/app",
                   run_url="https://gitlab.example.com/group/app/-/jobs/7")
HEAD = "c" * 40
# A repeated block of code as the duplicate-code lens quotes it: 12 lines, fenced.
QUOTED_CODE = "\n".join(f"    total_{index} = compute_the_running_total(accounts, ledger_entries, period={index})"
                        for index in range(12))


def _on_github(findings: tuple[Finding, ...], ci: CiContext = GITHUB) -> GateResult:
    forge = ForgeRun(ci.provider, ForgeSettings(), "http://127.0.0.1", ci.repository or "", 7, "token")
    return replace(sample_result(Path("/nonexistent"), findings=findings, ci=ci), forge=forge)


def _many(count: int) -> tuple[Finding, ...]:
    """`count` duplicate-code findings as a large change gets them, all but two blocking."""
    return tuple(
        sample_finding(
            path=f"pkg/mod_{index:03}.py", line=7, severity=Severity.MAJOR if index < count - 2 else Severity.MINOR,
            finding_class=FindingClass.SYSTEMATIC, category="reuse", rule="reuse/duplicate-code",
            title=f"Repeats code: use `helper_{index}` at pkg/base.py:{index + 3} ({'a long name ' * 12})",
            body=f"This repeats 14 lines of `pkg/base.py:{index + 3}`:\n\n```\n{QUOTED_CODE}\n```\n… 2 more line(s)",
        )
        for index in range(count))


def _assert_complete(text: str) -> None:
    """Every `<details>` closed, every table row whole, and the text ends on a finished block."""
    assert unclosed_details(text) == 0
    assert half_table_rows(text) == []
    assert text.endswith("\n") and not text.endswith("\n\n\n")
    assert text.rstrip().splitlines()[-1] == "</details>"  # the folded help, last


def _blocking_links(result: GateResult, html: str) -> dict[str, str | None]:
    """Each blocking finding's place as shown: the address it links to, None when shown unlinked;
    findings the comment left out are not in the map."""
    places: dict[str, str | None] = {}
    for finding in result.verdict.blocking:
        shown = f"<code>{finding.location}</code>"
        if shown not in html:
            continue
        linked = re.search(rf'<a href="([^"]*)">{re.escape(shown)}</a>', html)
        places[finding.location] = linked.group(1) if linked else None
    return places


def test_with_no_findings_the_comment_says_so_in_three_lines() -> None:
    text = render_comment(_on_github(()), [], check_run_annotated=True)
    html = render_gfm(text)
    _assert_complete_without_help(text)
    assert lines_before_first_fold(html)[:4] == [
        "REVIEW: APPROVE", "✅ reviewgate: approved", "Nothing in this change blocks merging.", "No findings."]
    assert "How to answer a finding" not in text  # nothing to answer


def _assert_complete_without_help(text: str) -> None:
    assert unclosed_details(text) == 0 and half_table_rows(text) == []


def test_with_three_findings_the_verdict_counts_and_blocking_findings_fit_one_screen() -> None:
    result = _on_github(SAMPLE_FINDINGS[:3])
    text = render_comment(result, [], check_run_annotated=True)
    html = render_gfm(text)
    _assert_complete(text)
    above = lines_before_first_fold(html)
    assert len(above) <= 25, above
    assert above[:4] == ["REVIEW: REQUEST CHANGES", "❌ reviewgate: changes requested",
                         "2 findings must be fixed before merge. Fix each blocking finding (marked blocks) and push again.",
                         "3 findings: 2 major · 1 minor. 2 block merging."]
    # Both blocking findings, with what to do about them, before anything folded.
    for item in result.verdict.blocking:
        assert any(item.title in line for line in above) and any(item.body.replace("`", "") in line for line in above)
    links = _blocking_links(result, html)
    assert links == {
        "app/jobs.py:4": f"https://github.com/octo/app/blob/{HEAD}/app/jobs.py#L4",
        "repro/case.py": f"https://github.com/octo/app/blob/{HEAD}/repro/case.py",
    }
    # The minor one is folded, and so is the help, last.
    minor = html.index("Comment narrates the change")
    assert html.index("<details>") < minor
    assert html.rindex("<summary>How to answer a finding</summary>") > minor


def test_with_120_findings_the_comment_stays_under_the_limit_and_ends_on_a_whole_block() -> None:
    result = _on_github(_many(120))
    assert len(render_summary(result).encode("utf-8")) > 2 * MAX_COMMENT_BYTES  # the whole would not fit
    text = render_comment(result, [], check_run_annotated=True)
    assert len(text.encode("utf-8")) <= MAX_COMMENT_BYTES
    _assert_complete(text)
    html = render_gfm(text)
    assert len(lines_before_first_fold(html)) <= 25
    links = _blocking_links(result, html)
    assert len(links) >= 100, "the blocking places are kept before the bodies"
    for location, address in links.items():
        path, line = location.split(":")
        assert address == f"https://github.com/octo/app/blob/{HEAD}/{path}#L{line}", location
    # What is shown is the first blocking findings in order, then one line says what was left out and where.
    shown = [item.location for item in result.verdict.blocking if item.location in links]
    assert shown == [item.location for item in result.verdict.blocking][:len(shown)]
    left_out = next(line for line in text.splitlines() if line.startswith("**Left out"))
    assert left_out.startswith("**Left out to stay within the 65,536-character limit of a comment:** the details of 108 "
                               "more blocking findings")
    assert "in the check run `reviewgate` (an annotation on each line)" in left_out
    assert ("in `summary.md` and `report.json` of the `reviewgate` artifact of "
            "[this run](https://github.com/octo/app/actions/runs/42)") in left_out


def test_a_comment_far_over_the_limit_leaves_out_whole_entries_and_says_how_many() -> None:
    result = _on_github(_many(600))
    text = render_comment(result, [], check_run_annotated=True)
    assert len(text.encode("utf-8")) <= MAX_COMMENT_BYTES
    _assert_complete(text)
    left_out = next(line for line in text.splitlines() if line.startswith("**Left out"))
    counted = re.search(r"\*\* (\d+) of 588 more blocking findings, 2 `reuse/duplicate-code` findings, 1 product question, "
                        r"the reviewers table, 1 file not reviewed\. Read them", left_out)
    assert counted, left_out
    entries = sum(1 for line in text.splitlines() if line.startswith("- [`pkg/mod_"))
    assert entries == 598 - int(counted.group(1))


def test_the_check_run_summary_keeps_to_its_own_limit_the_same_way() -> None:
    result = _on_github(_many(600))
    summary = output_summary(result, [])
    assert len(summary.encode("utf-8")) <= MAX_OUTPUT_CHARS
    _assert_complete(summary)
    assert "as an annotation on its line in this check run" in summary


def test_gitlab_links_go_to_the_project_at_the_head_and_paths_are_percent_encoded() -> None:
    odd = sample_finding(path="app/a b/(x)@[y].py", line=3)
    spanning = sample_finding(path="app/jobs.py", line=4, title="Spans lines").with_changes(end_line=9)
    result = _on_github((odd, spanning), ci=GITLAB)
    html = render_gfm(render_comment(result, []))
    assert _blocking_links(result, html) == {
        "app/a b/(x)@[y].py:3": f"https://gitlab.example.com/group/app/-/blob/{HEAD}/app/a%20b/%28x%29%40%5By%5D.py#L3",
        "app/jobs.py:4": f"https://gitlab.example.com/group/app/-/blob/{HEAD}/app/jobs.py#L4-9",
    }
    github = render_gfm(render_comment(replace(result, ci=GITHUB), []))
    assert f'<a href="https://github.com/octo/app/blob/{HEAD}/app/jobs.py#L4-L9">' in github


def test_without_the_forges_address_places_are_plain_text() -> None:
    result = sample_result(Path("/nonexistent"), ci=CiContext(provider="github"))  # no repository given
    html = render_gfm(render_summary(result))
    assert "<a href" not in html and "<code>app/jobs.py:4</code>" in html


RULES = [  # (rule, class, severity, how many): 10 block, 112 do not, over four rules
    ("correctness/swallowed-exception", FindingClass.CORRECTNESS, Severity.MAJOR, 10),
    ("readability/narrating-comment", FindingClass.READABILITY, Severity.MINOR, 50),
    ("reuse/duplicate-code", FindingClass.SYSTEMATIC, Severity.MINOR, 40),
    ("tests/missing-test", FindingClass.CORRECTNESS, Severity.NIT, 15),
    ("readability/long-function", FindingClass.READABILITY, Severity.MAJOR, 7),
]


def _mixed() -> tuple[Finding, ...]:
    return tuple(
        sample_finding(path=f"pkg/{rule.replace('/', '_')}_{index:03}.py", line=3, severity=severity,
                       finding_class=finding_class, category=rule.split("/")[0], rule=rule,
                       title=f"{rule} number {index}", body=f"Why {rule} {index} matters.")
        for rule, finding_class, severity, count in RULES for index in range(count))


def _folds(html: str) -> list[tuple[str, str]]:
    """Each `<details>` block's summary and content, in order."""
    return re.findall(r"<details><summary>(.*?)</summary>(.*?)</details>", html, flags=re.DOTALL)


@pytest.mark.parametrize("render", ["comment", "summary"])
def test_with_122_findings_the_blocking_come_first_then_one_fold_per_rule(render: str) -> None:
    result = _on_github(_mixed())
    assert len(result.findings) == 122 and len(result.verdict.blocking) == 10
    text = render_comment(result, []) if render == "comment" else render_summary(result)
    assert len(text.encode("utf-8")) <= MAX_COMMENT_BYTES
    html = render_gfm(text)
    # The counts add up to the total; how many block is said apart.
    counts = next(line for line in text.splitlines() if line.startswith("122 findings: "))
    assert counts == "122 findings: 17 major · 90 minor · 15 nit. **10 block merging.**"
    # The blocking findings, open, before any fold.
    first_fold = html.index("<details>")
    assert all(f"correctness/swallowed-exception number {index}<" in html[:first_fold] for index in range(10))
    # Then one fold per rule of the rest, the most severe rule first, each holding its rule's findings only.
    by_rule = [(summary, content) for summary, content in _folds(html) if "not blocking" in summary]
    assert [summary for summary, _ in by_rule] == [
        "<code>readability/long-function</code>: 7 findings (7 major), not blocking",
        "<code>readability/narrating-comment</code>: 50 findings (50 minor), not blocking",
        "<code>reuse/duplicate-code</code>: 40 findings (40 minor), not blocking",
        "<code>tests/missing-test</code>: 15 findings (15 nit), not blocking",
    ]
    for (summary, content), (rule, _, _, count) in zip(by_rule, sorted(RULES[1:], key=lambda rule: rule[0]), strict=True):
        assert re.findall(r" number \d+", content) == [f" number {index}" for index in range(count)], summary
        assert content.count(f"<code>{rule}</code>") == count


def test_a_rule_id_from_a_model_stays_text_in_its_folds_summary() -> None:
    hostile = sample_finding(path="app/a.py", line=1, severity=Severity.MINOR, finding_class=FindingClass.READABILITY,
                             category="x", rule="<img src=x onerror=alert(1)>@octocat", source="llm")
    text = render_comment(_on_github((hostile,)), [])
    html = render_gfm(text)
    assert "<img" not in html
    assert "<summary><code>&lt;img src=x onerror=alert(1)&gt;@octocat</code>: 1 finding (1 minor), not blocking" in html
