"""security/line-anchored-regex: which patterns judge a whole value by line anchors, and that a
finding reports at minor (its record has not earned more). The must-find cases and look-alikes
are in tests/corpus/line-anchors.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Severity
from reviewgate.gate import blocks
from reviewgate.reviewers.builtin.lenses.line_anchors import RULE_LINE_ANCHORED_REGEX, anchored_by_line
from testing.lenses import review_change


@pytest.mark.parametrize(
    ("pattern", "multiline", "ruby", "expected"),
    [
        (r"^plain$|^S256$", False, True, True),
        (r"^\s*$", False, True, True),
        (r"(?:^[a-z]+$)", False, True, True),
        (r"\A[a-z]+$", False, True, True),  # `$` still lets a second line through
        (r"^[a-z]+\z", False, True, True),
        (r"\A(?:plain|S256)\z", False, True, False),
        (r"^Bearer ", False, True, False),  # one end: a prefix test
        (r"^plain$|S256", False, True, False),  # one alternative unanchored
        (r"^[a-z]+\$", False, True, False),  # an escaped dollar is a character
        (r"^[$]+$", False, True, True),
        (r"^[a-z]+$", False, False, False),  # JavaScript and Python without `m`: whole-string anchors
        (r"^[a-z]+$", True, False, True),
    ],
)
def test_a_pattern_anchored_at_both_ends_by_a_line_anchor(pattern: str, multiline: bool, ruby: bool,
                                                          expected: bool) -> None:
    assert anchored_by_line(pattern, multiline, ruby) is expected


def test_a_finding_reports_at_minor_and_says_how_to_anchor_the_whole_value(tmp_path: Path) -> None:
    branch = {"lib/token.rb": "def token?(value)\n  value =~ /^[a-f0-9]{32}$/\nend\n",
              "spec/token_spec.rb": "it { expect(value =~ /^[a-f0-9]{32}$/).to be_truthy }\n"}
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, branch)
                if item.rule == RULE_LINE_ANCHORED_REGEX]
    assert [(item.path, item.line, item.severity) for item in findings] == [("lib/token.rb", 2, Severity.MINOR)]
    assert "`\\A` and `\\z`" in findings[0].body and not blocks(findings[0])
