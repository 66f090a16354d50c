"""The `[lenses]` config section, validated here because the lenses own it (config.py OPEN_SECTIONS)."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewgate.config import Config, ConfigWarning
from reviewgate.errors import ConfigError

SECTION = "lenses"


class ReproductionPolicy(str, enum.Enum):
    """When a change must come with a reproduction (seed 000: "no reproduction ... is the first finding")."""

    NEVER = "never"
    FIXES = "fixes"  # only changes marked as a fix (branch or head subject starting fix/bug/hotfix)
    ALWAYS = "always"


@dataclass(frozen=True)
class LensSettings:
    require_reproduction: ReproductionPolicy = ReproductionPolicy.FIXES
    disable: tuple[str, ...] = ()  # rule ids (or rule families like "readability") not to run

    def enabled(self, rule: str) -> bool:
        family = rule.split("/", 1)[0]
        return rule not in self.disable and family not in self.disable


_KNOWN_KEYS = ("require_reproduction", "disable")


def parse_lens_settings(
    section: Mapping[str, Any], source: str = "config", warn: bool = True
) -> LensSettings:
    """Unknown keys warn; a wrong type or value is a ConfigError naming `source: lenses.key`."""
    for key in section:
        if warn and key not in _KNOWN_KEYS:
            warnings.warn(f"{source}: {SECTION}.{key}: unknown key, ignored", ConfigWarning, stacklevel=2)
    policy_value = section.get("require_reproduction", ReproductionPolicy.FIXES.value)
    choices = " | ".join(f'"{item.value}"' for item in ReproductionPolicy)
    if not isinstance(policy_value, str) or policy_value not in {item.value for item in ReproductionPolicy}:
        raise ConfigError(
            f"{source}: {SECTION}.require_reproduction: expected {choices}, got {policy_value!r}"
        )
    disable = section.get("disable", [])
    if not isinstance(disable, list) or not all(isinstance(item, str) for item in disable):
        raise ConfigError(f"{source}: {SECTION}.disable: expected a list of rule ids, got {disable!r}")
    return LensSettings(require_reproduction=ReproductionPolicy(policy_value), disable=tuple(disable))


def check_lens_settings(config: Config) -> LensSettings:
    """Validate the section before any reviewer runs, so a bad value exits 2 naming the file
    (inside a reviewer every exception becomes "blocked")."""
    return parse_lens_settings(config.sections.get(SECTION, {}), config.source or "config")
