"""What the verify checks and hands the app before anything runs: the preconditions (every
secret set and non-empty, every declared port free; a failure is the setup's side) and each
step's environment."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from reviewgate.verify.manifest import Manifest
from reviewgate.verify.processes import busy_ports

# Variables the gate holds for itself and the app under review must not get: action inputs
# (INPUT_GITHUB-TOKEN) and the runner's own tokens. Reviewer API keys are added by the caller.
WITHHELD_PREFIXES = ("INPUT_",)
WITHHELD_NAMES = ("ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL")


def check_preconditions(manifest: Manifest, environ: Mapping[str, str]) -> str | None:
    """What the environment lacks, as a message for whoever runs CI; None when all is there."""
    problems = []
    missing = [name for name in manifest.secrets if not environ.get(name)]
    if missing:
        problems.append(f"secret(s) not set or empty: {', '.join(missing)} (declared in {manifest.source})")
    busy = busy_ports(manifest.ports)
    if busy:
        problems.append(f"port(s) already in use before start: {', '.join(str(port) for port in busy)}")
    if not problems:
        return None
    return (
        "; ".join(problems) + ". This is the CI environment's side, not the branch's: "
        "fix the environment and re-run; nothing was started."
    )


def step_environment(
    environ: Mapping[str, str], manifest: Manifest, extra: Mapping[str, str], withheld: Collection[str]
) -> dict[str, str]:
    """The gate's environment less what the app must not get, plus the manifest's `env`, plus
    the step's own `env`. A name the manifest asks for (secrets, env) is always passed."""
    wanted = set(manifest.secrets)
    env = {
        name: value
        for name, value in environ.items()
        if name in wanted
        or not (name.startswith(WITHHELD_PREFIXES) or name in WITHHELD_NAMES or name in withheld)
    }
    env.update(manifest.env)
    env.update(extra)
    return env
