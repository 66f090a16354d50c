"""Where the gate runs: the only package that reads CI variables (at the edge, once)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from reviewgate.ci.context import CiContext


def detect(environ: Mapping[str, str] | None = None) -> CiContext:
    env = os.environ if environ is None else environ
    # Each CI's reader (and its event parsing) is loaded only where that CI runs the gate.
    if env.get("GITHUB_ACTIONS") == "true":
        from reviewgate.ci.github import github_context

        return github_context(env)
    if env.get("GITLAB_CI") == "true":
        from reviewgate.ci.gitlab import gitlab_context

        return gitlab_context(env)
    return CiContext(provider="local")


def github_step_files(environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """$GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY in GitHub Actions, read without the event (a run
    that stopped on a malformed event still sets its outputs)."""
    env = os.environ if environ is None else environ
    if env.get("GITHUB_ACTIONS") != "true":
        return None, None
    return env.get("GITHUB_OUTPUT") or None, env.get("GITHUB_STEP_SUMMARY") or None


__all__ = ["CiContext", "detect", "github_step_files"]
