"""Step logs: `<output-dir>/verify/<step>.log`, streamed to the CI log in a collapsible group,
with every secret value masked and the app's output fenced so it cannot act as a command.

GitHub: `::group::`/`::endgroup::`, and `::stop-commands::<token>` ... `::<token>::` around the
app's output (docs: "Workflow commands for GitHub Actions", stopping and starting workflow
commands). GitLab: `\\e[0Ksection_start:<unix time>:<name>[collapsed=true]\\r\\e[0K<header>`
and `section_end` (docs: "CI/CD job logs", custom collapsible sections).
"""

from __future__ import annotations

import codecs
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TextIO

from reviewgate.ci.context import CiContext
from reviewgate.ci.workflow_commands import command, stop_commands_token
from reviewgate.config import DEFAULT_LOG_LIMIT
from reviewgate.secret_formats import mask_known_formats
from reviewgate.verify.log_cap import HeadTailCap

MASK = "***"
# The longest credential token held back from a stream until it is whole (GitHub's fine-grained
# tokens are 93 characters, OpenAI project keys about 170).
TOKEN_HOLD = 512
READ_CHUNK = 64 * 1024
# A finding's body carries the end of the failing step's log: enough to see the error, well
# under GitHub's 64 KB annotation message limit (shared/conformance/README.md).
TAIL_LINES = 60
TAIL_BYTES = 16 * 1024
_GITLAB_SECTION = "\x1b[0Ksection_"


class SecretMasker:
    """Replaces every secret value with ***, and every value in a known credential format
    (secret_formats.py), declared or not, with `[REDACTED <kind>]`. A multi-line secret is
    masked line by line, as GitHub's own masking does, so a value printed in pieces does not
    leak either; no pattern then holds a line break, which lets a stream be released at every
    line end."""

    def __init__(self, values: Iterable[str]) -> None:
        pieces = {line.strip() for value in values for line in value.splitlines() if line.strip()}
        # Longest first, so a secret that contains another is masked whole.
        self.values = tuple(sorted(pieces, key=len, reverse=True))
        self._pattern = re.compile("|".join(re.escape(item) for item in self.values)) if self.values else None
        self.longest = len(self.values[0]) if self.values else 0

    def mask(self, text: str) -> str:
        return mask_known_formats(self._pattern.sub(MASK, text) if self._pattern else text)[0]

    def stream(self) -> StreamMasker:
        return StreamMasker(self)


class StreamMasker:
    """Masks a stream that arrives in chunks: a secret split across two chunks is held back
    until it is whole, never emitted in halves."""

    def __init__(self, masker: SecretMasker) -> None:
        self.masker = masker
        self.carry = ""

    def feed(self, text: str) -> str:
        buffer = self.carry + text
        pattern = self.masker._pattern
        # A secret prefix at the very end may be completed by the next chunk: keep the last
        # longest-1 characters back, unless a whole match or a line end reaches past that point
        # (no secret piece spans a line break, so a finished line can always be released).
        cut = max(0, len(buffer) - (self.masker.longest - 1), buffer.rfind("\n") + 1)
        # A credential-format token is never released in halves either: not its start without
        # its end (the token is one run without white space).
        cut = _before_unfinished_word(buffer, cut)
        if pattern is None:
            self.carry = buffer[cut:]
            return mask_known_formats(buffer[:cut])[0]
        output: list[str] = []
        position = 0
        for match in pattern.finditer(buffer):
            if match.start() >= cut:
                break
            output.append(buffer[position : match.start()])
            output.append(MASK)
            position = match.end()
            cut = max(cut, position)
        output.append(buffer[position:cut])
        self.carry = buffer[cut:]
        return mask_known_formats("".join(output))[0]

    def flush(self) -> str:
        rest, self.carry = self.masker.mask(self.carry), ""
        return rest


def _before_unfinished_word(buffer: str, cut: int) -> int:
    """`cut`, moved back to the start of the run without white space it falls in (at most
    TOKEN_HOLD characters back), when that run may go on past the cut."""
    cut = min(cut, len(buffer))  # with no declared secret, the hold-back above is negative
    if cut < len(buffer) and buffer[cut].isspace():
        return cut
    limit = max(0, cut - TOKEN_HOLD)
    start = cut
    while start > limit and not buffer[start - 1].isspace():
        start -= 1
    return start


class CiLog:
    """Writes to the gate's stdout (the CI log) in the form the CI provider folds."""

    def __init__(self, stdout: TextIO, ci: CiContext, masker: SecretMasker) -> None:
        self.stdout, self.ci, self.masker = stdout, ci, masker
        self.lock = threading.Lock()
        self._token = ""
        self._section = ""
        self._at_line_start = True
        self._broken = False

    def _emit(self, text: str) -> None:
        with self.lock:
            if not text or self._broken:
                return
            try:
                self.stdout.write(text)
                self.stdout.flush()
            except (OSError, ValueError):
                # The CI log is gone (a closed pipe): the step logs on disk still get everything.
                self._broken = True
                return
            self._at_line_start = text.endswith("\n")

    def write(self, text: str) -> None:
        """Text from the app (already masked): on GitLab it cannot be fenced, but it cannot
        open or close our sections either."""
        self._emit(text.replace(_GITLAB_SECTION, "section_") if self.ci.is_gitlab else text)

    def line(self, text: str) -> None:
        self.write(_one_line(self.masker.mask(text)) + "\n")

    def _newline(self) -> str:
        return "" if self._at_line_start else "\n"

    def begin(self, name: str, title: str) -> None:
        title = _one_line(self.masker.mask(title))
        if self.ci.is_github:
            self._token = stop_commands_token()
            self._emit(self._newline() + command("group", title) + "\n" + f"::stop-commands::{self._token}\n")
        elif self.ci.is_gitlab:
            self._section = f"reviewgate_verify_{name}"
            self._emit(
                f"{self._newline()}\x1b[0Ksection_start:{int(time.time())}:{self._section}[collapsed=true]"
                f"\r\x1b[0K{title}\n"
            )
        else:
            self.line(f"── {title}")

    def end(self, summary: str) -> None:
        if self.ci.is_github:
            self._emit(f"{self._newline()}::{self._token}::\n::endgroup::\n")
        elif self.ci.is_gitlab:
            self._emit(f"{self._newline()}\x1b[0Ksection_end:{int(time.time())}:{self._section}\r\x1b[0K")
        self.line(summary if self.ci.is_github or self.ci.is_gitlab else f"── {summary}")


def _one_line(text: str) -> str:
    """A header line: no line breaks and no control characters (an escape code in a command
    from the manifest must not redraw the log)."""
    return "".join(character if character.isprintable() else " " for character in text)


class StepLog:
    """One step's log file, filled by a thread reading the step's output pipe; what it reads
    is masked, written to the file and, when `echo` is set, to the CI log as it arrives."""

    def __init__(
        self, path: Path, masker: SecretMasker, ci_log: CiLog | None, limit: int = DEFAULT_LOG_LIMIT
    ) -> None:
        self.path = path
        self.masker = masker
        self.ci_log = ci_log
        self.cap = HeadTailCap(limit)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")
        self._thread: threading.Thread | None = None
        # The reader thread may outlive `close` (a grandchild holding the pipe); after close
        # it drops what it reads instead of writing to a closed file.
        self._lock = threading.Lock()
        self._closed = False
        # The first error writing the file (a full disk): the output is still read to its end,
        # so the step never blocks on a full pipe, but no longer written here.
        self.write_error: OSError | None = None

    def _emit(self, text: str, capped: bool = True) -> None:
        with self._lock:
            if self._closed:
                return
            if capped:
                text = self.cap.feed(text)
            if self.write_error is None:
                try:
                    self._file.write(text)
                    self._file.flush()
                except OSError as error:
                    self.write_error = error
            if self.ci_log is not None:
                self.ci_log.write(text)

    def note(self, text: str) -> None:
        """A line of our own (e.g. why a step failed) in the log and the CI log, after the
        step's output (so after its held tail)."""
        self._emit(self.cap.finish(), capped=False)
        self._emit(self.masker.mask(text) + "\n", capped=False)

    @property
    def left_out(self) -> int:
        """Bytes of the step's output not kept (0 when it fit in the limit)."""
        return self.cap.left_out

    def follow(self, pipe: IO[bytes]) -> threading.Thread:
        """Read `pipe` into the log (masked, within the limit) until it ends; the reading thread."""
        self._thread = threading.Thread(
            target=self._pump, args=(pipe,), daemon=True, name=f"log {self.path.name}"
        )
        self._thread.start()
        return self._thread

    def _pump(self, pipe: IO[bytes]) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        masker = self.masker.stream()
        while True:
            chunk = pipe.read1(READ_CHUNK) if hasattr(pipe, "read1") else pipe.read(READ_CHUNK)
            final = not chunk
            text = masker.feed(decoder.decode(chunk, final=final))
            if final:
                text += masker.flush()
            if text:
                self._emit(text)
            if final:
                break
        pipe.close()

    def close(self, wait_seconds: float = 5.0) -> None:
        """Wait for the output to end (the pipe closes once every writer is gone), then close."""
        if self._thread is not None:
            self._thread.join(wait_seconds)
            if self._thread.is_alive():
                self.note("(output still open after the step ended; the rest is not logged)")
        self._emit(self.cap.finish(), capped=False)
        with self._lock:
            self._closed = True
            try:
                self._file.close()
            except OSError as error:  # what was still buffered could not be written
                self.write_error = self.write_error or error


def log_tail(path: Path, lines: int = TAIL_LINES, limit: int = TAIL_BYTES) -> str:
    """The last lines of a (masked) log file, at most `limit` bytes."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    kept = text.splitlines()[-lines:]
    if size > limit and kept:
        kept[0] = "… " + kept[0]
    return "\n".join(kept)
