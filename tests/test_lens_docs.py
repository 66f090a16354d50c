"""Every builtin rule is declared once, in its lens module (reviewers/builtin/rule.py), with an
example that fires it and one that does not, and the examples are true: each is reviewed by the
builtin reviewer in a real repository. docs/rules.md, and docs/lenses.md's rule table and record
table, are what tools/rule_docs.py writes from the declarations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.rule import Example
from reviewgate.reviewers.builtin.rules import BUILTIN_RULES, RULES, RULES_BY_ID
from testing.lens_docs import DOCS, ROOT, RULE_PAGES, TABLE_RULE, rule_docs_tool, section
from testing.lenses import review_change

EXAMPLES = [
    (rule.id, verdict, example)
    for rule in RULES
    for verdict, examples in (("fires", rule.fires), ("does-not-fire", rule.does_not_fire))
    for example in examples
]


def test_every_rule_is_declared_once_with_a_row_an_example_that_fires_and_one_that_does_not() -> None:
    assert len(RULES_BY_ID) == len(RULES), "a rule id is declared twice"
    text = DOCS.read_text(encoding="utf-8")
    assert sorted(TABLE_RULE.findall(section(text, "## Rules"))) == sorted(BUILTIN_RULES)
    assert [rule.id for rule in RULES if not rule.fires or not rule.does_not_fire] == []


@pytest.mark.parametrize(("rule", "verdict", "example"), EXAMPLES,
                         ids=[f"{verdict}:{rule}:{example.file.path}" for rule, verdict, example in EXAMPLES])
def test_the_example_does_what_its_rule_says(rule: str, verdict: str, example: Example, tmp_path: Path) -> None:
    base = {file.path: file.code for file in example.base}
    branch = {file.path: file.code for file in (*example.branch, example.file)}
    findings = review_change(tmp_path, base, branch, branch_name=example.branch_name)
    found = [item for item in findings if item.rule == rule and item.dismissed is None]
    if verdict == "fires":
        assert found, f"{rule} did not fire; found {[item.rule for item in findings]}"
        assert {item.finding_class for item in found} == {RULES_BY_ID[rule].finding_class}, "not the declared class"
    else:
        assert not found, f"{rule} fired: {[(item.location, item.title) for item in found]}"


def test_the_docs_are_written_from_the_declarations() -> None:
    for path, text in rule_docs_tool().written().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run python tools/rule_docs.py"
    checked = subprocess.run([sys.executable, "tools/rule_docs.py", "--check"], cwd=ROOT, capture_output=True,
                             text=True, timeout=60, check=False)
    assert checked.returncode == 0, checked.stderr


def test_a_changed_declaration_leaves_the_committed_docs_stale() -> None:
    tool, text = rule_docs_tool(), DOCS.read_text(encoding="utf-8")
    first, *rest = RULES
    changed = tool.written((first._replace(short="Another short description"), *rest))
    assert "| Another short description |" in changed[DOCS] and "**Another short description**" in changed[RULE_PAGES]
    example = first.fires[0]._replace(caption="Another caption.")
    assert "Another caption." in tool.written((first._replace(fires=(example,)), *rest))[RULE_PAGES]
    measured = [rule._replace(record=None) if rule.by_record else rule for rule in RULES]
    assert "| unmeasured | unmeasured | minor | not measured yet |" in tool.render(text, tuple(measured))
    with pytest.raises(SystemExit, match="no generated region rule-table"):
        tool.render(text.replace("<!-- generated: rule-table", "<!-- gone: rule-table"))
