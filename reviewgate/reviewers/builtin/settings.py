"""The `[lenses]` config section, validated here because the lenses own it (config.py OPEN_SECTIONS)."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

from reviewgate.config import Config, ConfigWarning
from reviewgate.errors import ConfigError
from reviewgate.text import did_you_mean

SECTION = "lenses"
# A repository that keeps its stand-up manifest here works by the reproduction process, reproductions
# included: the reproduction rules apply to it without `require_reproduction` being set.
OPT_IN_DIRECTORY = ".prepcook"


class ReproductionPolicy(str, enum.Enum):
    """When a change must come with a reproduction ("no reproduction ... is the first finding")."""

    NEVER = "never"
    FIXES = "fixes"  # only changes marked as a fix (branch or head subject starting fix/bug/hotfix)
    ALWAYS = "always"


class LensSettings(NamedTuple):
    """The `[lenses]` table: the rules not to run, and when a reproduction is required."""

    require_reproduction: ReproductionPolicy = ReproductionPolicy.FIXES
    disable: tuple[str, ...] = ()  # rule ids (or rule families like "readability") not to run
    # Whether the config sets require_reproduction itself; the default applies only to
    # repositories that opted in with a .prepcook/ directory.
    require_reproduction_set: bool = False
    # Whether a major `reuse/duplicate-code` or `reuse/near-copy-file` finding blocks; by default they
    # are advisory (docs/lenses.md).
    block_on_duplicates: bool = False
    # Whether a major `tests/missing-tests` or `tests/fix-without-test` finding blocks; by default they
    # are advisory, as duplicate code is (docs/lenses.md).
    block_on_missing_tests: bool = False
    # Whether a major swallowed-failure finding (`correctness/swallowed-exception`, `empty-catch`,
    # `dropped-error`, `ignored-exit-status`, `unhandled-rejection`) blocks; by default they are
    # advisory, as duplicate code and missing tests are (docs/lenses.md).
    block_on_swallowed_failures: bool = False

    def enabled(self, rule: str) -> bool:
        family = rule.split("/", 1)[0]
        return rule not in self.disable and family not in self.disable


_KNOWN_KEYS = (
    "require_reproduction", "disable", "block_on_duplicates", "block_on_missing_tests", "block_on_swallowed_failures"
)


def parse_lens_settings(
    section: Mapping[str, Any], source: str = "config", warn: bool = True
) -> LensSettings:
    """Unknown keys warn; a wrong type or value is a ConfigError naming `source: lenses.key`."""
    for key in section:
        if warn and key not in _KNOWN_KEYS:
            warnings.warn(f"{source}: {SECTION}.{key}: unknown key, ignored{did_you_mean(key, _KNOWN_KEYS)}",
                          ConfigWarning, stacklevel=2)
    policy_value = section.get("require_reproduction", ReproductionPolicy.FIXES.value)
    choices = " | ".join(f'"{item.value}"' for item in ReproductionPolicy)
    if not isinstance(policy_value, str) or policy_value not in {item.value for item in ReproductionPolicy}:
        raise ConfigError(
            f"{source}: {SECTION}.require_reproduction: expected {choices}, got {policy_value!r}"
        )
    disable = section.get("disable", [])
    if not isinstance(disable, list) or not all(isinstance(item, str) for item in disable):
        raise ConfigError(f"{source}: {SECTION}.disable: expected a list of rule ids, got {disable!r}")
    if warn and disable:  # the registry loads every lens: not for an empty list
        _warn_unknown_rules(disable, source)
    return LensSettings(
        require_reproduction=ReproductionPolicy(policy_value),
        disable=tuple(disable),
        require_reproduction_set="require_reproduction" in section,
        block_on_duplicates=_switch(section, "block_on_duplicates", False, source),
        block_on_missing_tests=_switch(section, "block_on_missing_tests", False, source),
        block_on_swallowed_failures=_switch(section, "block_on_swallowed_failures", False, source),
    )


def _switch(section: Mapping[str, Any], key: str, default: bool, source: str) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: {SECTION}.{key}: expected true or false, got {value!r}")
    return value


def _warn_unknown_rules(names: list[str], source: str) -> None:
    """A name that is neither a rule id nor a family disables nothing: say which id was meant."""
    # Imported here: the registry gathers every lens, and the lenses import this module.
    from reviewgate.reviewers.builtin.rules import closest_rule, is_known_rule

    for name in names:
        if not is_known_rule(name):
            suggestion = closest_rule(name)
            guess = f"; did you mean {suggestion}?" if suggestion else ""
            warnings.warn(f"{source}: {SECTION}.disable: {name!r} names no rule{guess}", ConfigWarning, stacklevel=3)


def reproduction_rules_apply(settings: LensSettings, has_opt_in_directory: bool) -> bool:
    """The reproduction process belongs to teams that opted into it: by setting the policy or by
    keeping a .prepcook/ directory. Elsewhere the reproduction rules are off."""
    return settings.require_reproduction_set or has_opt_in_directory


def describe_reproduction_rule(settings: LensSettings, has_opt_in_directory: bool) -> str:
    """One line for `reviewgate doctor`: whether the rule is on, why, and how to change it."""
    policy = f'require_reproduction = "{settings.require_reproduction.value}"'
    if settings.require_reproduction_set:
        return f"reproduction rule on: lenses.{policy} is set in the config"
    if has_opt_in_directory:
        return (
            f"reproduction rule on ({policy}, the default): the repository has a {OPT_IN_DIRECTORY}/ "
            'directory; set lenses.require_reproduction = "never" to turn it off'
        )
    return (
        f"reproduction rule off: no {OPT_IN_DIRECTORY}/ directory and lenses.require_reproduction is not "
        'set; turn it on with [lenses] require_reproduction = "fixes" (or "always"), or add a '
        f"{OPT_IN_DIRECTORY}/ directory"
    )


def check_lens_settings(config: Config) -> LensSettings:
    """Validate the section before any reviewer runs, so a bad value exits 2 naming the file
    (inside a reviewer every exception becomes "blocked")."""
    return parse_lens_settings(config.sections.get(SECTION, {}), config.source or "config")
