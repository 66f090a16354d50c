"""docs/lenses.md lists every builtin rule id, each with an example that fires it and one that does
not, and the examples are true: each is reviewed by the builtin reviewer in a real repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.rules import BUILTIN_RULES
from testing.lens_docs import DOCS, SECTION, TABLE_RULE, VERDICTS, Example, parse_examples, section
from testing.lenses import review_change

EXAMPLES = parse_examples(DOCS.read_text(encoding="utf-8"))


def test_every_rule_has_a_row_an_example_that_fires_and_one_that_does_not() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert sorted(TABLE_RULE.findall(section(text, "## Rules"))) == sorted(BUILTIN_RULES)
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
