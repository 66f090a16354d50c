"""`python -m reviewgate` and the `reviewgate` command. The collector is paused before the
command's modules load, and the command turns it back on once they are loaded
(reviewgate/start_up.py); the command lives here, not in start_up, so that cli.py can import
start_up without an import circle."""

from __future__ import annotations

from typing import NoReturn

from reviewgate.start_up import pause_collector


def console() -> NoReturn:
    pause_collector()
    from reviewgate.cli import console as run_command  # after the pause: the import is what it is for

    run_command()


if __name__ == "__main__":
    console()
