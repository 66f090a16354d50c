"""`reviewgate doctor`'s look at the forge: is there a token, and does it reach the repository?

Publishing never fails the gate (a missing or read-only token falls back to workflow-command
annotations), so a missing token is a note; a token the forge refuses is a problem, since a
run would then publish nothing it was meant to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from reviewgate.ci.context import CiContext
from reviewgate.config import Config
from reviewgate.forge.github_api import GithubApi
from reviewgate.forge.gitlab_api import GitlabApi
from reviewgate.forge.http import ForgeDenied, ForgeError, ForgeNotFound
from reviewgate.forge.settings import parse_forge_settings

Say = Callable[[str], None]

GITHUB_PERMISSIONS = "checks: write for the check run, pull-requests: write for the comment and the label"


def check_forge(context: CiContext, config: Config, env: Mapping[str, str], *, ok: Say, note: Say,
                problem: Say) -> None:
    if context.is_github:
        _check_github(context, config, env, ok=ok, note=note, problem=problem)
    elif context.is_gitlab:
        _check_gitlab(context, config, env, ok=ok, note=note, problem=problem)
    else:
        ok("not in GitHub Actions or GitLab CI: findings go to the output files and stdout only")


def _check_github(context: CiContext, config: Config, env: Mapping[str, str], *, ok: Say, note: Say,
                  problem: Say) -> None:
    settings = parse_forge_settings(config.sections, "github", config.source)
    token = env.get("GITHUB_TOKEN")
    if not token:
        note("GITHUB_TOKEN is not set (input github-token): findings are annotated with workflow commands, "
             f"and no check run or PR comment is written; give the job {GITHUB_PERMISSIONS}")
        return
    if not context.repository or not context.api_url:
        problem("GITHUB_REPOSITORY or GITHUB_API_URL is not set: the GitHub API cannot be reached")
        return
    try:
        GithubApi(context.api_url, context.repository, token, settings.retry).repository_info()
    except (ForgeDenied, ForgeNotFound) as error:  # a 404: the token cannot see the repository
        problem(f"the GitHub token cannot read {context.repository} ({error}); it needs {GITHUB_PERMISSIONS}")
        return
    except ForgeError as error:
        problem(f"the GitHub API at {context.api_url} did not answer: {error}")
        return
    ok(f"the GitHub token reaches {context.repository}; publishing needs {GITHUB_PERMISSIONS} "
       "(a fork's token is read-only: the gate then falls back to workflow commands)")


def _check_gitlab(context: CiContext, config: Config, env: Mapping[str, str], *, ok: Say, note: Say,
                  problem: Say) -> None:
    settings = parse_forge_settings(config.sections, "gitlab", config.source)
    token = env.get("GITLAB_TOKEN")
    if not token:
        note("GITLAB_TOKEN is not set: the merge request note is skipped (CI_JOB_TOKEN cannot write notes); "
             "the Code Quality and JUnit reports work without it")
        return
    if not context.repository or not context.api_url:
        problem("CI_PROJECT_PATH or CI_API_V4_URL is not set: the GitLab API cannot be reached")
        return
    try:
        username = GitlabApi(context.api_url, context.repository, token, settings.retry).current_username()
    except (ForgeDenied, ForgeNotFound) as error:  # a 404: the token cannot see the repository
        problem(f"GitLab refused GITLAB_TOKEN ({error}); it needs the api scope")
        return
    except ForgeError as error:
        problem(f"the GitLab API at {context.api_url} did not answer: {error}")
        return
    ok(f"GITLAB_TOKEN works as @{username}; the merge request note needs the api scope")
