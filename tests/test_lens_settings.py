"""The `[lenses]` section: reproduction policy, disabled rules, and clear errors for bad values."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from reviewgate.config import ConfigWarning
from reviewgate.errors import ConfigError
from reviewgate.reviewers.builtin.settings import (
    ReproductionPolicy,
    describe_reproduction_rule,
    parse_lens_settings,
)
from reviewgate.verify.outcome import ReproductionStatus, VerifyOutcome, VerifyStatus
from testing.cli import run_cli
from testing.lenses import review_change
from testing.repo import make_repo, write_base_config

BASE = {"app/prices.py": "def total(a, b):\n    return a + b\n"}
FIX = {"app/prices.py": "def total(a, b):\n    return round(a + b, 2)\n"}
# A repository that works by the reproduction process: its stand-up manifest in .prepcook/.
OPTED_IN = dict(BASE, **{".prepcook/scripts.toml": '[test]\nrun = "true"\n'})


def _rules(findings: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(item.rule for item in findings if item.rule.startswith("process/"))


def test_defaults_and_parsing() -> None:
    assert parse_lens_settings({}).require_reproduction is ReproductionPolicy.FIXES
    settings = parse_lens_settings(
        {"require_reproduction": "always", "disable": ["readability", "tests/missing-tests"]}
    )
    assert settings.require_reproduction is ReproductionPolicy.ALWAYS
    assert not settings.enabled("readability/narrating-comment") and not settings.enabled(
        "tests/missing-tests"
    )
    assert settings.enabled("tests/fix-without-test")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            {"require_reproduction": "sometimes"},
            'cfg: lenses.require_reproduction: expected "never" | "fixes" | "always"',
        ),
        ({"require_reproduction": 1}, "cfg: lenses.require_reproduction"),
        ({"disable": "readability"}, "cfg: lenses.disable: expected a list of rule ids"),
        ({"block_on_duplicates": "yes"}, "cfg: lenses.block_on_duplicates: expected true or false, got 'yes'"),
    ],
)
def test_bad_values_name_the_key(section: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigError, match=message.replace("|", r"\|")):
        parse_lens_settings(section, "cfg")


def test_unknown_key_warns() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_lens_settings({"colour": "blue"}, "cfg")
    assert [str(item.message) for item in caught if item.category is ConfigWarning] == [
        "cfg: lenses.colour: unknown key, ignored"
    ]


def test_cli_bad_value_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, FIX)
    write_base_config(repo.path, '[lenses]\nrequire_reproduction = "often"\n')
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert ".reviewgate.toml: lenses.require_reproduction: expected" in result.stderr
    assert "Traceback" not in result.stderr


def test_policy_fixes_needs_a_fix_marker(tmp_path: Path) -> None:
    assert _rules(review_change(tmp_path / "a", OPTED_IN, FIX)) == []
    marked = review_change(tmp_path / "b", OPTED_IN, FIX, branch_name="hotfix/rounding")
    assert _rules(marked) == ["process/missing-reproduction"]


def test_reproduction_rules_are_off_unless_the_repository_opts_in(tmp_path: Path) -> None:
    assert _rules(review_change(tmp_path / "a", BASE, FIX, branch_name="hotfix/rounding")) == []
    assert _rules(
        review_change(tmp_path / "b", BASE, FIX, message="fix: rounding", reproduction="total(0.1, 0.2)")
    ) == []
    # The branch under review cannot opt itself in: the directory must exist at the merge base.
    adds_directory = dict(FIX, **{".prepcook/scripts.toml": '[test]\nrun = "true"\n'})
    assert _rules(review_change(tmp_path / "c", BASE, adds_directory, branch_name="hotfix/rounding")) == []
    # Setting the policy explicitly opts in, even to the default value.
    explicit = review_change(
        tmp_path / "d", BASE, FIX, branch_name="hotfix/rounding",
        sections={"lenses": {"require_reproduction": "fixes"}},
    )
    assert _rules(explicit) == ["process/missing-reproduction"]


def test_describe_reproduction_rule() -> None:
    default, explicit = parse_lens_settings({}), parse_lens_settings({"require_reproduction": "always"})
    assert explicit.require_reproduction_set and not default.require_reproduction_set
    assert describe_reproduction_rule(default, False).startswith("reproduction rule off: no .prepcook/")
    assert 'require_reproduction = "fixes"' in describe_reproduction_rule(default, False)
    assert describe_reproduction_rule(default, True).startswith("reproduction rule on (")
    assert describe_reproduction_rule(explicit, False) == (
        'reproduction rule on: lenses.require_reproduction = "always" is set in the config'
    )


def test_policy_always_and_never(tmp_path: Path) -> None:
    always = review_change(tmp_path / "a", BASE, FIX, sections={"lenses": {"require_reproduction": "always"}})
    assert _rules(always) == ["process/missing-reproduction"]
    never = review_change(
        tmp_path / "b",
        BASE,
        FIX,
        message="fix: rounding",
        sections={"lenses": {"require_reproduction": "never"}},
    )
    assert _rules(never) == []


def test_reproduction_sources_and_rerun_status(tmp_path: Path) -> None:
    from_forge = review_change(
        tmp_path / "a", OPTED_IN, FIX, message="fix: rounding", reproduction="total(0.1, 0.2)"
    )
    assert _rules(from_forge) == ["process/reproduction-not-rerun"]
    in_repo = dict(FIX, **{".reviewgate/reproduction.md": "total(0.1, 0.2) -> 0.3\n"})
    passed = VerifyOutcome(status=VerifyStatus.PASSED, reproduction=ReproductionStatus.PASSED)
    assert _rules(review_change(tmp_path / "b", OPTED_IN, in_repo, message="fix: rounding", verify=passed)) == []
    failed = VerifyOutcome(status=VerifyStatus.FAILED, reproduction=ReproductionStatus.FAILED)
    findings = review_change(tmp_path / "c", OPTED_IN, in_repo, message="fix: rounding", verify=failed)
    assert _rules(findings) == ["process/reproduction-not-rerun"]
    assert "failed" in next(item for item in findings if item.rule.startswith("process/")).body


def test_disabled_rule_does_not_report(tmp_path: Path) -> None:
    findings = review_change(
        tmp_path,
        BASE,
        {"repro/case.py": "print(1)\n"},
        sections={"lenses": {"disable": ["process/repro-in-diff"]}},
    )
    assert _rules(findings) == []


def test_doctor_says_whether_the_reproduction_rule_is_on(tmp_path: Path) -> None:
    plain = make_repo(tmp_path / "plain", BASE)
    result = run_cli(plain.path, "doctor", "--base", "main", "--reviewer", "builtin")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "note: reproduction rule off: no .prepcook/ directory and lenses.require_reproduction is not set; " \
        'turn it on with [lenses] require_reproduction = "fixes"' in result.stdout
    opted_in = make_repo(tmp_path / "opted", OPTED_IN)
    result = run_cli(opted_in.path, "doctor", "--base", "main", "--reviewer", "builtin")
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'note: reproduction rule on (require_reproduction = "fixes", the default): the repository has a ' \
        ".prepcook/ directory" in result.stdout


def test_disabling_an_unknown_rule_warns_naming_the_closest_id(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings = parse_lens_settings({"disable": ["correctness/swallowed-failure", "security", "E501"]}, "cfg")
    assert [str(item.message) for item in caught if item.category is ConfigWarning] == [
        "cfg: lenses.disable: 'correctness/swallowed-failure' names no rule; "
        "did you mean correctness/swallowed-exception?",
        "cfg: lenses.disable: 'E501' names no rule",
    ]
    assert settings.enabled("correctness/swallowed-exception")
    repo = make_repo(tmp_path, BASE, FIX)
    write_base_config(repo.path, '[lenses]\ndisable = ["correctness/swallowed-failure"]\n')
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert ("lenses.disable: 'correctness/swallowed-failure' names no rule; "
            "did you mean correctness/swallowed-exception?") in result.stderr
