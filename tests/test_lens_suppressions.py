"""Suppressions: `reviewgate: ignore[rule] reason` dismisses one rule on its line or the line below
it, keeps the finding in the report, and a missing reason is a minor finding of its own."""

from __future__ import annotations

from pathlib import Path

from reviewgate.reviewers.builtin.suppressions import parse_suppression
from testing.cli import run_cli
from testing.lenses import review_change
from testing.repo import make_repo

BASE = {"app/client.py": "import requests\n", "tests/test_client.py": "def test_x():\n    pass\n"}


def _branch(body: str) -> dict[str, str]:
    return {
        "app/client.py": "import requests\n\n\n" + body,
        "tests/test_client.py": "def test_x():\n    pass\n\n\ndef test_y():\n    pass\n",
    }


def test_parse_suppression_rules_and_reason() -> None:
    parsed = parse_suppression("x = 1  # reviewgate: ignore[security/eval, readability] trusted input -->")
    assert parsed is not None
    assert parsed.rules == frozenset({"security/eval", "readability"}) and parsed.reason == "trusted input"
    assert parse_suppression("/* reviewgate: ignore[security/eval] */") is not None
    assert parse_suppression("/* reviewgate: ignore[security/eval] */").reason == ""  # type: ignore[union-attr]
    assert parse_suppression("# reviewgate ignores nothing here") is None


def test_suppression_on_line_above_dismisses_and_the_gate_approves(tmp_path: Path) -> None:
    body = (
        "def fetch(url):\n"
        "    # reviewgate: ignore[security/tls-verification-off] the lab device has no certificate\n"
        "    return requests.get(url, verify=False, timeout=10)\n"
    )
    repo = make_repo(tmp_path, BASE, _branch(body))
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout
    finding = next(
        item for item in result.report()["findings"] if item["rule"] == "security/tls-verification-off"
    )
    assert finding["dismissed"] == "suppressed: the lab device has no certificate"
    assert finding["line"] == 6


def test_suppression_of_another_rule_does_not_apply(tmp_path: Path) -> None:
    body = (
        "def fetch(url):\n"
        "    return requests.get(url, verify=False, timeout=1)  # reviewgate: ignore[security/eval] no eval\n"
    )
    findings = review_change(tmp_path, BASE, _branch(body))
    finding = next(item for item in findings if item.rule == "security/tls-verification-off")
    assert finding.dismissed is None


def test_family_suppression_and_missing_reason(tmp_path: Path) -> None:
    body = (
        "def fetch(url):\n"
        "    return requests.get(url, verify=False, timeout=10)  # reviewgate: ignore[security]\n"
    )
    findings = review_change(tmp_path, BASE, _branch(body))
    tls = next(item for item in findings if item.rule == "security/tls-verification-off")
    assert tls.dismissed == "suppressed: (no reason given)"
    missing = [item for item in findings if item.rule == "suppression/missing-reason"]
    assert [(item.path, item.line, item.severity.value, item.dismissed) for item in missing] == [
        ("app/client.py", 5, "minor", None)
    ]


def test_suppression_two_lines_above_does_not_reach(tmp_path: Path) -> None:
    body = (
        "def fetch(url):\n"
        "    # reviewgate: ignore[security/tls-verification-off] too far away\n"
        "    timeout = 10\n"
        "    return requests.get(url, verify=False, timeout=timeout)\n"
    )
    findings = review_change(tmp_path, BASE, _branch(body))
    assert next(item for item in findings if item.rule == "security/tls-verification-off").dismissed is None
