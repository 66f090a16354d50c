"""GitHub Actions: read the runner's variables and event file into a CiContext."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from reviewgate.ci.context import CiContext
from reviewgate.ci.events import commented_pull_request, github_refs
from reviewgate.errors import UsageError

# GitHub caps webhook payloads at 25 MB: a bigger event file is not one the runner wrote, and is
# refused before it is read into memory.
MAX_EVENT_BYTES = 32 * 1024 * 1024


def load_event(env: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """The webhook payload the runner saved at $GITHUB_EVENT_PATH (empty when unset), and a
    name for it in error messages. A file that is named but unreadable is a usage error."""
    name = env.get("GITHUB_EVENT_PATH")
    if not name:
        return {}, "GITHUB_EVENT_PATH (unset)"
    where = f"GITHUB_EVENT_PATH ({name})"
    try:
        with Path(name).open("rb") as file:
            raw = file.read(MAX_EVENT_BYTES + 1)
    except OSError as error:
        raise UsageError(f"{where}: cannot read the event file: {error.strerror}") from None
    if len(raw) > MAX_EVENT_BYTES:
        raise UsageError(f"{where}: the event file is larger than {MAX_EVENT_BYTES // 2**20} MiB")
    try:
        data = json.loads(raw)
    except RecursionError:
        raise UsageError(f"{where}: not valid JSON: nested too deeply to read") from None
    except ValueError as error:
        raise UsageError(f"{where}: not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return data, where


def github_context(env: Mapping[str, str]) -> CiContext:
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repository = env.get("GITHUB_REPOSITORY")
    run_id = env.get("GITHUB_RUN_ID")
    run_url = f"{server}/{repository}/actions/runs/{run_id}" if repository and run_id else None
    event, where = load_event(env)
    refs = github_refs(env.get("GITHUB_EVENT_NAME"), event, env, where)
    if refs.pull_request_number is None:
        refs = replace(refs, pull_request_number=commented_pull_request(event))
    return CiContext(
        provider="github",
        event_name=env.get("GITHUB_EVENT_NAME"),
        **refs.context_fields(),
        step_summary_path=env.get("GITHUB_STEP_SUMMARY") or None,
        output_path=env.get("GITHUB_OUTPUT") or None,
        repository=repository,
        server_url=server,
        api_url=env.get("GITHUB_API_URL", "https://api.github.com"),
        run_url=run_url,
        head_branch=env.get("GITHUB_HEAD_REF") or None,  # set on pull_request events only
    )
