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
from dataclasses import replace
from pathlib import Path
from typing import Any

from reviewgate import stopping
from reviewgate.cache_trust import CACHE_KEY_VARIABLE
from reviewgate.config import ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.review_cache import ChunkStore
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
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
from reviewgate.text import printable, truncate

PROMPT_PLACEHOLDER = "{prompt_file}"
MAX_STDERR = 300  # the agent's own error text, enough to explain a failure
POLL_SECONDS = 0.05  # how often the wait for the agent looks at its deadline, size and a stop


class CommandTransport:
    def __init__(self, settings: ReviewerSettings, options: ModelOptions) -> None:
        self.settings, self.options = settings, options
        self.working_directory: Path | None = None

    def _run(self, argv: list[str], stdin: Path, stdout: Path, stderr: Path) -> int:
        """The agent's exit code. Its output goes to files (memory stays bounded whatever it
        prints); the wait polls, so the timeout, the answer cap and a stop request end it."""
        with stdin.open("rb") as source, stdout.open("wb") as answer, stderr.open("wb") as errors:
            try:
                # The agent reads the branch and may run what it finds: never the gate's cache key.
                environment = {name: value for name, value in os.environ.items() if name != CACHE_KEY_VARIABLE}
                process = subprocess.Popen(argv, cwd=self.working_directory, stdin=source, stdout=answer,
                                           stderr=errors, start_new_session=True, env=environment)
            except OSError as error:
                raise TransportBlocked(f"cannot start {argv[0]!r}: {error.strerror or error}") from None
        deadline = time.monotonic() + self.settings.timeout
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
                    problem = f"{argv[0]!r} gave no answer within {self.settings.timeout:g}s (timeout)"
                elif stdout.stat().st_size > self.options.max_answer_bytes:
                    problem = (f"{argv[0]!r} printed more than the cap of {self.options.max_answer_bytes:,} "
                               "bytes (max_answer_bytes); it was stopped")
        _kill_group(process)
        process.wait()
        raise TransportBlocked(problem)

    def complete(self, conversation: Conversation, key: str | None) -> Reply:
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
                errors.seek(max(0, stderr.stat().st_size - MAX_STDERR * 4))
                error_tail = errors.read()
        if len(answer_bytes) > self.options.max_answer_bytes:
            raise TransportBlocked(f"{argv[0]!r} printed more than the cap of "
                                   f"{self.options.max_answer_bytes:,} bytes (max_answer_bytes)")
        if returncode != 0:
            lines = error_tail.decode("utf-8", "replace").strip().splitlines()
            detail = truncate(printable(lines[-1]), MAX_STDERR, "…") if lines else "no error output"
            raise TransportBlocked(f"{argv[0]!r} exited with code {returncode}: {detail}")
        answer = answer_bytes.decode("utf-8", "replace")
        # An agent CLI reports no token counts; the estimate keeps the cost report honest enough.
        return Reply(answer, estimate_tokens(prompt.decode("utf-8", "replace")), estimate_tokens(answer))


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
            return replace(outcome, status=ReviewerStatus.BLOCKED, reason=reason, findings=())
        return outcome


def build(settings: ReviewerSettings) -> CommandReviewer:
    options = parse_options(settings)
    return CommandReviewer(
        settings, options, CommandTransport(settings, options), settings.api_key_env or None
    )
