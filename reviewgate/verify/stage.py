"""The verify as a stage of the gate: find the manifest, decide which secrets it is granted,
run it, or say why there is none."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from reviewgate.ci.context import CiContext
from reviewgate.config import CONFIG_FILE, Config
from reviewgate.errors import ConfigError
from reviewgate.freeze.git import TreeReader
from reviewgate.tomlfile import parse_toml
from reviewgate.verify.outcome import VerifyOutcome, VerifyStatus

if TYPE_CHECKING:
    from reviewgate.verify.environment import SecretGrant
    from reviewgate.verify.manifest import Manifest


def verify_repository(
    repo: Path,
    config: Config,
    *,
    output_dir: Path,
    ci: CiContext,
    stdout: TextIO,
    environ: Mapping[str, str] | None = None,
    grant_commit: str | None = None,
    guarded_commits: tuple[str, ...] = (),
    leave_out: tuple[Path, ...] = (),
    allow_without_isolation: bool = False,
) -> VerifyOutcome:
    """The verify for one gate run: ABSENT when disabled (--no-verify, verify.enabled = false)
    or when the repository has no manifest ("A repository without
    .prepcook/scripts.toml has no verify"), FAILED when the merge base `grant_commit` has one
    the branch removed; a malformed manifest is a ConfigError (exit 2).
    Secrets are granted by the manifest at `grant_commit` (the merge base), or by the
    working-tree manifest when there is none (`reviewgate verify` without --base).
    The verify runs on a copy of the tree less `leave_out` (the cache); the git store, with the
    trees of `guarded_commits`, and the gate's installation are checked afterwards (verify/tamper.py)."""
    if not config.verify.enabled:
        return VerifyOutcome(
            status=VerifyStatus.ABSENT, reason="verify disabled (--no-verify or verify.enabled = false)"
        )
    path = repo / config.verify.manifest
    if not path.is_file():
        if grant_commit is not None and TreeReader(repo, grant_commit).read_bytes(config.verify.manifest) is not None:
            return _manifest_removed(config.verify.manifest, grant_commit)
        return VerifyOutcome(
            status=VerifyStatus.ABSENT, reason=f"no verify manifest ({config.verify.manifest})"
        )
    # The manifest reader and the runner: only a run with a verify loads them.
    from reviewgate.verify.manifest import load_manifest
    from reviewgate.verify.runner import run_verify
    from reviewgate.verify.tamper import take_fingerprint, tamper_finding

    manifest = load_manifest(path, config.verify.manifest)
    before = take_fingerprint(repo, guarded_commits)
    outcome = run_verify(
        manifest,
        repo=repo,
        output_dir=output_dir,
        ci=ci,
        stdout=stdout,
        environ=environ,
        grant=secret_grant(repo, config, manifest, grant_commit),
        log_limit=config.verify.log_limit,
        leave_out=leave_out,
        allow_without_isolation=allow_without_isolation,
    )
    changed = take_fingerprint(repo, guarded_commits).changed_since(before)
    if not changed:
        return outcome
    return outcome._replace(status=VerifyStatus.FAILED, tampered=changed,
                            reason=f"the verify changed the gate's own files: {', '.join(changed)}",
                            findings=(tamper_finding(manifest.source, changed), *outcome.findings))


def _manifest_removed(manifest: str, merge_base: str) -> VerifyOutcome:
    """The target side has a manifest the branch deleted or moved: a failed verify, not an absent one."""
    from reviewgate.verify.failure import removed_manifest_finding

    reason = f"the change removes the verify manifest {manifest} (present at the merge base {merge_base[:12]})"
    return VerifyOutcome(status=VerifyStatus.FAILED, reason=reason, manifest=manifest,
                         findings=(removed_manifest_finding(manifest, merge_base),))


def secret_grant(repo: Path, config: Config, manifest: Manifest, grant_commit: str | None) -> SecretGrant:
    """The names the verify may pass: the manifest's `secrets` at `grant_commit` (else the
    working tree's) plus `[verify] secrets`. A withheld name in the config is a ConfigError."""
    from reviewgate.verify.environment import SecretGrant, is_withheld  # with the verify only

    reviewer_keys = frozenset(_reviewer_key_names(config))
    configured = config.verify.secrets
    refused = [name for name in configured if is_withheld(name, reviewer_keys)]
    if refused:
        raise ConfigError(
            f"{config.source or CONFIG_FILE}: verify.secrets: {', '.join(refused)} is never passed to the app "
            "under review (a forge token, an action input or a reviewer's key variable)"
        )
    if grant_commit is None:
        return SecretGrant(granted=frozenset((*manifest.secrets, *configured)), configured=configured,
                           reviewer_keys=reviewer_keys)
    source = f"the manifest at the merge base {grant_commit[:12]}"
    text = TreeReader(repo, grant_commit).read_text(config.verify.manifest)
    if text is None:
        reason = "the manifest is new in this branch: no secrets are granted until it is merged"
        return SecretGrant(granted=frozenset(configured), source=source, configured=configured,
                           reviewer_keys=reviewer_keys, reason=reason, notes=(reason,))
    base_secrets = _listed_secrets(text, f"{config.verify.manifest} at {grant_commit[:12]}")
    if base_secrets is None:
        reason = "it has no readable secrets list there: no secrets are granted from it"
        return SecretGrant(granted=frozenset(configured), source=source, configured=configured,
                           reviewer_keys=reviewer_keys, reason=reason, notes=(f"{source}: {reason}",))
    return SecretGrant(granted=frozenset((*base_secrets, *configured)), source=source, configured=configured,
                       reviewer_keys=reviewer_keys)


def _listed_secrets(text: str, source: str) -> tuple[str, ...] | None:
    """The `secrets` list of a manifest as the target branch has it, read leniently: it was
    valid under whatever rules held when it was merged; None when it cannot be read."""
    try:
        listed = parse_toml(text.encode("utf-8"), source).get("secrets", [])
    except ConfigError:
        return None
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        return None
    return tuple(listed)


def _reviewer_key_names(config: Config) -> set[str]:
    """The reviewers' API key variables: the app under review is not given them."""
    return {settings.api_key_env for settings in config.reviewers.values() if settings.api_key_env}
