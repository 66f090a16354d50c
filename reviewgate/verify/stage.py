"""The verify as a stage of the gate: find the manifest, run it, or say why there is none."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TextIO

from reviewgate.ci.context import CiContext
from reviewgate.config import Config
from reviewgate.verify.manifest import load_manifest
from reviewgate.verify.outcome import VerifyOutcome, VerifyStatus
from reviewgate.verify.runner import run_verify


def verify_repository(
    repo: Path,
    config: Config,
    *,
    output_dir: Path,
    ci: CiContext,
    stdout: TextIO,
    environ: Mapping[str, str] | None = None,
) -> VerifyOutcome:
    """The verify for one gate run: ABSENT when disabled (--no-verify, verify.enabled = false)
    or when the repository has no manifest (seed 000: "A repository without
    .prepcook/scripts.toml has no verify"); a malformed manifest is a ConfigError (exit 2)."""
    if not config.verify.enabled:
        return VerifyOutcome(
            status=VerifyStatus.ABSENT, reason="verify disabled (--no-verify or verify.enabled = false)"
        )
    path = repo / config.verify.manifest
    if not path.is_file():
        return VerifyOutcome(
            status=VerifyStatus.ABSENT, reason=f"no verify manifest ({config.verify.manifest})"
        )
    manifest = load_manifest(path, config.verify.manifest)
    return run_verify(
        manifest,
        repo=repo,
        output_dir=output_dir,
        ci=ci,
        stdout=stdout,
        environ=environ,
        withheld=_reviewer_key_names(config),
    )


def _reviewer_key_names(config: Config) -> Collection[str]:
    """The reviewers' API key variables: the app under review is not given them."""
    return {settings.api_key_env for settings in config.reviewers.values() if settings.api_key_env}
