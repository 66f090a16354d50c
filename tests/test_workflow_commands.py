"""GitHub's escaping rules as properties: untrusted text never yields a second command."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reviewgate.ci.workflow_commands import command, escape_data, escape_property
from reviewgate.escaping import plain
from reviewgate.report.github_annotations import annotation_line
from reviewgate.report.plain_text import markdown_to_plain
from testing.results import sample_finding


def unescape_data(text: str) -> str:
    """The runner's reverse mapping (actions/runner ActionCommand.UnescapeValue)."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return unescape_data(text.replace("%3A", ":").replace("%2C", ","))


@given(st.text())
def test_data_stays_on_one_line_and_round_trips(text: str) -> None:
    escaped = escape_data(text)
    assert "\n" not in escaped and "\r" not in escaped
    assert unescape_data(escaped) == text


@given(st.text())
def test_property_values_cannot_close_the_property_list(text: str) -> None:
    escaped = escape_property(text)
    assert not {"\n", "\r", ":", ","} & set(escaped)
    assert unescape_property(escaped) == text


@given(title=st.text(), body=st.text(), path=st.text(min_size=1))
def test_an_annotation_is_exactly_one_command_line(title: str, body: str, path: str) -> None:
    line = annotation_line(sample_finding(path=path, title=title or "t", body=body), "error")
    assert "\n" not in line and "\r" not in line
    assert line.startswith("::error ")
    properties, _, message = line[len("::error ") :].partition("::")
    # Shown as text: what reaches the runner is the message without its Markdown, control bytes or credentials.
    assert unescape_data(message) == plain(markdown_to_plain(body or title or "t").strip() or title or "t")
    for item in properties.split(","):
        key, _, value = item.partition("=")
        assert key in {"file", "line", "endLine", "title"}
        assert ":" not in value


def test_command_without_properties() -> None:
    assert command("group", "Verify: test") == "::group::Verify: test"
    assert command("error", "50%\ndone", {"file": "a,b:c.py", "line": 3}) == "::error file=a%2Cb%3Ac.py,line=3::50%25%0Adone"
