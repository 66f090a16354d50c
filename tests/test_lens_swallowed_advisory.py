"""The swallowed-failure rules' major findings are advisory by default: reported with their
evidence and annotation, not blocking. `[lenses] block_on_swallowed_failures = true` makes them
block, and a branch can turn blocking neither on nor off for itself (the config is read at the
merge base). Real repositories, the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.errors import ConfigError
from reviewgate.reviewers.builtin.lenses.swallowed import ADVISORY_NOTE, RULE_IDS
from reviewgate.reviewers.builtin.rules import RULES, RULES_BY_ID
from reviewgate.reviewers.builtin.settings import parse_lens_settings
from testing.cli import run_cli
from testing.repo import make_repo

_BASE = "def keep():\n    return 0\n"
# A broad handler that hides the work's own failure, and a dropped Go error: both major.
_PYTHON = _BASE + "\n\ndef total(items):\n    try:\n        return sum(items)\n    except Exception:\n        pass\n"
_GO = "package shop\n\nfunc Save(store Store) error {\n\tif err := store.Flush(); err != nil {\n\t\treturn nil\n\t}\n\treturn nil\n}\n"
_SWALLOWING = {"app/totals.py": _PYTHON, "shop/save.go": _GO}


def _swallowed(result) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    return [item for item in result.report()["findings"] if item["rule"] in RULE_IDS]


def test_by_default_a_major_swallowed_failure_is_reported_with_its_evidence_and_advises(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/totals.py": _BASE, ".reviewgate.toml": "[lenses]\n"}, _SWALLOWING)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    found = {item["rule"]: item for item in _swallowed(result)}
    assert set(found) == {"correctness/swallowed-exception", "correctness/dropped-error"}
    for finding in found.values():
        assert finding["severity"] == "major"
        assert "Advisory: swallowed failures are advisory" in finding["body"]
        assert "block_on_swallowed_failures = true" in finding["body"]
    assert "except Exception:" in found["correctness/swallowed-exception"]["body"]
    assert "correctness/swallowed-exception  Broad exception handler does nothing (`pass`)  [advisory]" in result.stdout
    # With the tests rules' advice on the same new functions, nothing listed has to be fixed.
    assert "findings listed are advice; none has to be fixed before merge." in result.stdout


def test_the_base_config_makes_them_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app/totals.py": _BASE,
                                ".reviewgate.toml": "[lenses]\nblock_on_swallowed_failures = true\n"}, _SWALLOWING)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    found = _swallowed(result)
    assert len(found) == 2 and all(item["severity"] == "major" and "Advisory" not in item["body"] for item in found)


def test_a_branch_can_turn_blocking_neither_on_nor_off_for_itself(tmp_path: Path) -> None:
    on = make_repo(tmp_path / "on", {"app/totals.py": _BASE, ".reviewgate.toml": "[lenses]\n"},
                   {**_SWALLOWING, ".reviewgate.toml": "[lenses]\nblock_on_swallowed_failures = true\n"})
    result = run_cli(on.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    assert all("Advisory" in item["body"] for item in _swallowed(result))
    off = make_repo(tmp_path / "off",
                    {"app/totals.py": _BASE, ".reviewgate.toml": "[lenses]\nblock_on_swallowed_failures = true\n"},
                    {**_SWALLOWING, ".reviewgate.toml": "[lenses]\nblock_on_swallowed_failures = false\n"})
    result = run_cli(off.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    assert not any("Advisory" in item["body"] for item in _swallowed(result))


def test_the_advisory_family_is_every_swallowed_failure_rule_and_its_docs_say_so() -> None:
    assert RULE_IDS == {
        "correctness/swallowed-exception", "correctness/empty-catch", "correctness/dropped-error",
        "correctness/ignored-exit-status", "correctness/unhandled-rejection",
    }
    # The ids are written out in the family's package; the declarations say the same of themselves.
    assert {rule.id for rule in RULES if ADVISORY_NOTE in rule.severity_note} == RULE_IDS
    for rule in RULE_IDS:
        assert RULES_BY_ID[rule].severity_note.endswith(ADVISORY_NOTE), rule


@pytest.mark.parametrize("value", ["no", 0, "false"])
def test_a_value_that_is_not_a_boolean_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError,
                       match=f"cfg: lenses.block_on_swallowed_failures: expected true or false, got {value!r}"):
        parse_lens_settings({"block_on_swallowed_failures": value}, "cfg")
