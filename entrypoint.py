"""What the container runs: `reviewgate run` with the action's inputs mapped onto its flags.

GitHub passes each input as INPUT_<NAME> with the name upper-cased and hyphens kept
(`output-dir` -> INPUT_OUTPUT-DIR). An empty input means "not given": the config file or the
built-in default decides.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reviewgate.start_up import pause_collector

if __name__ == "__main__":  # the container's command (an import, as the tests do, keeps its collector on)
    pause_collector()  # until the run's modules are loaded (reviewgate/start_up.py)

from reviewgate.cli import exit_with, main, stopped  # noqa: E402
from reviewgate.errors import EXIT_USAGE, UsageError  # noqa: E402
from reviewgate.escaping import runner_line  # noqa: E402
from reviewgate.sharding.plan import parse_shard  # noqa: E402

TRUE_WORDS = frozenset({"true", "True", "TRUE", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "False", "FALSE", "no", "off", "0"})


@dataclass(frozen=True)
class Input:
    name: str  # the action input, as in action.yml
    flag: str  # the `reviewgate run` flag it maps onto
    kind: str = "value"  # value | list (comma or newline separated, flag repeated) | switch
    # Checks a value here, so its error names the input rather than the flag: (value, "input NAME").
    check: Callable[[str, str], object] | None = None


INPUTS = (
    Input("base", "--base"),
    Input("head", "--head"),
    Input("config", "--config"),
    Input("output-dir", "--output-dir"),
    Input("reviewers", "--reviewer", "list"),
    Input("fail-on", "--fail-on", "list"),
    Input("max-rounds", "--max-rounds"),
    Input("no-verify", "--no-verify", "switch"),
    Input("progress", "--progress", "switch"),
    Input("allow-verify-without-isolation", "--allow-verify-without-isolation", "switch"),
    Input("cache-dir", "--cache-dir"),
    Input("on-missing-key", "--on-missing-key"),
    Input("import-sarif", "--import-sarif", "list"),
    Input("sarif-filter", "--sarif-filter"),
    Input("bundle", "--bundle", "list"),
    Input("shard", "--shard", check=parse_shard),
)

# Inputs that reach the gate as environment variables rather than flags (secrets stay out of argv).
ENVIRONMENT_INPUTS = {"github-token": "GITHUB_TOKEN"}


class InputError(Exception):
    pass


def read_input(environ: Mapping[str, str], name: str) -> str:
    return environ.get(f"INPUT_{name.upper()}", "").strip()


def split_list(value: str) -> list[str]:
    return [item.strip() for line in value.splitlines() for item in line.split(",") if item.strip()]


def arguments_from_inputs(environ: Mapping[str, str]) -> list[str]:
    arguments = ["run"]
    for item in INPUTS:
        value = read_input(environ, item.name)
        if not value:
            continue
        if item.kind == "list":
            for entry in split_list(value):
                arguments += [item.flag, entry]
        elif item.kind == "switch":
            if value not in TRUE_WORDS | FALSE_WORDS:
                raise InputError(f"input {item.name}: expected true or false, got {value!r}")
            if value in TRUE_WORDS:
                arguments.append(item.flag)
        else:
            if item.check is not None:
                try:
                    item.check(value, f"input {item.name}")
                except UsageError as error:
                    raise InputError(str(error)) from None
            arguments += [item.flag, value]
    return arguments


def environment_from_inputs(environ: Mapping[str, str]) -> dict[str, str]:
    return {variable: value for name, variable in ENVIRONMENT_INPUTS.items() if (value := read_input(environ, name))}


def run(environ: Mapping[str, str]) -> int:
    try:
        arguments = arguments_from_inputs(environ)
    except InputError as error:
        sys.stderr.write(f"reviewgate: error: {runner_line(str(error))}\n")
        return stopped(EXIT_USAGE, str(error))
    os.environ.update(environment_from_inputs(environ))
    # Errors name the input the workflow set, never the flag it became.
    return main(arguments, option_names={item.flag: f"input {item.name}" for item in INPUTS})


if __name__ == "__main__":
    exit_with(run(os.environ))
