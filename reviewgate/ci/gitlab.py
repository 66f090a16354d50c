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
        **refs.context_fields(),
        repository=env.get("CI_PROJECT_PATH"),
        server_url=env.get("CI_SERVER_URL"),
        api_url=env.get("CI_API_V4_URL"),
        run_url=env.get("CI_JOB_URL"),
        head_branch=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") or env.get("CI_COMMIT_BRANCH") or None,
    )
