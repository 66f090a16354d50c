"""Code quoted in a finding's body reads verbatim where people read it: the PR comment, the
summary and an inline comment, rendered as GitHub renders Markdown (GFM). Inside a fenced code
block nothing is decoded, so the code must not be HTML-escaped there; outside the fences the
body stays escaped text (no HTML, no mention)."""

from __future__ import annotations

import html as html_module
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewgate.ci.context import CiContext
from reviewgate.escaping import markdown_body
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.forge.session import ForgeRun
from reviewgate.forge.settings import ForgeSettings
from reviewgate.report.inline_comments import render_inline
from reviewgate.report.pr_comment import render_comment
from reviewgate.report.summary import render_summary
from testing.markdown_render import render_gfm
from testing.results import sample_finding, sample_result

GITHUB = CiContext(provider="github", server_url="https://github.com", repository="octo/app",
                   run_url="https://github.com/octo/app/actions/runs/42")
TYPESCRIPT = 'const pick = <T,>(items: Array<T>) => items.filter((item) => item && item.ok);\nif (x > 0 && y < 1) { say("a & b"); }'
PYTHON = 'if x > 0 and y < 1:\n    print("a & b", f"{x!r}")  # `tick` and ``double``'
# Code that holds a fence of its own: it must not close the block it is quoted in.
MARKDOWN = "Example:\n```\n<b>not bold</b> @octocat\n```\n~~~\nstill code\n"
CODES = (TYPESCRIPT, PYTHON, MARKDOWN)


def _findings() -> tuple[Finding, ...]:
    bodies = [
        f"This repeats `app/base.ts:3` <script>alert(1)</script> @octocat:\n\n```ts\n{TYPESCRIPT}\n```\n… 2 more line(s)",
        f"The same as\n\n````python\n{PYTHON}\n````",
        f"Quoted with tildes:\n\n~~~~markdown\n{MARKDOWN}~~~~\nand prose after it <i>x</i>.",
    ]
    return tuple(
        sample_finding(path=f"app/mod_{index}.ts", line=3, severity=Severity.MAJOR if index else Severity.MINOR,
                       finding_class=FindingClass.SYSTEMATIC, category="reuse", rule="reuse/duplicate-code",
                       title=f"Repeats code {index}", body=body)
        for index, body in enumerate(bodies))


def _code_blocks(html: str) -> list[str]:
    """The text of each rendered `<pre><code>` block, as a reader sees it (entities decoded once,
    as the browser decodes them)."""
    raw = re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", html, flags=re.DOTALL)
    return [html_module.unescape(block) for block in raw]


def _rendered() -> dict[str, str]:
    findings = _findings()
    forge = ForgeRun("github", ForgeSettings(), "http://127.0.0.1", "octo/app", 7, "token")
    result = replace(sample_result(Path("/nonexistent"), findings=findings, ci=GITHUB), forge=forge)
    texts = {"summary.md": render_summary(result), "the PR comment": render_comment(result, [])}
    texts.update({f"inline comment {index}": render_inline(item, "github") for index, item in enumerate(findings)})
    return {name: render_gfm(text) for name, text in texts.items()}


@pytest.mark.parametrize("name", ["summary.md", "the PR comment", "inline comment 0", "inline comment 1",
                                  "inline comment 2"])
def test_quoted_code_reads_verbatim_and_no_entity_shows(name: str) -> None:
    html = _rendered()[name]
    blocks = _code_blocks(html)
    for block in blocks:
        # What the reader sees holds no entity: `&gt;` in the page would show as `&gt;`.
        assert not re.search(r"&(?:gt|lt|amp|quot|#\d+);", block), block
    wanted = CODES if name in ("summary.md", "the PR comment") else (CODES[int(name[-1])],)
    for code in wanted:
        assert any(block.rstrip("\n") == code.rstrip("\n") for block in blocks), (code, blocks)


@pytest.mark.parametrize(("name", "escaped"), [("summary.md", "&lt;script&gt;"), ("the PR comment", "&lt;script&gt;"),
                                               ("inline comment 0", "&lt;script&gt;"), ("inline comment 2", "&lt;i&gt;")])
def test_outside_the_code_the_body_stays_text(name: str, escaped: str) -> None:
    html = _rendered()[name]
    outside = re.sub(r"<pre><code[^>]*>.*?</code></pre>", "", html, flags=re.DOTALL)
    outside = re.sub(r"<code>.*?</code>", "", outside, flags=re.DOTALL)
    assert "<script" not in outside and "<i>" not in outside and "<b>" not in outside
    assert "@octocat" not in outside  # shown with a zero-width space: no mention
    assert escaped in outside  # shown as text


def test_an_unclosed_fence_runs_to_the_end_and_is_closed() -> None:
    shown = markdown_body("look:\n```js\nif (a < b) {\n")
    html = render_gfm(f"{shown}\n\n<b>after</b>")
    assert _code_blocks(html) == ["if (a < b) {\n"]
    assert "<b>after</b>" in html  # our own text after the body is ours: the body's fence did not swallow it


def test_the_info_string_cannot_carry_markup() -> None:
    shown = markdown_body('```js" onload="x <img>\ncode\n```')
    assert shown.splitlines()[0] == "```js"


BODY_PIECES = ["```", "````", "~~~", "```js", "\n", "   ```\n", "<script>", "</details>", "<b>", "&amp;", "&gt;",
               "@octocat", " ", "`", "x > 0 && y < 1", "=> {", "\r\n", "\x1b[31m", "\u202e", "::error::x"]
BODY = st.lists(st.sampled_from(BODY_PIECES) | st.text(max_size=3), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(BODY)
def test_any_body_stays_data_and_its_fences_close(text: str) -> None:
    """Whatever a body holds, it renders as text and code blocks only, and its code blocks end
    inside it: Markdown of ours that follows it is still Markdown."""
    html = render_gfm(f"{markdown_body(text)}\n\n## ours\n")
    assert html.endswith("<h2>ours</h2>\n")
    outside = re.sub(r"<pre><code[^>]*>.*?</code></pre>", "", html, flags=re.DOTALL)[: -len("<h2>ours</h2>\n")]
    tags = set(re.findall(r"</?([a-z0-9-]+)", outside))
    assert tags <= {"p", "code", "br", "em", "strong", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li",
                    "blockquote", "hr", "s", "pre"}, tags
    assert not re.search(r"(?<![A-Za-z0-9])@octocat", re.sub(r"<code>.*?</code>", "", outside, flags=re.DOTALL))
    assert "\x1b" not in html and "\u202e" not in html
