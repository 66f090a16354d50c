"""Comments that narrate the change or cite tickets, and commented-out code; names never."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.comments import comment_on
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.readability import ticket_reference
from testing.lenses import review_change


def _found(findings: list) -> list[tuple[str, int | None]]:  # type: ignore[type-arg]
    return sorted((item.rule, item.line) for item in findings if item.rule.startswith("readability/"))


def test_comment_extraction_ignores_strings_and_urls() -> None:
    assert comment_on(1, 'x = "# not a comment"', Language.PYTHON) is None
    assert comment_on(1, 'url = "http://a.b/c" // real', Language.JAVASCRIPT).text == "real"  # type: ignore[union-attr]
    assert comment_on(1, 'fetch("https://a.b/c");', Language.TYPESCRIPT) is None
    assert comment_on(1, "#!/usr/bin/env python", Language.PYTHON) is None
    assert comment_on(1, "x = 1", Language.OTHER) is None


@pytest.mark.parametrize(
    ("text", "ticket"),
    [
        ("see JIRA-123", "JIRA-123"),
        ("closes issue #42", "issue #42"),
        ("UTF-8 and SHA-256 per RFC-7231", None),
        ("the 3 bugs in ticket 99", "ticket 99"),
        ("    http://www.apache.org/licenses/LICENSE-2.0", None),
        ("see https://jira.example.org/browse/PAY-12 for the terms", None),
        ("Licensed under the Apache LICENSE-2 terms", None),
        ("SPDX-License-Identifier: GPL-2 ABC-12", None),
        ("shipped in PAY-4821.", "PAY-4821"),
    ],
)
def test_ticket_reference(text: str, ticket: str | None) -> None:
    assert ticket_reference(text) == ticket


@pytest.mark.parametrize(
    "comment",
    [
        "# Changed timeout to 60",
        "# Moved here from utils",
        "# fixed the bug where totals were negative",
        "# This fixes the crash on empty carts",
        "# Previously this called the v1 API",
        "# Added a new retry",
        "# as discussed, keep the old name",
        "# no longer needed after the refactor",
        "# per code review",
    ],
)
def test_narration_fires(tmp_path: Path, comment: str) -> None:
    findings = review_change(tmp_path, {"a.py": "X = 1\n"}, {"a.py": f"{comment}\nX = 1\n"})
    assert _found(findings) == [("readability/narrating-comment", 1)]


@pytest.mark.parametrize(
    "comment",
    [
        "# Change the limit only together with the billing job",
        "# Fixed-width columns keep the report aligned",
        "# Remove entries older than a day so the cache stays small",
        "# Added items are validated first",
        "# The old-style % formatting is what the logging module expects",
        "# noqa: E501 changed nothing",
    ],
)
def test_explanations_do_not_fire(tmp_path: Path, comment: str) -> None:
    findings = review_change(tmp_path, {"a.py": "X = 1\n"}, {"a.py": f"{comment}\nX = 1\n"})
    assert _found(findings) == []


def test_naming_is_never_flagged_and_existing_comments_are_left_alone(tmp_path: Path) -> None:
    base = "# Changed this long ago\nx = 1\n"
    findings = review_change(tmp_path, {"a.py": base}, {"a.py": base + "tmp2 = x\nfoo = tmp2\n"})
    assert _found(findings) == []


def test_commented_out_python_keeps_indentation_and_short_examples_pass(tmp_path: Path) -> None:
    branch = "X = 1\n# if X:\n#     print(X)\n#     X = 2\n\n# Example: total([1, 2])\nY = 2\n"
    findings = review_change(tmp_path, {"a.py": "X = 1\n"}, {"a.py": branch})
    assert _found(findings) == [("readability/commented-out-code", 2)]


def test_comments_in_config_sql_and_c_family_files(tmp_path: Path) -> None:
    branch = {
        "deploy/values.yaml": "replicas: 3  # bumped per review\n",
        "db/001.sql": "-- Changed the index to cover email\nCREATE INDEX users_email ON users (email);\n",
        "native/lib.rs": "// see OPS-77\nfn main() {}\n",
        "Dockerfile": "# Moved the build stage up\nFROM python:3.12\n",
        "tests/data/cases.yaml": "# Changed the attempts from 3 to 5 as requested\nattempts: 5\n",
    }
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    found = sorted(
        (item.path, item.rule, item.line) for item in findings if item.rule.startswith("readability/")
    )
    assert found == [
        ("Dockerfile", "readability/narrating-comment", 1),
        ("db/001.sql", "readability/narrating-comment", 1),
        ("deploy/values.yaml", "readability/narrating-comment", 1),
        ("native/lib.rs", "readability/ticket-reference", 1),
    ]


@pytest.mark.parametrize(
    ("comment", "rules"),
    [
        ("# The proxy drops idle connections (issue #412), so keep-alive stays shorter", []),
        ("# Fixed the bug in #412 because the proxy drops idle connections", []),
        ("# Fixes issue #412", ["readability/ticket-reference"]),
        ("# Fixed the bug from #412", ["readability/narrating-comment"]),
    ],
)
def test_a_why_comment_that_cites_an_issue_is_not_narration(tmp_path: Path, comment: str, rules: list[str]) -> None:
    findings = review_change(tmp_path, {"a.py": "X = 1\n"}, {"a.py": f"{comment}\nX = 1\n"})
    assert [rule for rule, _ in _found(findings)] == rules


def test_the_reason_may_be_on_the_next_line_of_the_comment(tmp_path: Path) -> None:
    source = "# Work around bug 1187 in the vendor SDK: it retries POSTs unless we\n# pass a key.\nX = 1\n"
    assert _found(review_change(tmp_path, {"a.py": "X = 1\n"}, {"a.py": source})) == []
