"""docs/lenses.md lists every builtin rule id, each with an example that fires it and one that does
not, and the examples are true: each is reviewed by the builtin reviewer in a real repository."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.rules import BUILTIN_RULES
from testing.lenses import review_change

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lenses.md"
SECTION = "## Every rule, by example"
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^`\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
_TABLE_RULE = re.compile(r"^\| `(?P<rule>[a-z]+/[a-z0-9-]+)` \|", re.MULTILINE)
VERDICTS = ("fires", "does-not-fire")


@dataclass
class Example:
    """One change: the files at the merge base, the files the change writes, and what it shows."""

    verdict: str = ""
    rule: str = ""
    base: dict[str, str] = field(default_factory=dict)
    branch: dict[str, str] = field(default_factory=dict)
    branch_name: str = "feature"

    @property
    def name(self) -> str:
        return f"{self.verdict}:{self.rule}"


def _section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    following = text.find("\n## ", start + len(heading))
    return text[start:following if following != -1 else len(text)]


def parse_examples(text: str) -> list[Example]:
    """Every fenced block of the section, in order: `base` and `branch` blocks gather files, and a
    `fires=` or `does-not-fire=` block (a file the change writes) ends the example. A block with
    no part, or without `path=`, is an error: no example may be skipped silently."""
    examples: list[Example] = []
    current = Example()
    for match in _FENCE.finditer(_section(text, SECTION)):
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
            examples.append(current)
            current = Example()
    assert not current.base and not current.branch, "files after the last example belong to no example"
    return examples


EXAMPLES = parse_examples(DOCS.read_text(encoding="utf-8"))


def test_every_rule_has_a_row_an_example_that_fires_and_one_that_does_not() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert sorted(_TABLE_RULE.findall(_section(text, "## Rules"))) == sorted(BUILTIN_RULES)
    for verdict in VERDICTS:
        shown = {example.rule for example in EXAMPLES if example.verdict == verdict}
        assert shown == set(BUILTIN_RULES), f"{verdict}: missing {set(BUILTIN_RULES) - shown}, unknown {shown - set(BUILTIN_RULES)}"
    assert "## Measured on real history" in text


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.name for example in EXAMPLES])
def test_the_example_does_what_the_docs_say(example: Example, tmp_path: Path) -> None:
    findings = review_change(tmp_path, example.base, example.branch, branch_name=example.branch_name)
    found = [item for item in findings if item.rule == example.rule and item.dismissed is None]
    if example.verdict == "fires":
        assert found, f"{example.rule} did not fire; found {[item.rule for item in findings]}"
    else:
        assert not found, f"{example.rule} fired: {[(item.location, item.title) for item in found]}"


def test_a_block_without_a_part_is_refused() -> None:
    text = f"{SECTION}\n\n```python path=app/x.py\nx = 1\n```\n"
    with pytest.raises(AssertionError, match="neither base, branch nor a verdict"):
        parse_examples(text)
