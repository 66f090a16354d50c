"""The `command` provider: any agent CLI (`claude -p`, `codex exec`, `gemini -p`, a script).

The prompt goes on stdin, or into a file when an argument holds `{prompt_file}`; the JSON
review comes back on stdout. The command line is a list of arguments, never a shell string.
It runs in a read-only snapshot of the head tree (model/snapshot.py); a change to the snapshot
or to the real checkout is a reviewer mutation and blocks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from reviewgate.config import ReviewerSettings
from reviewgate.context import ReviewRequest
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
from reviewgate.text import printable, truncate

PROMPT_PLACEHOLDER = "{prompt_file}"
MAX_STDERR = 300  # the agent's own error text, enough to explain a failure


class CommandTransport:
    def __init__(self, settings: ReviewerSettings, options: ModelOptions) -> None:
        self.settings, self.options = settings, options
        self.working_directory: Path | None = None

    def _run(self, argv: list[str], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
        try:
            process = subprocess.Popen(
                argv,
                cwd=self.working_directory,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            raise TransportBlocked(f"cannot start {argv[0]!r}: {error.strerror or error}") from None
        try:
            stdout, stderr = process.communicate(stdin, timeout=self.settings.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the agent and every process it started
            process.communicate()
            raise TransportBlocked(
                f"{argv[0]!r} gave no answer within {self.settings.timeout:g}s (timeout)"
            ) from None
        return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)

    def complete(self, conversation: Conversation, key: str | None) -> Reply:
        prompt = conversation.as_text().encode("utf-8", "surrogateescape")
        with tempfile.TemporaryDirectory(prefix="reviewgate-prompt-") as scratch:
            prompt_file = Path(scratch) / "prompt.md"
            uses_file = any(PROMPT_PLACEHOLDER in part for part in self.options.command)
            if uses_file:
                prompt_file.write_bytes(prompt)
            argv = [part.replace(PROMPT_PLACEHOLDER, str(prompt_file)) for part in self.options.command]
            completed = self._run(argv, None if uses_file else prompt)
        if completed.returncode != 0:
            lines = completed.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = truncate(printable(lines[-1]), MAX_STDERR, "…") if lines else "no error output"
            raise TransportBlocked(f"{argv[0]!r} exited with code {completed.returncode}: {detail}")
        answer = completed.stdout.decode("utf-8", "replace")
        # An agent CLI reports no token counts; the estimate keeps the cost report honest enough.
        return Reply(answer, estimate_tokens(prompt.decode("utf-8", "replace")), estimate_tokens(answer))


class CommandReviewer(ModelReviewer):
    """Runs the shared flow with the agent inside a snapshot, and checks nothing was changed."""

    transport: CommandTransport

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        branch_paths = {change.path for change in request.target.files}
        with tempfile.TemporaryDirectory(prefix="reviewgate-snapshot-") as scratch:
            snapshot = Path(scratch) / "tree"
            try:
                export_snapshot(request.repo_root, request.target.head_sha, snapshot, branch_paths)
                before = (tree_fingerprint(snapshot), checkout_fingerprint(request.repo_root))
                self.transport.working_directory = snapshot
                outcome = super().review(request)
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
