"""What the verify checks and hands the app before anything runs: the preconditions (every
secret granted, set and non-empty, every declared port free; a failure is the setup's side)
and each step's environment.

The app under review is untrusted: its steps get an environment built from an allowlist (deny
by default), never the gate's own environment less a blocklist. A variable a runner adds
tomorrow (a new token) then stays out without anyone noticing it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from reviewgate.cache_trust import CACHE_KEY_VARIABLE
from reviewgate.verify.manifest import Manifest
from reviewgate.verify.processes import RUN_COOKIE_VARIABLE, busy_ports

# The runner basics a build needs, passed when set. Documented in docs/verify.md.
RUNNER_BASICS = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "SHELL",
    "TERM", "CI", "HOSTNAME",
    # Toolchains set up by earlier CI steps (actions/setup-python, setup-java, setup-go, ...).
    "LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "pythonLocation", "Python_ROOT_DIR", "Python3_ROOT_DIR",
    "VIRTUAL_ENV", "JAVA_HOME", "GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "CARGO_HOME",
    "RUSTUP_HOME", "DOTNET_ROOT", "ANDROID_HOME", "ANDROID_SDK_ROOT", "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
})
RUNNER_BASIC_PREFIXES = ("LC_",)
# CI metadata that names what is built, never a credential. Not GITHUB_ENV / GITHUB_PATH /
# GITHUB_OUTPUT / GITHUB_STEP_SUMMARY (files through which the app could change later steps),
# not CI_REPOSITORY_URL (it embeds the job token), not GITHUB_EVENT_PATH.
CI_METADATA = frozenset({
    "GITHUB_ACTIONS", "GITHUB_SHA", "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_REF_TYPE", "GITHUB_HEAD_REF",
    "GITHUB_BASE_REF", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_OWNER", "GITHUB_RUN_ID", "GITHUB_RUN_NUMBER",
    "GITHUB_RUN_ATTEMPT", "GITHUB_WORKFLOW", "GITHUB_JOB", "GITHUB_EVENT_NAME", "GITHUB_ACTOR",
    "GITHUB_SERVER_URL", "GITHUB_API_URL", "GITHUB_WORKSPACE", "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TEMP",
    "RUNNER_TOOL_CACHE",
    "GITLAB_CI", "CI_COMMIT_SHA", "CI_COMMIT_SHORT_SHA", "CI_COMMIT_REF_NAME", "CI_COMMIT_REF_SLUG",
    "CI_COMMIT_BRANCH", "CI_COMMIT_TAG", "CI_DEFAULT_BRANCH", "CI_PIPELINE_ID", "CI_PIPELINE_SOURCE",
    "CI_JOB_ID", "CI_JOB_NAME", "CI_PROJECT_PATH", "CI_PROJECT_NAME", "CI_PROJECT_DIR", "CI_SERVER_URL",
    "CI_MERGE_REQUEST_IID", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
})
# Never handed to the app, even when the manifest or the config names them: the forge tokens,
# the runner's own (ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*) and the action inputs
# (INPUT_GITHUB-TOKEN). The configured reviewers' key variables are added by the caller.
FORGE_TOKENS = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN", "CI_JOB_JWT",
                          "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD", "CI_DEPLOY_PASSWORD"})
FORGE_TOKEN_PREFIXES = ("ACTIONS_", "INPUT_")
# The gate's own secrets: the key that proves a cache entry was written by the gate, not by the
# app (cache_trust.py). An app that had it could plant a model's answer for the next run.
GATE_SECRETS = frozenset({CACHE_KEY_VARIABLE})


def is_withheld(name: str, reviewer_keys: Collection[str]) -> bool:
    """A name the app must never get: a forge token, the gate's cache key or a configured
    reviewer's key variable."""
    return (name in FORGE_TOKENS or name in GATE_SECRETS or name.startswith(FORGE_TOKEN_PREFIXES)
            or name in reviewer_keys)


# Credentials a runner or the action puts in the job's environment (besides FORGE_TOKENS, the
# cache key and the reviewers' keys): with no boundary, a step can read them from /proc.
RUNNER_CREDENTIALS = frozenset({"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "INPUT_GITHUB-TOKEN",
                                "INPUT_GITHUB_TOKEN"})


def credentials_in(environ: Mapping[str, str], reviewer_keys: Collection[str]) -> list[str]:
    """The credentials set in `environ`: a forge or runner token, a reviewer's key, the cache key."""
    return sorted(name for name, value in environ.items() if value and (
        name in FORGE_TOKENS or name in GATE_SECRETS or name in RUNNER_CREDENTIALS or name in reviewer_keys))


def is_runner_basic(name: str) -> bool:
    return name in RUNNER_BASICS or name.startswith(RUNNER_BASIC_PREFIXES) or name in CI_METADATA


@dataclass(frozen=True)
class SecretGrant:
    """Which secret names the verify may hand the app. The grant comes from the target side
    (the manifest's `secrets` at the merge base, plus `[verify] secrets` in the config): a
    branch that adds a name to its manifest gets it only after merge, like CODEOWNERS."""

    granted: frozenset[str] = frozenset()
    # Where `granted` came from, said in every refusal ("the manifest at the merge base abc").
    source: str = "the working-tree manifest"
    # `[verify] secrets`: passed whenever set, whether or not the manifest lists them.
    configured: tuple[str, ...] = ()
    reviewer_keys: frozenset[str] = frozenset()
    # Why nothing was granted from the manifest (new in this branch, unreadable at the base).
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def passed_secret_names(manifest: Manifest, grant: SecretGrant) -> tuple[str, ...]:
    """The secret names whose values the app gets (and every output masks)."""
    names = [name for name in (*manifest.secrets, *grant.configured) if not is_withheld(name, grant.reviewer_keys)]
    return tuple(dict.fromkeys(names))


def refused_secrets(manifest: Manifest, grant: SecretGrant) -> str | None:
    """Why a name the manifest asks for cannot be had, as one message; None when all can."""
    problems = []
    withheld = [name for name in manifest.secrets if is_withheld(name, grant.reviewer_keys)]
    if withheld:
        problems.append(
            f"{', '.join(withheld)} in {manifest.source} secrets: never passed to the app under review "
            "(forge tokens, action inputs, the reviewers' key variables and the gate's cache key are withheld)"
        )
    ungranted = [name for name in manifest.secrets if name not in withheld and name not in grant.granted]
    if ungranted:
        why = f" ({grant.reason})" if grant.reason else ""
        problems.append(
            f"{', '.join(ungranted)} in {manifest.source} secrets is not granted by {grant.source}{why}: "
            "a secret this branch adds takes effect after merge (or list it in [verify] secrets in the config)"
        )
    return "; ".join(problems) or None


def check_preconditions(manifest: Manifest, grant: SecretGrant, environ: Mapping[str, str]) -> str | None:
    """What the environment lacks, as a message for whoever runs CI; None when all is there."""
    problems = []
    refused = refused_secrets(manifest, grant)
    if refused:
        problems.append(refused)
    missing = [name for name in manifest.secrets if not is_withheld(name, grant.reviewer_keys)
               and name in grant.granted and not environ.get(name)]
    if missing:
        problems.append(f"secret(s) not set or empty: {', '.join(missing)} (declared in {manifest.source})")
    busy = busy_ports(manifest.ports)
    if busy:
        problems.append(f"port(s) already in use before start: {', '.join(str(port) for port in busy)}")
    if not problems:
        return None
    if refused and len(problems) == 1:
        # Only a grant was refused: the environment is fine, the grant waits for the merge.
        return refused + "; nothing was started."
    return (
        "; ".join(problems) + ". This is the CI environment's side, not the branch's: "
        "fix the environment and re-run; nothing was started."
    )


def step_environment(
    environ: Mapping[str, str],
    manifest: Manifest,
    extra: Mapping[str, str],
    secrets: Collection[str],
    cookie: str,
) -> dict[str, str]:
    """The runner basics and CI metadata from the gate's environment, the granted `secrets`,
    the manifest's `env`, the step's own `env`, and the run cookie (last, so it cannot be
    overridden)."""
    env = {name: value for name, value in environ.items() if is_runner_basic(name) and not is_withheld(name, ())}
    env.update({name: environ[name] for name in secrets if name in environ})
    env.update(manifest.env)
    env.update(extra)
    env[RUN_COOKIE_VARIABLE] = cookie
    return env
