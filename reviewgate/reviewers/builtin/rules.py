"""Every rule id the builtin reviewer reports, gathered from the lenses that define them: the names
`reviewgate: ignore[...]` and `[lenses] disable` may use (docs/lenses.md lists each with examples)."""

from __future__ import annotations

from reviewgate.reviewers.builtin.lenses.duplication.lens import RULE_DUPLICATE, RULE_NEAR_COPY
from reviewgate.reviewers.builtin.lenses.process import (
    RULE_MISSING_REPRODUCTION,
    RULE_REPRODUCTION_NOT_RERUN,
    ReproductionFilesLens,
)
from reviewgate.reviewers.builtin.lenses.readability import RULE_COMMENTED_CODE, RULE_NARRATION, RULE_TICKET
from reviewgate.reviewers.builtin.lenses.secrets import RULE_SECRET
from reviewgate.reviewers.builtin.lenses.security.lens import (
    RULE_EVAL,
    RULE_PICKLE,
    RULE_SHELL,
    RULE_SQL,
    RULE_TLS,
    RULE_YAML,
)
from reviewgate.reviewers.builtin.lenses.swallowed.other_languages import (
    RULE_DROPPED_ERROR,
    RULE_EMPTY_CATCH,
    RULE_IGNORED_EXIT,
)
from reviewgate.reviewers.builtin.lenses.swallowed.python import PythonSwallowedFailureLens
from reviewgate.reviewers.builtin.lenses.tests_needed import RULE_FIX_WITHOUT_TEST, RULE_MISSING_TESTS
from reviewgate.reviewers.builtin.lenses.unhandled_rejection import RULE_UNHANDLED_REJECTION
from reviewgate.reviewers.builtin.rule_records import RECORDS
from reviewgate.reviewers.builtin.suppressions import RULE_MISSING_REASON, RULE_UNKNOWN_RULE

BUILTIN_RULES: tuple[str, ...] = (
    RULE_DUPLICATE,
    RULE_NEAR_COPY,
    RULE_NARRATION,
    RULE_TICKET,
    RULE_COMMENTED_CODE,
    RULE_MISSING_TESTS,
    RULE_FIX_WITHOUT_TEST,
    PythonSwallowedFailureLens.rule,
    RULE_EMPTY_CATCH,
    RULE_UNHANDLED_REJECTION,
    RULE_DROPPED_ERROR,
    RULE_IGNORED_EXIT,
    RULE_SECRET,
    RULE_SHELL,
    RULE_SQL,
    RULE_EVAL,
    RULE_YAML,
    RULE_PICKLE,
    RULE_TLS,
    *RECORDS,  # the bug rules, each with its measured record (rule_records.py)
    ReproductionFilesLens.rule,
    RULE_MISSING_REPRODUCTION,
    RULE_REPRODUCTION_NOT_RERUN,
    RULE_MISSING_REASON,
    RULE_UNKNOWN_RULE,
)
# A family (the part before the slash) names all its rules at once: `ignore[security]`.
RULE_FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(rule.split("/", 1)[0] for rule in BUILTIN_RULES))


def is_known_rule(name: str) -> bool:
    return name in BUILTIN_RULES or name in RULE_FAMILIES


def closest_rule(name: str) -> str | None:
    """The known id someone most likely meant: the only rule the name starts (`security/tls`), else
    the closest whole id or family by difflib, else the rule whose part after the slash is closest
    (a lens's category typed alone, `swallowed-failure`)."""
    started = [rule for rule in BUILTIN_RULES if name and rule.startswith(name)]
    if len(started) == 1:
        return started[0]
    import difflib  # only for a name no rule has: a run without one never loads it

    whole = difflib.get_close_matches(name, (*BUILTIN_RULES, *RULE_FAMILIES), n=1)
    if whole:
        return whole[0]
    tails = {rule.split("/", 1)[1]: rule for rule in BUILTIN_RULES}
    tail = difflib.get_close_matches(name.rsplit("/", 1)[-1], tails, n=1)
    return tails[tail[0]] if tail else None
