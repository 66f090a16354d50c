"""What one gate run is asked to review, and the first stage that needs nothing else: load the
config and freeze the target. Kept apart from run.py so `reviewgate freeze` starts without
importing the reviewers, the forge clients and the sinks (the freeze benchmark counts start-up)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reviewgate.bundle import freeze_bundle, reject_with_bundle
from reviewgate.ci.context import CiContext
from reviewgate.config import Config, Overrides, apply_overrides, load_config
from reviewgate.exclusions import ExclusionRules
from reviewgate.target import FrozenTarget, freeze


@dataclass(frozen=True)
class RunOptions:
    start: Path = Path(".")
    base: str | None = None
    head: str | None = None  # None: the head CI names, else HEAD
    config_path: Path | None = None
    output_dir: Path = Path(".reviewgate")
    overrides: Overrides = field(default_factory=Overrides)
    bundle: tuple[Path, ...] = ()  # --bundle: review these documents instead of a diff
    include_dirty: bool = False  # --include-dirty: review uncommitted changes too (local runs)


def load_run_config(repo: Path, options: RunOptions) -> Config:
    return apply_overrides(load_config(repo, options.config_path), options.overrides)


def freeze_target(repo: Path, config: Config, options: RunOptions, context: CiContext) -> FrozenTarget:
    rules = ExclusionRules(exclude=config.review.exclude, include=config.review.include)
    if options.bundle:
        reject_with_bundle(options.base, options.head, options.include_dirty)
        return freeze_bundle(repo, options.bundle, rules)
    return freeze(repo, base=options.base, head=options.head, ci=context, rules=rules,
                  include_dirty=options.include_dirty)
