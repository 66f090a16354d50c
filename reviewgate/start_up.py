"""The cyclic collector paused while a command's modules load.

Importing the gate's modules allocates tens of thousands of objects (functions, classes, their
dictionaries), none of them garbage, and the collector ran about 35 times over them on a one-line
change's run: 2.4% of its instructions. The entry points (`python -m reviewgate` and the
`reviewgate` command in __main__.py, the action's entrypoint.py) pause it before the first import; the command
turns it back on once its modules are loaded (cli.py), with what they made moved out of its sight
for good (`gc.freeze`: a module's objects live as long as the process, and each later full
collection would walk them again)."""

from __future__ import annotations

import gc

_paused = False


def pause_collector() -> None:
    """Off until `resume_collector`; nothing when something else turned it off already."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Back on after `pause_collector`, with everything allocated so far frozen; nothing otherwise
    (an embedding program or a test calling cli.main keeps its collector as it was)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()

