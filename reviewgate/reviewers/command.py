"""The `command` provider: any agent CLI (`claude -p`, `codex exec`, `gemini -p`, a script).

The prompt goes on stdin, or into a file when an argument holds `{prompt_file}`; the JSON
review comes back on stdout. The command line is a list of arguments, never a shell string.
It runs in a read-only snapshot of the head tree (model/snapshot.py); a change to the snapshot
or to the real checkout is a reviewer mutation and blocks. The agent runs in its own session:
at its timeout, past the answer cap (`max_answer_bytes`) or when the gate is cancelled, its whole
process group is killed, and the snapshot and prompt directories are removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from reviewgate import stopping
from reviewgate.cache_trust import CACHE_KEY_VARIABLE
from reviewgate.chunk_store import ChunkStore
from reviewgate.config import ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.model.agent_output import quoted, read_agent_output
from reviewgate.reviewers.model.deadline import DeadlinePassed, bounded
from reviewgate.reviewers.model.engine import ModelReviewer, Reply
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import ModelOptions, parse_options
from reviewgate.reviewers.model.prompt import Conversation
from reviewgate.reviewers.model.rendering import estimate_tokens
from reviewgate.reviewers.model.snapshot import (
    checkout_fingerprint,
    export_snapshot,
    remove_snapshot,
    tree_fingerprint,
)
from reviewgate.target.git import git_text

PROMPT_PLACEHOLDER = "{prompt_file}"
MAX_ERROR_READ = 4096  # the end of the agent's stderr (or stdout) read to explain a failure
POLL_SECONDS = 0.05  # how often the wait for the agent looks at its deadline, size and a stop


class CommandTransport:
    def __init__(self, settings: ReviewerSettings, options: ModelOptions) -> None:
        self.settings, self.options = settings, options
        self.working_directory: Path | None = None

    def _run(self, argv: list[str], stdin: Path, stdout: Path, stderr: Path) -> int:
        """The agent's exit code. Its output goes to files (memory stays bounded whatever it
        prints); the wait polls, so the timeout, the answer cap and a stop request end it."""
        try:
            timeout = bounded(self.settings.timeout)  # within the chunk's deadline too
        except DeadlinePassed as passed:
            raise TransportBlocked(str(passed)) from None
        with stdin.open("rb") as source, stdout.open("wb") as answer, stderr.open("wb") as errors:
            try:
                # The agent reads the branch and may run what it finds: never the gate's cache key.
                environment = {name: value for name, value in os.environ.items() if name != CACHE_KEY_VARIABLE}
                process = subprocess.Popen(argv, cwd=self.working_directory, stdin=source, stdout=answer,
                                           stderr=errors, start_new_session=True, env=environment)
            except OSError as error:
                raise TransportBlocked(f"cannot start {argv[0]!r}: {error.strerror or error}") from None
        deadline = time.monotonic() + timeout
        problem: str | None = None
        with stopping.on_stop(lambda: _kill_group(process)):
            while problem is None:
                try:
                    returncode = process.wait(timeout=POLL_SECONDS)
                except subprocess.TimeoutExpired:
                    returncode = None
                if returncode is not None and stopping.stop_reason() is None:
                    return returncode
                if stopping.stop_reason() is not None:  # the stop killed it, or is about to
                    problem = str(stopping.stop_reason())
                elif time.monotonic() > deadline:
                    problem = f"{argv[0]!r} gave no answer within {timeout:g}s (timeout)"
                elif stdout.stat().st_size > self.options.max_answer_bytes:
                    problem = (f"{argv[0]!r} printed more than the cap of {self.options.max_answer_bytes:,} "
                               "bytes (max_answer_bytes); it was stopped")
        _kill_group(process)
        process.wait()
        raise TransportBlocked(problem)

    def run_notes(self) -> list[str]:
        return []

    def complete(self, conversation: Conversation, key: str | None, max_output_tokens: int | None = None) -> Reply:
        """The agent's answer (it has no token cap to set: `max_output_tokens` is not used)."""
        prompt = conversation.as_text().encode("utf-8", "surrogateescape")
        with tempfile.TemporaryDirectory(prefix="reviewgate-prompt-") as scratch, \
                stopping.tracked(Path(scratch), remove_snapshot):
            prompt_file = Path(scratch) / "prompt.md"
            prompt_file.write_bytes(prompt)
            uses_file = any(PROMPT_PLACEHOLDER in part for part in self.options.command)
            argv = [part.replace(PROMPT_PLACEHOLDER, str(prompt_file)) for part in self.options.command]
            stdin = prompt_file if not uses_file else Path(os.devnull)
            stdout, stderr = Path(scratch) / "answer", Path(scratch) / "errors"
            returncode = self._run(argv, stdin, stdout, stderr)
            answer_bytes = stdout.read_bytes()  # under the cap: checked while it ran, and again here
            with stderr.open("rb") as errors:
                errors.seek(max(0, stderr.stat().st_size - MAX_ERROR_READ))
                error_tail = errors.read()
        if len(answer_bytes) > self.options.max_answer_bytes:
            raise TransportBlocked(f"{argv[0]!r} printed more than the cap of "
                                   f"{self.options.max_answer_bytes:,} bytes (max_answer_bytes)")
        printed = answer_bytes.decode("utf-8", "replace")
        answer = read_agent_output(printed)
        if returncode != 0:
            raise TransportBlocked(f"{argv[0]!r} exited with code {returncode}: "
                                   f"{_failure_detail(error_tail, answer.error, printed)}")
        if answer.error is not None:
            raise TransportBlocked(f"{argv[0]!r} reported an error: {answer.error}")
        # Without the CLI's own counts (plain text output), the estimate keeps the cost report honest enough.
        return Reply(
            answer.text,
            estimate_tokens(prompt.decode("utf-8", "replace")) if answer.input_tokens is None else answer.input_tokens,
            estimate_tokens(answer.text) if answer.output_tokens is None else answer.output_tokens,
            cache_read_tokens=answer.cache_read_tokens,
            cache_write_tokens=answer.cache_write_tokens,
        )


def _failure_detail(error_tail: bytes, reported: str | None, printed: str) -> str:
    """Why the agent failed, in its own words: the last line of stderr; else the error its JSON
    output reports; else the last line of stdout (Claude Code prints `Not logged in` there)."""
    lines = error_tail.decode("utf-8", "replace").strip().splitlines()
    if lines:
        return quoted(lines[-1])
    if reported is not None:
        return reported
    last = printed.strip().rsplit("\n", 1)[-1]
    return f"(stderr is empty; stdout:) {quoted(last)}" if last else "no error output"


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """The agent and every process it started (its own session); gone already is fine."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class CommandReviewer(ModelReviewer):
    """Runs the shared flow with the agent inside a snapshot, and checks nothing was changed."""

    transport: CommandTransport

    def chunk_key_extra(self, request: ReviewRequest) -> dict[str, Any]:
        """The agent reads the whole head tree, not only its prompt: the tree is part of every
        chunk's key, so a stored answer is reused only for the same tree."""
        return {"head_tree": git_text(request.repo_root, "rev-parse", f"{request.target.head_sha}^{{tree}}")}

    def review(self, request: ReviewRequest, store: ChunkStore | None = None) -> ReviewerOutcome:
        branch_paths = {change.path for change in request.target.files}
        with tempfile.TemporaryDirectory(prefix="reviewgate-snapshot-") as scratch, \
                stopping.tracked(Path(scratch), remove_snapshot):  # read-only inside: see remove_snapshot
            snapshot = Path(scratch) / "tree"
            try:
                export_snapshot(request.repo_root, request.target.head_sha, snapshot, branch_paths)
                before = (tree_fingerprint(snapshot), checkout_fingerprint(request.repo_root))
                self.transport.working_directory = snapshot
                outcome = super().review(request, store)
                after = (tree_fingerprint(snapshot), checkout_fingerprint(request.repo_root))
            finally:
                remove_snapshot(snapshot)
        changed = [
            name
            for name, old, new in zip(("its snapshot", "the real checkout"), before, after, strict=True)
            if old != new
        ]
        if changed:
            reason = (
                f"reviewer mutation: the agent changed {' and '.join(changed)}; a reviewer must be "
                "read-only, so its review is not used"
            )
            return outcome._replace(status=ReviewerStatus.BLOCKED, reason=reason, findings=())
        return outcome


def build(settings: ReviewerSettings) -> CommandReviewer:
    options = parse_options(settings)
    return CommandReviewer(
        settings, options, CommandTransport(settings, options), settings.api_key_env or None
    )
