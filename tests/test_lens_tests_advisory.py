"""The tests rules' major findings are advisory by default: reported with their evidence, not
blocking. `[lenses] block_on_missing_tests = true` makes them block, and a branch can turn blocking
neither on nor off for itself (the config is read at the merge base). Real repositories, the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.errors import ConfigError
from reviewgate.reviewers.builtin.settings import parse_lens_settings
from testing.cli import run_cli
from testing.repo import make_repo

_BASE = "def keep():\n    return 0\n"
# A new public function with two decisions and no test: strong evidence, major.
_NEW = _BASE + """

def shipping_cost(weight, express):
    if weight <= 0:
        raise ValueError(weight)
    if express:
        return 10 + weight * 2
    return 5 + weight
"""


def _tests_findings(result) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    return [item for item in result.report()["findings"] if item["rule"] == "tests/missing-tests"]


def test_by_default_a_major_missing_tests_finding_is_reported_with_its_evidence_and_advises(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/shipping.py": _BASE, ".reviewgate.toml": "[lenses]\n"},
                     {"app/shipping.py": _NEW})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    (finding,) = _tests_findings(result)
    assert finding["severity"] == "major"
    assert "shipping_cost" in finding["body"]
    assert "Advisory: missing tests are advisory" in finding["body"]
    assert "block_on_missing_tests = true" in finding["body"]
    # Where the console lists it, it says it does not block, and the verdict's advice counts one.
    assert "tests/missing-tests  New behaviour without a test change  [advisory]" in result.stdout
    assert "next: The 1 finding listed is advice; it does not have to be fixed before merge." in result.stdout


def test_the_base_config_makes_it_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/shipping.py": _BASE,
                                ".reviewgate.toml": "[lenses]\nblock_on_missing_tests = true\n"},
                     {"app/shipping.py": _NEW})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = _tests_findings(result)
    assert finding["severity"] == "major" and "Advisory" not in finding["body"]


def test_a_branch_can_turn_blocking_neither_on_nor_off_for_itself(tmp_path: Path) -> None:
    on = make_repo(tmp_path / "on", {"app/shipping.py": _BASE, ".reviewgate.toml": "[lenses]\n"},
                   {"app/shipping.py": _NEW, ".reviewgate.toml": "[lenses]\nblock_on_missing_tests = true\n"})
    result = run_cli(on.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Advisory" in _tests_findings(result)[0]["body"]
    off = make_repo(tmp_path / "off",
                    {"app/shipping.py": _BASE, ".reviewgate.toml": "[lenses]\nblock_on_missing_tests = true\n"},
                    {"app/shipping.py": _NEW, ".reviewgate.toml": "[lenses]\nblock_on_missing_tests = false\n"})
    result = run_cli(off.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Advisory" not in _tests_findings(result)[0]["body"]


@pytest.mark.parametrize("value", ["no", 0, "false"])
def test_a_value_that_is_not_a_boolean_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError, match=f"cfg: lenses.block_on_missing_tests: expected true or false, got {value!r}"):
        parse_lens_settings({"block_on_missing_tests": value}, "cfg")
