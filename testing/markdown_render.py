"""Markdown rendered the way GitHub renders a comment (GFM: tables, autolinks, strikethrough;
markdown-it-py's `gfm-like`, with GFM's autolinks rather than linkify-it's fuzzy ones), and
checks of what a reader sees: that every block is complete, and how many lines come before the
first folded block."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from linkify_it import LinkifyIt
from markdown_it import MarkdownIt

_RENDERER = MarkdownIt("gfm-like")
# GFM's extended autolinks, as GitHub makes them: a scheme's address, an e-mail address, and a
# `www.` domain. Not linkify-it's fuzzy links (any `label.tld`, such as `0.AL`), which GitHub
# leaves as text.
_LINKS = LinkifyIt(options={"fuzzy_link": False})


def _www_address(_: Any, match: Any) -> None:
    match.url = f"http://{match.url}"


_LINKS.add("www.", {"validate": re.compile(r"^[\w-]+(?:\.[\w-]+)*[^\s<]*"), "normalize": _www_address})
_RENDERER.linkify = _LINKS
# Elements that start a line of their own on the page.
_BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "blockquote", "pre", "summary", "hr", "table"}


def render_gfm(text: str) -> str:
    html: str = _RENDERER.render(text)
    return html


def unclosed_details(text: str) -> int:
    """How many `<details>` blocks the Markdown opens and never closes (a negative count: closes
    more than it opens); the opening and closing tags sit on lines of their own or start one."""
    depth = 0
    for line in text.splitlines():
        stripped = line.strip()
        depth += stripped.count("<details>") - stripped.count("</details>")
        assert depth >= 0, f"a </details> closes nothing: {line!r}"
    return depth


def _cells(row: str) -> int:
    """Cells of a GFM table row: the pipes that are not escaped, less the outer two."""
    return len(re.findall(r"(?<!\\)\|", row.replace("\\\\", ""))) - 1


def half_table_rows(text: str) -> list[str]:
    """Rows of a table with another number of cells than its header, or not closed by a pipe."""
    broken: list[str] = []
    header: int | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = _cells(line)
        if not line.rstrip().endswith("|") or line.rstrip().endswith("\\|") or _cells(line) != header:
            broken.append(line)
    return broken


class _Lines(HTMLParser):
    """The lines of text a page shows, up to the first `<details>` element."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = [""]
        self.stopped = False
        self.in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stopped = self.stopped or tag == "details"
        self.in_pre = self.in_pre or tag == "pre"
        if tag in _BLOCKS or tag == "br":
            self.lines.append("")

    def handle_endtag(self, tag: str) -> None:
        self.in_pre = self.in_pre and tag != "pre"

    def handle_data(self, data: str) -> None:
        if self.stopped:
            return
        parts = data.split("\n") if self.in_pre else [data.replace("\n", " ")]
        self.lines[-1] += parts[0]
        self.lines += parts[1:]


def lines_before_first_fold(html: str) -> list[str]:
    """The non-empty lines of text shown above the first `<details>` element (each paragraph,
    list entry, heading, table row or hard line break a line), as a reader sees them before
    opening anything. Lines a narrow window wraps are not counted twice."""
    parser = _Lines()
    parser.feed(html)
    return [line.strip() for line in parser.lines if line.strip()]
