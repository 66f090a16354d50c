"""Precision and recall of the builtin lenses over the labelled corpus in tests/corpus/.

The bar: precision at least 0.9 and recall at least 0.8, printed on every run. A case
scores only the rule families in its `scope`; dismissed (suppressed) findings never count. A case
with `blocking_only = true` scores only what the default gate blocks on: a look-alike that may be
reported as minor (an example key in documentation) but must not block.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reviewgate.findings import Finding
from reviewgate.gate import blocks
from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.rules import BUILTIN_RULES, RULES
from reviewgate.tomlfile import parse_toml
from testing.lenses import review_change

CORPUS = Path(__file__).parent / "corpus"
MIN_PRECISION = 0.9
MIN_RECALL = 0.8
# Each bug rule on its own cases: it blocks by its record, and its corpus is its recall.
MIN_BUG_RULE_SCORE = 0.9

Key = tuple[str, str, "str | None", "int | None"]


def load_cases() -> list[dict[str, Any]]:
    cases = []
    # Every TOML file in the corpus: one per language, and one per family of real-code cases.
    for path in sorted(CORPUS.glob("*.toml")):
        cases += parse_toml(path.read_bytes(), str(path))["case"]
    # TOML has no null: `deleted = [paths]` lists the files the branch deletes.
    for case in cases:
        case["branch"] = {**case.get("branch", {}), **dict.fromkeys(case.get("deleted", []))}
    return cases


def _in_scope(rule: str, scope: list[str]) -> bool:
    return not scope or rule in scope or rule.split("/", 1)[0] in scope


# Each case's findings, by its (unique) name: a case is one review a process, whichever tests ask.
_REVIEWED: dict[str, list[Finding]] = {}


def review_case(case: dict[str, Any], root: Path) -> list[Finding]:
    """Every finding the builtin reviewer reports for one case, its repository made under `root`
    the first time this process asks; the tests judging a case by different labels (what it finds,
    whether it blocks) read the one review of the same change."""
    name = case["name"]
    if name not in _REVIEWED:
        _REVIEWED[name] = review_change(
            root,
            case.get("base", {}),
            case.get("branch", {}),
            branch_name=case.get("branch_name", "feature"),
            message=case.get("message", "feature work"),
            # A case's `blocks` says whether its evidence is strong enough to block where the tests
            # and swallowed-failure rules are asked to: their default (advisory) is tested in
            # test_lens_tests_advisory and test_lens_swallowed_advisory.
            sections={"lenses": {"block_on_missing_tests": True, "block_on_swallowed_failures": True,
                                 **case.get("lenses", {})}},
        )
    return _REVIEWED[name]


def score_case(case: dict[str, Any], root: Path) -> tuple[set[Key], set[Key]]:
    """(expected, reported) keys of one case."""
    findings = review_case(case, root)
    for item in findings:
        # One name per rule: every builtin finding carries an id the registry (and docs/lenses.md) knows.
        assert item.rule in BUILTIN_RULES, f"{case['name']}: {item.title!r} has rule {item.rule!r}, not a builtin id"
    scope = case.get("scope", [])
    blocking_only = bool(case.get("blocking_only", False))
    reported = {
        (case["name"], item.rule, item.path, item.line)
        for item in findings
        if item.dismissed is None and _in_scope(item.rule, scope) and (not blocking_only or blocks(item))
    }
    expected = {
        (case["name"], item["rule"], item.get("path"), item.get("line")) for item in case.get("expect", [])
    }
    return expected, reported


def test_corpus_is_large_and_covers_the_languages() -> None:
    cases = load_cases()
    names = [case["name"] for case in cases]
    assert len(cases) >= 60, f"the corpus has {len(cases)} cases; it needs at least 60"
    assert len(set(names)) == len(names), "case names must be unique"
    for prefix in ("py-", "js-", "ts-", "go-", "java-", "rs-", "rb-", "php-"):
        assert sum(name.startswith(prefix) for name in names) >= 5, f"too few {prefix} cases"
    assert sum("lookalike" in name for name in names) >= 15, "look-alike negatives are half the point"


# Each of the ~490 cases is a git repository made and reviewed: about two minutes on a loaded
# machine, past the suite's default of 120 seconds.
@pytest.mark.timeout(300)
def test_precision_and_recall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected: set[Key] = set()
    reported: set[Key] = set()
    for index, case in enumerate(load_cases()):
        case_expected, case_reported = score_case(case, tmp_path / str(index))
        expected |= case_expected
        reported |= case_reported
    true_positives = expected & reported
    precision = len(true_positives) / len(reported) if reported else 1.0
    recall = len(true_positives) / len(expected) if expected else 1.0
    false_positives = sorted(reported - expected, key=str)
    missed = sorted(expected - reported, key=str)
    with capsys.disabled():
        print(
            f"\ncorpus: precision {precision:.3f}, recall {recall:.3f} "
            f"({len(true_positives)} found, {len(false_positives)} false, {len(missed)} missed)"
        )
        for item in false_positives:
            print(f"  false positive: {item}")
        for item in missed:
            print(f"  missed: {item}")
    assert precision >= MIN_PRECISION, f"precision {precision:.3f} below {MIN_PRECISION}"
    assert recall >= MIN_RECALL, f"recall {recall:.3f} below {MIN_RECALL}"


BUG_RULES = tuple(rule.id for rule in RULES if rule.by_record)


def _rule_cases(rule: str) -> list[dict[str, Any]]:
    """The cases that name `rule` in their scope: those that must find it, and its look-alikes."""
    return [case for case in load_cases() if rule in case.get("scope", [])]


def _languages(case: dict[str, Any]) -> set[str]:
    return {language_of(path).value for path, text in case["branch"].items() if text is not None} - {"other"}


def test_every_bug_rule_has_a_kind_and_a_look_alike_in_two_languages() -> None:
    for rule in BUG_RULES:
        cases = _rule_cases(rule)
        firing = set().union(*(_languages(case) for case in cases
                               if any(item["rule"] == rule for item in case.get("expect", []))))
        silent = set().union(*(_languages(case) for case in cases
                               if not any(item["rule"] == rule for item in case.get("expect", []))))
        assert len(firing & silent) >= 2, (
            f"{rule}: a case that must fire and a look-alike that must not in {sorted(firing & silent)} only "
            f"(fires in {sorted(firing)}, look-alikes in {sorted(silent)})")


@pytest.mark.timeout(300)
def test_precision_and_recall_of_each_bug_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every case whose scope holds a bug rule by id or by family scores that rule's findings.
    lines, below = [], []
    cases = [case for case in load_cases() if any(_in_scope(rule, case.get("scope", [])) for rule in BUG_RULES)]
    scored = [score_case(case, tmp_path / case["name"]) for case in cases]
    for rule in BUG_RULES:
        expected = {key for case_expected, _reported in scored for key in case_expected if key[1] == rule}
        reported = {key for _expected, case_reported in scored for key in case_reported if key[1] == rule}
        found = expected & reported
        precision = len(found) / len(reported) if reported else 1.0
        recall = len(found) / len(expected) if expected else 1.0
        lines.append(f"  {rule}: precision {precision:.3f}, recall {recall:.3f} "
                     f"({len(found)} found, {len(reported - expected)} false, {len(expected - reported)} missed)")
        if precision < MIN_BUG_RULE_SCORE or recall < MIN_BUG_RULE_SCORE or not expected:
            below.append(rule)
    with capsys.disabled():
        print("\nbug rules on the corpus:\n" + "\n".join(lines))
    assert not below, f"below {MIN_BUG_RULE_SCORE} precision or recall (or no case): {below}"
