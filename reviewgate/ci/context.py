"""The CI facts the rest of the gate needs, as one immutable record."""

from __future__ import annotations

from typing import NamedTuple


class CiContext(NamedTuple):
    """What the CI run (or a local one) says about the change: its provider, event, base and head."""

    provider: str  # github | gitlab | local
    event_name: str | None = None
    # The base and head this CI run says to review, and which variable said so.
    base_sha: str | None = None
    head_sha: str | None = None
    base_source: str | None = None
    default_branch: str | None = None
    head_source: str | None = None
    # When the event names no base commit (new branch, force-push, schedule): the base is the
    # merge-base with this branch on origin, and base_source says why.
    base_branch: str | None = None
    # Where GitHub wants step summaries and outputs (files named by the runner).
    step_summary_path: str | None = None
    output_path: str | None = None
    repository: str | None = None
    server_url: str | None = None
    api_url: str | None = None
    run_url: str | None = None
    pull_request_number: int | None = None
    is_fork: bool = False
    # The head branch's name where CI knows it (a PR checkout is a detached merge commit).
    head_branch: str | None = None

    @property
    def is_github(self) -> bool:
        return self.provider == "github"

    @property
    def is_gitlab(self) -> bool:
        return self.provider == "gitlab"
