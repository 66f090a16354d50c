"""Progress on stderr for a run that takes more than a couple of seconds: the stage, files done of
the total, and the time so far. The stages call `stage` and `files_done`; the command line
`start`s it and `finish`es it. Nothing is written unless it was started, which the command line
does when stderr is a terminal or when asked (`--progress`, REVIEWGATE_PROGRESS=1, the action's
`progress` input).

Where it goes decides its form:
- a terminal: one status line, redrawn in place, shown only once the run has taken
  `SHOW_AFTER_SECONDS`, and cleared at the end (the verify's own output has the terminal to
  itself while it runs);
- GitHub Actions: each stage a collapsible group (`::group::`/`::endgroup::`, "Workflow commands
  for GitHub Actions: grouping log lines"); GitLab CI: each a collapsed section
  (`\\e[0Ksection_start:<unix time>:<name>[collapsed=true]\\r\\e[0K<header>` and `section_end`,
  "CI/CD job logs: custom collapsible sections"). The verify and the publishing stay out of any
  group: the verify writes groups of its own (groups do not nest on GitHub), and the verdict
  must not be folded away;
- anything else that asked: a plain line when a stage starts and every `LINE_EVERY_SECONDS`.

Every word written is ours (stage names, counts): no untrusted text reaches these lines.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

SHOW_AFTER_SECONDS = 2.0
REDRAW_SECONDS = 0.2
LINE_EVERY_SECONDS = 10.0
# Stages that write to the log themselves or end with the verdict: never folded, nor drawn over.
OWN_OUTPUT_STAGES = frozenset({"verify", "publish"})
STYLES = ("terminal", "github", "gitlab", "lines")


class _Reporter:
    def __init__(self, stream: TextIO, style: str, clock: Callable[[], float]) -> None:
        self.stream = stream
        self.style = style
        self.clock = clock
        self.started = clock()
        self.lock = threading.Lock()
        self.name: str | None = None
        self.stage_started = self.started
        self.total: int | None = None
        self.done = 0
        self.last_line = float("-inf")
        self.line_shown = False  # the terminal's status line is on screen
        self.stopped = threading.Event()
        self.ticker: threading.Thread | None = None
        if style in ("terminal", "lines"):  # the time goes on even when no file is done
            self.ticker = threading.Thread(target=self._tick, name="reviewgate-progress", daemon=True)
            self.ticker.start()

    # --- what the stages call ----------------------------------------------------------------

    def stage(self, name: str, total: int | None) -> None:
        with self.lock:
            self._end_stage()
            self.name, self.total, self.done = name, total, 0
            self.stage_started = self.clock()
            if self.style in ("github", "gitlab"):
                self._open_group()
            elif self.style == "lines":
                self._line_if_due(force=True)
            else:
                self._draw()

    def files_done(self, count: int) -> None:
        with self.lock:
            self.done += count
            if self.style != "terminal":  # the terminal's line is redrawn by the ticker
                self._line_if_due(force=self.total is not None and self.done >= self.total)

    def finish(self) -> None:
        self.stopped.set()
        with self.lock:
            self._end_stage()
            self.name = None
            self._clear()

    # --- the forms ----------------------------------------------------------------------------

    def _status(self) -> str:
        files = f" · {self.done}/{self.total} files" if self.total is not None else ""
        return f"reviewgate: {self.name}{files} · {self.clock() - self.started:.1f}s"

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: progress is not worth failing for
            pass

    def _tick(self) -> None:
        while not self.stopped.wait(REDRAW_SECONDS):
            with self.lock:
                if self.style == "terminal":
                    self._draw()
                else:
                    self._line_if_due(force=False)

    def _draw(self) -> None:
        """The terminal's status line, in place; not before the run has taken a couple of seconds."""
        if self.name is None or self.name in OWN_OUTPUT_STAGES:
            self._clear()
            return
        if self.clock() - self.started < SHOW_AFTER_SECONDS:
            return
        self._write(f"\r\x1b[K{self._status()}")
        self.line_shown = True

    def _clear(self) -> None:
        if self.line_shown:
            self._write("\r\x1b[K")
            self.line_shown = False

    def _line_if_due(self, force: bool) -> None:
        if self.name is None or (self.style == "lines" and self.clock() - self.started < SHOW_AFTER_SECONDS):
            return
        now = self.clock()
        if force or now - self.last_line >= LINE_EVERY_SECONDS:
            self._write(self._status() + "\n")
            self.last_line = now

    def _grouped(self) -> bool:
        return self.name is not None and self.name not in OWN_OUTPUT_STAGES

    def _open_group(self) -> None:
        header = f"reviewgate: {self.name}" + (f" ({self.total} files)" if self.total is not None else "")
        if not self._grouped():
            self._write(header + "\n")
        elif self.style == "github":
            self._write(f"::group::{header}\n")
        else:
            self._write(f"\x1b[0Ksection_start:{int(time.time())}:reviewgate_{self.name}[collapsed=true]"
                        f"\r\x1b[0K{header}\n")
        self.last_line = self.clock()

    def _end_stage(self) -> None:
        if self.name is None or self.style not in ("github", "gitlab"):
            return
        self._write(f"reviewgate: {self.name} took {self.clock() - self.stage_started:.1f}s\n")
        if not self._grouped():
            return
        if self.style == "github":
            self._write("::endgroup::\n")
        else:
            self._write(f"\x1b[0Ksection_end:{int(time.time())}:reviewgate_{self.name}\r\x1b[0K\n")


_reporter: _Reporter | None = None


def start(stream: TextIO, style: str, clock: Callable[[], float] = time.monotonic) -> None:
    """Report progress on `stream` in `style` (one of STYLES) from now on."""
    global _reporter
    if style not in STYLES:
        raise ValueError(f"progress style {style!r}: expected one of {', '.join(STYLES)}")
    finish()
    _reporter = _Reporter(stream, style, clock)


def stage(name: str, total_files: int | None = None) -> None:
    """A stage begins (`freeze`, `verify`, `review`, `publish`); the one before it ends."""
    if _reporter is not None:
        _reporter.stage(name, total_files)


def files_done(count: int = 1) -> None:
    """`count` more files of the current stage's total are done."""
    if _reporter is not None:
        _reporter.files_done(count)


def finish() -> None:
    """The last stage ends: its group is closed, the terminal's line cleared."""
    global _reporter
    if _reporter is not None:
        _reporter.finish()
        _reporter = None


def style_for(asked: bool | None, stderr_is_terminal: bool, ci_provider: str) -> str | None:
    """The form progress takes, or None for none: `asked` True or False is the user's word
    (flag, variable, input), None leaves it to whether stderr is a terminal."""
    if asked is False or (asked is None and not stderr_is_terminal):
        return None
    if ci_provider in ("github", "gitlab"):
        return ci_provider
    return "terminal" if stderr_is_terminal else "lines"
