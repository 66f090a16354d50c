"""The `command` provider: any agent CLI (`claude -p`, `codex exec`, `gemini -p`, a script).

The prompt goes on stdin, or into a file when an argument holds `{prompt_file}`; the JSON
review comes back on stdout. The command line is a list of arguments, never a shell string.
Its program is resolved and sealed when the reviewer is built, before the verify, and runs as a
principal of its own with a clean environment (agent_principal.py). It runs in a read-only
snapshot of the head tree whose agent settings and instruction files are the merge base's
(model/snapshot.py); a change to the snapshot or to the real checkout is a reviewer mutation and
blocks. A run with no model turn (a hook's output, zero usage) is not a review: blocked. The agent runs in its own session:
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
from reviewgate.chunk_store import ChunkStore
from reviewgate.config import ReviewerSettings, TableReader
from reviewgate.context import ReviewRequest
from reviewgate.errors import ConfigError
from reviewgate.freeze.git import git_text
from reviewgate.reviewers.agent_principal import AgentPrincipal, agent_environment, agent_principal, refused_names
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.model.agent_output import quoted, read_agent_output
from reviewgate.reviewers.model.deadline import DeadlinePassed, bounded
from reviewgate.reviewers.model.engine import ModelReviewer
from reviewgate.reviewers.model.http import TransportBlocked
from reviewgate.reviewers.model.options import ModelOptions, parse_options
from reviewgate.reviewers.model.prompt import Conversation
from reviewgate.reviewers.model.rendering import estimate_tokens
from reviewgate.reviewers.model.reply import Reply
from reviewgate.reviewers.model.snapshot import (
    checkout_fingerprint,
    export_snapshot,
    is_agent_settings,
    remove_snapshot,
    settings_above,
    tree_fingerprint,
)
from reviewgate.trusted_programs import UntrustedProgram

PROMPT_PLACEHOLDER = "{prompt_file}"
MAX_ERROR_READ = 4096  # the end of the agent's stderr (or stdout) read to explain a failure
MAX_ERROR_BYTES = 16 << 20  # what the agent may write to stderr: only its end is read, the rest fills the disk
POLL_SECONDS = 0.05  # how often the wait for the agent looks at its deadline, size and a stop
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree: no merge base, no agent settings


class CommandTransport:
    def __init__(self, settings: ReviewerSettings, options: ModelOptions, passed: tuple[str, ...] = ()) -> None:
        self.settings, self.options, self.passed = settings, options, passed
        self.working_directory: Path | None = None
        self.home: Path | None = None
        self.notes: list[str] = []
        self.principal: AgentPrincipal | None = None
        self.refusal: str | None = None
        try:  # before the verify: see trusted_programs.py
            self.principal = agent_principal(options.command[0], os.environ.get("PATH", os.defpath))
        except (UntrustedProgram, OSError) as error:
            self.refusal = str(error)

    def environment(self, key: str | None) -> dict[str, str]:
        assert self.principal is not None and self.home is not None
        return agent_environment(os.environ, search_path=self.principal.search_path, home=self.home,
                                 key_variable=self.settings.api_key_env, key=key, passed=self.passed)

    def _run(self, argv: list[str], stdin: Path, stdout: Path, stderr: Path, key: str | None) -> int:
        """The agent's exit code. Its output goes to files (memory stays bounded whatever it
        prints); the wait polls, so the timeout, the answer cap and a stop request end it."""
        try:
            timeout = bounded(self.settings.timeout)  # within the chunk's deadline too
        except DeadlinePassed as passed:
            raise TransportBlocked(str(passed)) from None
        if self.principal is None:
            raise TransportBlocked(self.refusal or f"{argv[0]!r}: not resolved")
        try:
            self.principal.check()  # the program is still the one sealed before the verify
        except UntrustedProgram as error:
            raise TransportBlocked(str(error)) from None
        above = settings_above(self.working_directory) if self.working_directory is not None else []
        if above:
            raise TransportBlocked(quoted(
                f"agent settings or instructions above the agent's snapshot, which its CLI would read as the "
                f"project's: {', '.join(above)} (anyone who can write the temp dir, the verify too, could have "
                "left them); remove them, or set TMPDIR to a directory only the gate's user can write"))
        launcher = self.principal.boundary.launcher
        with stdin.open("rb") as source, stdout.open("wb") as answer, stderr.open("wb") as errors:
            try:
                process = subprocess.Popen(self.principal.command(argv), cwd=self.working_directory, stdin=source,
                                           stdout=answer, stderr=errors, start_new_session=True,
                                           env=self.environment(key), user=launcher.user, group=launcher.group,
                                           extra_groups=[] if launcher.user is not None else None)
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
                elif stderr.stat().st_size > MAX_ERROR_BYTES:
                    problem = (f"{argv[0]!r} wrote more than {MAX_ERROR_BYTES:,} bytes to stderr "
                               "(a CLI that loops on a warning would fill the disk); it was stopped")
        _kill_group(process)
        process.wait()
        raise TransportBlocked(problem)

    def run_notes(self) -> list[str]:
        return list(self.notes)

    def complete(self, conversation: Conversation, key: str | None, max_output_tokens: int | None = None) -> Reply:
        """The agent's answer (it has no token cap to set: `max_output_tokens` is not used)."""
        prompt = conversation.as_text().encode("utf-8", "surrogateescape")
        with tempfile.TemporaryDirectory(prefix="reviewgate-prompt-") as scratch, \
                stopping.tracked(Path(scratch), remove_snapshot):
            prompt_file = Path(scratch) / "prompt.md"
            prompt_file.write_bytes(prompt)
            self._share_with_agent(Path(scratch), prompt_file)
            uses_file = any(PROMPT_PLACEHOLDER in part for part in self.options.command)
            argv = [part.replace(PROMPT_PLACEHOLDER, str(prompt_file)) for part in self.options.command]
            stdin = prompt_file if not uses_file else Path(os.devnull)
            stdout, stderr = Path(scratch) / "answer", Path(scratch) / "errors"
            returncode = self._run(argv, stdin, stdout, stderr, key)
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
        if answer.not_reviewed is not None:
            raise TransportBlocked(f"not reviewed: {argv[0]!r} {answer.not_reviewed}")
        # Without the CLI's own counts (plain text output), the estimate keeps the cost report honest enough.
        return Reply(
            answer.text,
            estimate_tokens(prompt.decode("utf-8", "replace")) if answer.input_tokens is None else answer.input_tokens,
            estimate_tokens(answer.text) if answer.output_tokens is None else answer.output_tokens,
            cache_read_tokens=answer.cache_read_tokens,
            cache_write_tokens=answer.cache_write_tokens,
        )


    def _share_with_agent(self, scratch: Path, prompt_file: Path) -> None:
        """The prompt file, for a `{prompt_file}` argument, readable by the agent's uid alone."""
        uid = self.principal.uid if self.principal is not None else None
        if uid is not None:
            scratch.chmod(0o711)
            os.chown(prompt_file, uid, uid)
            prompt_file.chmod(0o400)


def _failure_detail(error_tail: bytes, reported: str | None, printed: str) -> str:
    """Why the agent failed, in its own words: the error its JSON output reports (a warning on
    stderr would hide it); else the last line of stderr; else the last line of stdout (Claude
    Code prints `Not logged in` there)."""
    if reported is not None:
        return reported
    lines = error_tail.decode("utf-8", "replace").strip().splitlines()
    if lines:
        return quoted(lines[-1])
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
        principal = self.transport.principal
        if principal is None:
            return ReviewerOutcome(self.name, ReviewerStatus.BLOCKED, reason=f"not reviewed: {self.transport.refusal}")
        branch_paths = {change.path for change in request.target.files}
        with tempfile.TemporaryDirectory(prefix="reviewgate-snapshot-") as scratch, \
                stopping.tracked(Path(scratch), remove_snapshot), principal.home() as home, \
                stopping.tracked(home, remove_snapshot):
            snapshot = Path(scratch) / "tree"
            if principal.uid is not None:
                Path(scratch).chmod(0o711)  # the agent's uid reaches its snapshot, nothing else here
            try:
                replaced: list[str] = []
                left_out = export_snapshot(request.repo_root, request.target.head_sha, snapshot, branch_paths,
                                           settings_base=request.target.merge_base or EMPTY_TREE, replaced=replaced)
                self.transport.notes = _snapshot_notes(left_out, replaced) + [principal.describe()]
                before = (tree_fingerprint(snapshot), checkout_fingerprint(request.repo_root))
                self.transport.working_directory, self.transport.home = snapshot, home
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


def _snapshot_notes(left_out: list[str], replaced: list[str]) -> list[str]:
    own = [path for path in left_out if is_agent_settings(path)]
    notes = []
    if replaced:
        notes.append(f"agent settings and instructions from the merge base: {', '.join(replaced[:10])}")
    if own:
        notes.append(f"the branch's agent settings and instructions left out of the agent's snapshot: "
                     f"{', '.join(own[:10])}")
    return [quoted(note) for note in notes]


def passed_variables(settings: ReviewerSettings) -> tuple[str, ...]:
    """`environment`: the names of further variables the agent gets (from the target side's
    config); those that would hand it the gate's outputs or cache are a config error."""
    reader = TableReader(settings.source, f"reviewer.{settings.name}.", settings.options)
    names = reader.strings("environment", ())
    refused = refused_names(names)
    if refused:
        raise ConfigError(f"{settings.source}: reviewer.{settings.name}.environment: {', '.join(refused)} "
                          "may not be passed to an agent (a forge token, the gate's step outputs, runner files or cache key)")
    return names


def build(settings: ReviewerSettings) -> CommandReviewer:
    options = parse_options(settings)
    transport = CommandTransport(settings, options, passed_variables(settings))
    return CommandReviewer(settings, options, transport, settings.api_key_env or None)
