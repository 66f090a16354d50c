"""What one gate run is asked to review, and the first stages that need nothing else: read the
policy at the target side and freeze the target. Kept apart from run.py so `reviewgate freeze`
starts without importing the reviewers, the forge clients and the sinks (the freeze benchmark
counts start-up)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from reviewgate.ci.context import CiContext
from reviewgate.config import Config, Overrides, apply_overrides, load_config
from reviewgate.freeze.bundle import freeze_bundle, reject_with_bundle
from reviewgate.freeze.exclusions import ExclusionRules
from reviewgate.freeze.freeze import FrozenTarget, ResolvedRefs, freeze, resolve_refs
from reviewgate.freeze.shallow import FetchLog, find_merge_base
from reviewgate.freeze.tooling import Tooling, tooling_at
from reviewgate.own_directories import DEFAULT_OUTPUT_DIRECTORY, cache_directory, in_repository, inside_repository
from reviewgate.policy.changes import PolicyReview, review_policy_change
from reviewgate.policy.source import (
    PolicyOrigin,
    Side,
    bundle_policy,
    commit_side,
    disk_side,
    policy_at,
    policy_files,
    uncommitted_config,
)


class RunOptions(NamedTuple):
    """What the command line asked of one run, before the config is read."""

    start: Path = Path(".")
    base: str | None = None
    head: str | None = None  # None: the head CI names, else HEAD
    config_path: Path | None = None
    output_dir: Path = Path(DEFAULT_OUTPUT_DIRECTORY)  # relative: to the repository root
    overrides: Overrides = Overrides()
    bundle: tuple[Path, ...] = ()  # --bundle: review these documents instead of a diff
    include_dirty: bool = False  # --include-dirty: review uncommitted changes too (local runs)
    # The branch whose policy judges the change, when it is not the base (a pre-push review of a
    # branch against its own remote tip is judged by the default branch's policy): the config is
    # read at the merge base of this commit and the head.
    policy_base: str | None = None
    # --allow-verify-without-isolation: run the verify where it has no boundary (same user, no
    # namespaces) although the job holds credentials. From the workflow only, never the branch.
    allow_verify_without_isolation: bool = False


class Policy(NamedTuple):
    """The config in force (flags applied), where it was read, and the refs it was read at."""

    config: Config
    file_config: Config  # before flags: what the branch's config is compared with
    origin: PolicyOrigin
    refs: ResolvedRefs | None  # None for a bundle
    head_side: Side | None = None
    # A config file in the working tree that is not the policy in force (not at the merge base).
    uncommitted: str | None = None
    base_side: Side | None = None  # the merge base: its tooling files say what is generated or test input


def load_run_config(repo: Path, options: RunOptions) -> Config:
    """The working tree's config with flags applied: for `reviewgate verify`, which reviews no change."""
    return apply_overrides(load_config(repo, options.config_path), options.overrides)


def load_policy(repo: Path, options: RunOptions, context: CiContext) -> Policy:
    """Resolve base, merge base and head, then read the config at the merge base (flags win
    over it). A bundle has no base: its config is the working tree's."""
    if options.bundle:
        reject_with_bundle(options.base, options.head, options.include_dirty)
        config, origin = bundle_policy(repo, options.config_path)
        return Policy(apply_overrides(config, options.overrides), config, origin, None)
    # The policy's files read with the refs: when the merge base is the base, no process of their own.
    refs = resolve_refs(repo, base=options.base, head=options.head, ci=context,
                        read_ahead=policy_files(repo, options.config_path))
    # --include-dirty reviews the working tree, so that is the change's side of the config.
    head_side = disk_side(repo) if options.include_dirty else commit_side(repo, refs.head_sha, "head")
    policy_commit = refs.merge_base
    if options.policy_base is not None:
        policy_commit = find_merge_base(repo, options.policy_base, refs.head_sha, "the policy's branch and the head",
                                        FetchLog(provider=context.provider))
    base_side = commit_side(repo, policy_commit, "merge base")
    config, origin = policy_at(repo, options.config_path, base_side, head_side)
    # Local runs only: in CI the working tree is the branch's, whose config is compared from its commit.
    uncommitted = (uncommitted_config(repo, options.config_path, base_side, origin, refs.base_ref)
                   if context.provider == "local" else None)
    return Policy(apply_overrides(config, options.overrides), config, origin, refs, head_side, uncommitted,
                  base_side=base_side)


def review_policy(policy: Policy) -> PolicyReview:
    if policy.head_side is None:
        return PolicyReview(policy.origin)
    review = review_policy_change(policy.origin, policy.file_config, policy.head_side)
    if policy.uncommitted is None:
        return review
    return review._replace(notes=(*review.notes, policy.uncommitted))


def freeze_target(repo: Path, policy: Policy, options: RunOptions, for_review: bool = False) -> FrozenTarget:
    config = policy.config
    own = [in_repository(repo, options.output_dir), cache_directory(config, repo)]
    tooling = tooling_at(policy.base_side.read) if policy.base_side is not None else Tooling()
    rules = ExclusionRules(exclude=config.review.exclude, include=config.review.include,
                           own_directories=inside_repository(repo, [item for item in own if item is not None]),
                           generated=tooling.generated)
    if policy.refs is None:
        return freeze_bundle(repo, options.bundle, rules)
    return freeze(repo, base=options.base, head=options.head, rules=rules, include_dirty=options.include_dirty,
                  refs=policy.refs, test_inputs=tooling.test_inputs,
                  shipped_programs=tooling.shipped_programs, for_review=for_review)
