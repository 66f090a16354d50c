"""Where Markdown is not rendered (GitHub annotations from workflow commands and the check run,
SARIF's message.text), a finding's Markdown is shown as the plain text it means."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from reviewgate.ci.context import CiContext
from reviewgate.report.base import SinkContext
from reviewgate.report.github_annotations import GithubAnnotationsSink
from reviewgate.report.github_checks import check_annotation
from reviewgate.report.plain_text import markdown_to_plain
from testing.results import sample_finding, sample_result


@pytest.mark.parametrize(("markdown", "plain"), [
    ("use `load_settings` at app/settings.py:4", "use load_settings at app/settings.py:4"),
    ("``a ` b`` and `**not bold**`", "a ` b and **not bold**"),
    ("**Never** *ever* catch `Exception` here", "Never ever catch Exception here"),
    ("**a `b` c**", "a b c"),
    ("see [the docs](https://example.com/a) or [https://x.y](https://x.y)", "see the docs (https://example.com/a) or https://x.y"),
    ("![diagram](https://example.com/d.png)", "diagram"),
    ("repeats:\n\n```python\nx = 1\n```\n… 2 more line(s)", "repeats:\n\nx = 1\n… 2 more line(s)"),
    ("> quoted\n## Heading", "quoted\nHeading"),
    ("2*3*4, snake_case_name, __init__, _private", "2*3*4, snake_case_name, __init__, _private"),
    ("an escaped \\*star\\* and a lone ` backtick", "an escaped *star* and a lone ` backtick"),
])
def test_markdown_reads_as_plain_text(markdown: str, plain: str) -> None:
    assert markdown_to_plain(markdown) == plain


FINDING = sample_finding(title="Repeats code: use `load_settings` at app/settings.py:4",
                         body="**Call** `load_settings` instead; see [the docs](https://example.com/dry).")


def test_check_run_annotations_are_plain_text() -> None:
    annotation = check_annotation(FINDING, blocking=True)
    assert annotation is not None
    assert annotation["title"] == ("[major correctness/swallowed-exception] Repeats code: use load_settings at "
                                   "app/settings.py:4")
    assert annotation["message"] == "Call load_settings instead; see the docs (https://example.com/dry)."


def test_workflow_command_annotations_are_plain_text(tmp_path: Path) -> None:
    stdout = io.StringIO()
    result = sample_result(tmp_path, findings=(FINDING,), ci=CiContext(provider="github"))
    GithubAnnotationsSink().publish(result, SinkContext(stdout=stdout))
    [line] = stdout.getvalue().splitlines()
    # A property's `:` is written %3A (the runner's escaping); no backtick or ** is left.
    assert line.endswith("title=[major correctness/swallowed-exception] Repeats code%3A use load_settings at "
                         "app/settings.py%3A4::Call load_settings instead; see the docs (https://example.com/dry).")
