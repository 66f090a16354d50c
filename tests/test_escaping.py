"""Each sink's escaping as properties over any text: what the branch or a model writes stays
data in the CI log, in Markdown and in XML, and known credential formats never pass."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reviewgate.ci.context import CiContext
from reviewgate.escaping import (
    ZERO_WIDTH_SPACE,
    for_runner,
    markdown_cell,
    markdown_code,
    markdown_text,
    mask,
    runner_line,
    xml_text,
)
from reviewgate.report.base import SinkContext
from reviewgate.report.console import ConsoleSink
from reviewgate.report.inline_comments import render_inline
from reviewgate.report.junit import render_junit
from reviewgate.report.pr_comment import render_comment
from reviewgate.report.summary import render_summary
from reviewgate.result import GateResult
from testing.markdown_render import render_gfm
from testing.results import sample_finding, sample_result

# Text that mixes the pieces an attacker would use with anything else.
HOSTILE = st.lists(
    st.sampled_from(["::", "::error::x", "##[", "\n", "\r", "\r\n", " ", "\t", "\u00a0", "<script>", "</script>",
                     "<img src=x onerror=alert(1)>", "&amp;", "@octocat", "@org/team", "`", "``", "|", "\\",
                     "\x1b[31m", "\x1b]0;title\x07", "\x00", "\x7f", "\u202e", "a",
                     "www.", "https://", "evil.example", "x@y.io", "mailto:", "0.AL"])
    | st.text(),
    max_size=12,
).map("".join)

GITHUB_TOKEN = "gh" + "p_" + "Pr0pertyT3st" * 3
# A live mention as GitHub finds one in rendered text: `@` and a name after anything but an ASCII
# letter or digit (a `_` closing emphasis, a backtick, another `@`, a letter outside ASCII).
MENTION = re.compile(r"(?<![A-Za-z0-9])@[A-Za-z0-9_]")


def runner_sees_a_command(text: str) -> bool:
    lines = re.split(r"\r\n|\r|\n", text)
    return any(line.lstrip().startswith("::") or "##[" in line for line in lines)


@given(HOSTILE)
def test_runner_text_never_starts_a_command_nor_holds_escapes(text: str) -> None:
    shown = for_runner(text)
    assert not runner_sees_a_command(shown)
    assert "\x1b" not in shown and "\x00" not in shown


@given(HOSTILE)
def test_runner_line_is_one_line(text: str) -> None:
    shown = runner_line(text)
    assert "\n" not in shown and "\r" not in shown
    assert not runner_sees_a_command(shown)


@given(HOSTILE)
def test_markdown_text_has_no_html_no_mention_no_escape(text: str) -> None:
    shown = markdown_text(text)
    assert "<" not in shown and ">" not in shown
    assert "\x1b" not in shown and "\u202e" not in shown
    assert not MENTION.search(shown.replace("\\@", "@"))  # as it reads: the escape shows `@`


@given(HOSTILE)
def test_a_table_cell_stays_one_cell(text: str) -> None:
    shown = markdown_cell(text)
    assert "\n" not in shown and "\r" not in shown
    assert re.search(r"(?<!\\)(?:\\\\)*\|", shown) is None  # every pipe is escaped


@given(HOSTILE)
def test_a_code_span_is_never_closed_early(text: str) -> None:
    shown = markdown_code(text)
    fence = re.match(r"`+", shown)
    assert fence and shown.endswith(fence.group(0))
    inner = shown[len(fence.group(0)) : -len(fence.group(0))]
    assert fence.group(0) not in re.findall(r"`+", inner)
    assert "\n" not in shown and "\x1b" not in shown


@given(HOSTILE)
def test_xml_text_parses_as_xml_1_0(text: str) -> None:
    element = ElementTree.Element("case", name=xml_text(text))
    element.text = xml_text(text)
    parsed = ElementTree.fromstring(ElementTree.tostring(element, encoding="unicode"))  # raises if not XML 1.0
    # The text survives the round trip whole, but for the line-end normalisation XML prescribes.
    assert (parsed.text or "") == xml_text(text).replace("\r\n", "\n").replace("\r", "\n")


def is_xml_char(code: int) -> bool:
    """XML 1.0, production [2] Char, as the specification writes it."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def test_xml_text_drops_exactly_the_characters_xml_1_0_forbids() -> None:
    # Every code point but the surrogates (`printable` turns those into U+FFFD before the filter).
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF)
    assert xml_text(every) == "".join(char for char in every if is_xml_char(ord(char)))


@given(HOSTILE, HOSTILE)
def test_a_known_token_is_masked_wherever_it_sits(before: str, after: str) -> None:
    assert GITHUB_TOKEN not in mask(f"{before} {GITHUB_TOKEN} {after}")


def hostile_result(tmp_path: Path, title: str, path: str) -> GateResult:
    finding = sample_finding(path=path, title=title, body=f"{title}\nsee {GITHUB_TOKEN}", source="llm")
    return sample_result(tmp_path, findings=(finding,))


LINKED = CiContext(provider="github", server_url="https://github.com", repository="octo/app")


@settings(deadline=None)  # three renderings and three parses a case: slower than the default 200 ms on a busy runner
@given(title=HOSTILE, path=HOSTILE.filter(bool))
# Markdown ends a piece of text right before the `@`: emphasis closed by `_`, a code span.
@example(title="_0_@octocat", path="::")
@example(title="`x`@octocat", path="a.py")
@example(title="@@octocat é@octocat", path="a.py")
# A backtick the title leaves open would pair with one of the markup after it.
@example(title="@`", path="::")
# A body line that opens a fence (a model may quote code): its block, with a language, is code too.
@example(title="```::error::x\n", path="::")
# GFM autolinks `mailto:` followed by an address, even one whose `@` follows no letter.
@example(title="mailto:::@octocat", path="::")
def test_every_sink_keeps_titles_and_file_names_as_data(title: str, path: str) -> None:
    result = hostile_result(Path("/nonexistent"), f"{title} <script>alert(1)</script> @octocat", path)
    # Rendered as GitHub renders Markdown: no element but ours, no live mention (inside a code
    # span or block nothing is HTML or a mention), and a link goes nowhere but to the file at the head.
    for text in (render_summary(result, []), render_comment(result, []), render_comment(replace(result, ci=LINKED), [])):
        html = render_gfm(text)
        assert "<script" not in html and "\x1b" not in text
        assert not MENTION.search(re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.DOTALL))
        assert all(address.startswith(f"https://github.com/octo/app/blob/{'c' * 40}/")
                   for address in re.findall(r'<a href="([^"]*)"', html))
        assert GITHUB_TOKEN not in text
    junit = render_junit(result)
    ElementTree.fromstring(junit.encode("utf-8"))
    assert GITHUB_TOKEN not in junit
    stdout = io.StringIO()
    ConsoleSink().publish(replace(result, ci=CiContext(provider="github")), SinkContext(stdout=stdout))
    lines = stdout.getvalue().splitlines()
    assert lines[0].startswith("::stop-commands::") and lines[-1].startswith("::")
    assert not runner_sees_a_command("\n".join(lines[1:-1]))
    assert GITHUB_TOKEN not in stdout.getvalue()


@pytest.mark.parametrize("address", ["https://evil.example/login", "www.evil.example", "WWW.evil.example/x",
                                     "ftp://evil.example", "help@evil.example", "mailto:help@evil.example",
                                     "xmpp:help@evil.example"])
def test_an_address_in_a_title_or_body_is_no_live_link(tmp_path: Path, address: str) -> None:
    result = replace(hostile_result(tmp_path, f"Sign in at {address} to see the fix", "a.py"), ci=LINKED)
    finding = result.findings[0]
    rendered = [render_summary(result, []), render_comment(result, []), render_inline(finding, "github")]
    for text in rendered:
        html = render_gfm(text)
        assert all(link.startswith(f"https://github.com/octo/app/blob/{'c' * 40}/")
                   for link in re.findall(r'<a href="([^"]*)"', html)), html
        # The words still read as written (a zero-width space is invisible).
        assert f"Sign in at {address} to see the fix" in text.replace(ZERO_WIDTH_SPACE, "").replace("\\@", "@")


def test_hostile_title_in_the_summary_reads_as_text(tmp_path: Path) -> None:
    result = hostile_result(tmp_path, "Fix <b>this</b> for @octocat and @org/team \x1b[2J`x` | y", "a|b`.py")
    text = render_summary(replace(result, ci=LINKED), [])
    assert "Fix &lt;b&gt;this&lt;/b&gt; for @\u200boctocat and @\u200borg/team `x` | y" in text
    assert f"[``a|b`.py:4``](https://github.com/octo/app/blob/{'c' * 40}/a%7Cb%60.py#L4)" in text


# One value of each kind, built in pieces so the file itself holds none.
_SAMPLES = {
    "private key block": "-----BEGIN RSA " + "PRIVATE KEY-----",
    "AWS access key id": "AKIA" + "Q" * 16,
    "GitHub token": "ghp" + "_" + "a1" * 18,
    "GitLab token": "glpat" + "-" + "x" * 20,
    "Slack token": "xoxb" + "-" + "1" * 12,
    "Google API key": "AIza" + "B" * 35,
    "Stripe live key": "sk" + "_live_" + "c" * 24,
    "Anthropic API key": "sk-" + "ant-" + "d" * 24,
    "OpenAI API key": "sk-" + "proj-" + "e" * 20 + "T3Blbk" + "FJ" + "f" * 20,
    "npm token": "npm" + "_" + "g" * 36,
    "OpenAI-style key": "sk-" + "h" * 24,
    "JSON web token": "eyJ" + "a" * 10 + ".eyJ" + "b" * 10 + "." + "c" * 10,
}


def test_every_masked_format_has_its_literal_prefilter_and_is_still_masked() -> None:
    from reviewgate.secret_formats import MASKED_PATTERNS, REQUIRED_LITERALS, mask_known_formats

    assert {kind for kind, _ in MASKED_PATTERNS} == set(REQUIRED_LITERALS) == set(_SAMPLES)
    for kind, sample in _SAMPLES.items():
        masked, kinds = mask_known_formats(f"before {sample} after")
        assert sample not in masked and kinds, kind


def test_a_backtick_a_title_leaves_open_stays_a_backtick_and_the_markup_after_it_reads_as_ours() -> None:
    assert markdown_text("use `x` and ` alone") == "use `x` and \\` alone"
    assert markdown_text("``a`b`` then `") == "``a`b`` then \\`"
    # A paragraph break ends a span: each paragraph pairs its own.
    assert markdown_text("open `\n\nclose `") == "open \\`\n\nclose \\`"
    html = render_gfm(f"- {markdown_text('@` title')} `rule/id` **blocks**")
    assert "<code>rule/id</code>" in html and "<strong>blocks</strong>" in html
