"""GitLab CI: read the job's predefined variables into a CiContext."""

from __future__ import annotations

from collections.abc import Mapping

from reviewgate.ci.context import CiContext
from reviewgate.ci.events import gitlab_refs


def gitlab_context(env: Mapping[str, str]) -> CiContext:
    refs = gitlab_refs(env)
    return CiContext(
        provider="gitlab",
        event_name=env.get("CI_PIPELINE_SOURCE"),
        base_sha=refs.base_sha,
        head_sha=refs.head_sha,
        base_source=refs.base_source,
        default_branch=refs.default_branch,
        head_source=refs.head_source,
        base_branch=refs.base_branch,
        repository=env.get("CI_PROJECT_PATH"),
        server_url=env.get("CI_SERVER_URL"),
        api_url=env.get("CI_API_V4_URL"),
        run_url=env.get("CI_JOB_URL"),
        pull_request_number=refs.pull_request_number,
        is_fork=refs.is_fork,
    )
