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


__all__ = ["CiContext", "detect"]
