"""The registry of the builtin reviewer: every rule and every lens, gathered from the modules that
declare them (each a `RULES` tuple of reviewers/builtin/rule.py's `Rule`, and the `LENSES` that
check them), one line per module, in the order the lenses run. Rule ids are the names
`reviewgate: ignore[...]` and `[lenses] disable` take; docs/lenses.md is written from the
declarations (`python tools/rule_docs.py`)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from reviewgate.reviewers.builtin.rule import Rule

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.engine import Lens

# In the order of weight of findings: reuse, readability, tests, swallowed failures, security,
# the bug rules (minor until their measured record earns more), process, suppressions.
_MODULES = (
    "lenses.duplication.lens",
    "lenses.readability",
    "lenses.tests_needed",
    "lenses.swallowed.python",
    "lenses.swallowed.other_languages",
    "lenses.unhandled_rejection",
    "lenses.security.fallback",
    "lenses.secrets",
    "lenses.security.lens",
    "lenses.open_redirect.lens",
    "lenses.regex_injection",
    "lenses.line_anchors",
    "lenses.prototype_pollution",
    "lenses.discarded_go_error",
    "lenses.wrong_exception",
    "lenses.literal_typo",
    "lenses.modulo_bias",
    "lenses.listener_leak",
    "lenses.scheme_case",
    "lenses.runtime_minimum",
    "lenses.joined_set_cookie",
    "lenses.jwt_algorithm",
    "lenses.error_cause",
    "lenses.format_string",
    "lenses.index_bound",
    "lenses.catastrophic_regex",
    "lenses.process",
    "suppressions",
)
_DECLARING = tuple(import_module(f"reviewgate.reviewers.builtin.{name}") for name in _MODULES)

RULES: tuple[Rule, ...] = tuple(rule for module in _DECLARING for rule in module.RULES)
LENSES: tuple[Lens, ...] = tuple(lens for module in _DECLARING for lens in module.LENSES)
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
BUILTIN_RULES: tuple[str, ...] = tuple(RULES_BY_ID)
# A family (the part before the slash) names all its rules at once: `ignore[security]`.
RULE_FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(rule.split("/", 1)[0] for rule in BUILTIN_RULES))


def is_known_rule(name: str) -> bool:
    return name in RULES_BY_ID or name in RULE_FAMILIES


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
