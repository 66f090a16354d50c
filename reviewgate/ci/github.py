"""GitHub Actions: read the runner's variables into a CiContext."""

from __future__ import annotations

from collections.abc import Mapping

from reviewgate.ci.context import CiContext


def github_context(env: Mapping[str, str]) -> CiContext:
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repository = env.get("GITHUB_REPOSITORY")
    run_id = env.get("GITHUB_RUN_ID")
    run_url = f"{server}/{repository}/actions/runs/{run_id}" if repository and run_id else None
    return CiContext(
        provider="github",
        event_name=env.get("GITHUB_EVENT_NAME"),
        step_summary_path=env.get("GITHUB_STEP_SUMMARY") or None,
        output_path=env.get("GITHUB_OUTPUT") or None,
        repository=repository,
        server_url=server,
        api_url=env.get("GITHUB_API_URL", "https://api.github.com"),
        run_url=run_url,
    )
