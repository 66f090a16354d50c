"""docs/lenses.md and docs/rules.md as the tests read them: sections, the rule ids of the table,
the anchors GitHub gives headings, and tools/rule_docs.py (a script, not a package) that writes them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "lenses.md"
RULE_PAGES = ROOT / "docs" / "rules.md"
TABLE_RULE = re.compile(r"^\| \[?`(?P<rule>[a-z]+/[a-z0-9-]+)`(?:\]\([^)]*\))? \|", re.MULTILINE)


def section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    following = text.find("\n## ", start + len(heading))
    return text[start:following if following != -1 else len(text)]


_HEADING = re.compile(r"^#{1,6} +(?P<text>.+?) *$", re.MULTILINE)


def github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, without punctuation but
    `-` and `_`, spaces as `-`, a repeated one suffixed `-1`, `-2` …"""
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    for match in _HEADING.finditer(re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)):
        slug = re.sub(r"[^\w\- ]", "", match.group("text").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def rule_docs_tool() -> ModuleType:
    """tools/rule_docs.py, loaded from its path."""
    spec = importlib.util.spec_from_file_location("rule_docs_tool", ROOT / "tools" / "rule_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
