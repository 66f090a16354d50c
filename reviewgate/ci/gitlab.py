"""GitLab CI: read the job's predefined variables into a CiContext."""

from __future__ import annotations

from collections.abc import Mapping

from reviewgate.ci.context import CiContext


def gitlab_context(env: Mapping[str, str]) -> CiContext:
    merge_request = env.get("CI_MERGE_REQUEST_IID")
    return CiContext(
        provider="gitlab",
        event_name=env.get("CI_PIPELINE_SOURCE"),
        default_branch=env.get("CI_DEFAULT_BRANCH") or None,
        repository=env.get("CI_PROJECT_PATH"),
        server_url=env.get("CI_SERVER_URL"),
        api_url=env.get("CI_API_V4_URL"),
        run_url=env.get("CI_JOB_URL"),
        pull_request_number=int(merge_request) if merge_request and merge_request.isdigit() else None,
    )
