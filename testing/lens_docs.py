"""docs/lenses.md's examples, read the way tests/test_lens_docs.py reviews them and
tests/test_sarif_output.py checks the SARIF help against them; and the anchors GitHub gives its headings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lenses.md"
SECTION = "## Every rule, by example"
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^`\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
TABLE_RULE = re.compile(r"^\| `(?P<rule>[a-z]+/[a-z0-9-]+)` \|", re.MULTILINE)
VERDICTS = ("fires", "does-not-fire")


@dataclass
class Example:
    """One change: the files at the merge base, the files the change writes, and what it shows."""

    verdict: str = ""
    rule: str = ""
    base: dict[str, str] = field(default_factory=dict)
    branch: dict[str, str] = field(default_factory=dict)
    branch_name: str = "feature"
    # The block that ends the example: the file it is about and that file's language.
    path: str = ""
    language: str = ""

    @property
    def name(self) -> str:
        return f"{self.verdict}:{self.rule}"


def section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    following = text.find("\n## ", start + len(heading))
    return text[start:following if following != -1 else len(text)]


def parse_examples(text: str) -> list[Example]:
    """Every fenced block of the section, in order: `base` and `branch` blocks gather files, and a
    `fires=` or `does-not-fire=` block (a file the change writes) ends the example. A block with
    no part, or without `path=`, is an error: no example may be skipped silently."""
    examples: list[Example] = []
    current = Example()
    for match in _FENCE.finditer(section(text, SECTION)):
        words = match.group("info").split()
        attributes = dict(word.split("=", 1) for word in words[1:] if "=" in word)
        flags = {word for word in words[1:] if "=" not in word}
        path = attributes.get("path")
        assert path, f"a block with info {match.group('info')!r} names no path="
        body = match.group("body")
        if "base" in flags:
            current.base[path] = body
        elif "branch" in flags:
            current.branch[path] = body
        else:
            verdicts = [key for key in VERDICTS if key in attributes]
            assert len(verdicts) == 1, f"block {path} ({match.group('info')!r}) is neither base, branch nor a verdict"
            current.verdict, current.rule = verdicts[0], attributes[verdicts[0]]
            current.branch[path] = body
            current.branch_name = attributes.get("branch-name", "feature")
            current.path, current.language = path, words[0] if words else ""
            examples.append(current)
            current = Example()
    assert not current.base and not current.branch, "files after the last example belong to no example"
    return examples



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


def rule_examples(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """What reviewgate/reviewers/builtin/rule_examples.json holds: each rule's first example that
    fires it and first that does not, as the file the change writes (the SARIF rule's help)."""
    examples: dict[str, dict[str, dict[str, str]]] = {}
    for example in parse_examples(text):
        shown = examples.setdefault(example.rule, {})
        shown.setdefault(example.verdict, {"path": example.path, "language": example.language,
                                           "code": example.branch[example.path]})
    return dict(sorted(examples.items()))
