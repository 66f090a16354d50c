"""How many processes the per-file stage may use (engine.worker_count), as the environment says.
A module of its own, importing nothing of the builtin reviewer: the reviewer checks the value when
it is built (a bad one is a usage error before any work), and that loads no lens."""

from __future__ import annotations

import os

from reviewgate.errors import ConfigError

# 1 runs the per-file stage here, serially (for debugging, or a runner whose core count misleads);
# unset or 0, the machine's core count.
WORKERS_VARIABLE = "REVIEWGATE_WORKERS"


def configured_workers() -> int:
    """The variable's number of processes; 0 when unset (chosen by the change's size)."""
    configured = os.environ.get(WORKERS_VARIABLE, "").strip()
    if configured and not configured.isdigit():
        raise ConfigError(
            f"{WORKERS_VARIABLE}={configured!r}: expected a whole number of processes (1 runs the lenses "
            "in one process, 0 or unset picks by the change's size)"
        )
    return int(configured or 0)
