"""CI cancellation: SIGTERM or SIGINT to the gate while the verify runs.

Teardown still runs, then the gate exits blocked ("cancelled"). The handler only
records the signal; every wait in the verify looks at it within POLL_SECONDS, stops what it
was waiting for and goes on to teardown. A second signal means the runner is about to kill
the gate (GitHub docs, "Workflow cancellation reference": SIGINT, SIGTERM after 7500 ms,
then the process tree is killed 2500 ms later): teardown hurries,
cutting the manifest's teardown step short and the start group's grace period down.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# How often a wait loop looks again; short, so a cancelled or finished wait ends quickly. Here,
# not with the process helpers, so a run without a verify does not load those (and socket).
POLL_SECONDS = 0.05


class Cancellation:
    def __init__(self) -> None:
        self.signal_name: str | None = None
        self.signals_received = 0

    @property
    def cancelled(self) -> bool:
        return self.signal_name is not None

    @property
    def hurried(self) -> bool:
        """A second signal arrived: whatever is left of teardown must be done at once."""
        return self.signals_received >= 2

    def cancel(self, signal_name: str) -> None:
        self.signals_received += 1
        if self.signal_name is None:
            self.signal_name = signal_name

    def sleep(self, seconds: float, stop_when: Callable[[], bool] | None = None) -> bool:
        """Sleep up to `seconds`; True as soon as cancelled or `stop_when()` says so."""
        deadline = time.monotonic() + seconds
        while True:
            if self.cancelled or (stop_when is not None and stop_when()):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(POLL_SECONDS, remaining))

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.cancel(signal.Signals(signum).name)

    @contextmanager
    def handling_signals(self) -> Iterator[Cancellation]:
        """Record SIGTERM/SIGINT while inside; the previous handlers come back after. Signal
        handlers can only be set from the main thread; elsewhere the default handling stays."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {signum: signal.signal(signum, self._handle) for signum in HANDLED_SIGNALS}
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
