"""How the lenses run over a change: file by file, then over the whole change.

Most lenses judge one file at a time. Each changed file goes through all of them in turn, so its
syntax tree is parsed once, shared by every lens, and dropped when the file is done (memory
follows the largest file, not the change). The lenses that need the whole change (the DRY
index, the tests lens's moved-code and fix evidence, the process lenses) run after, over all of
it. Findings are put back in lens order, then file order, which is the order the lenses would
give each running over every file in turn: a run gives the same findings in the same order
whichever way it was computed.

A large change uses the machine's cores (worker processes forked from this one, so they share
the texts read already): the DRY lens and the other whole-change lenses that need no function
shapes run in a worker while this process runs the per-file stage and then the tests lens with the
shapes it made; with more than two processes the per-file stage is spread over the other workers.
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast, runtime_checkable

from reviewgate import progress
from reviewgate.context import ReviewRequest
from reviewgate.errors import BlockedError, ConfigError
from reviewgate.findings import Finding
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.reviewers.builtin.behaviour import head_shapes_of, is_behaviour_file
from reviewgate.reviewers.builtin.common import forget_parsed_trees, record_given_up, take_given_up
from reviewgate.reviewers.builtin.languages.shapes import Shapes

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

# The variable that sets how many processes the per-file stage may use: 1 runs it here, serially
# (for debugging, or a runner whose core count misleads); unset or 0, the machine's core count.
WORKERS_VARIABLE = "REVIEWGATE_WORKERS"
# Below this the pool costs more than it saves. The per-file stage is about 15 us an added line
# (1.5 s for 100,000 on the Django benchmark) and the DRY lens about as much; forking a worker a
# few tens of milliseconds. On 2 cores the two side by side took a 5,900-line change from 0.72 s
# to 0.60 s, 20,000 lines from 1.05-1.3 s to 0.8-1.0 s, 100,000 from 3.6-3.75 s to 2.3-2.5 s.
# Spreading the per-file stage too costs a second parse of the head side for the tests lens
# (function shapes ask this process's reads for what they compute late): that pays only where a
# third core takes a share.
PARALLEL_MIN_ADDED_LINES = 5_000
PARALLEL_MIN_CORES = 2
# From this many processes on, the per-file stage is spread over the workers too.
SPREAD_MIN_WORKERS = 3
# Files per task handed to a worker: small enough to balance, large enough that a task is not
# mostly its own overhead.
CHUNK_FILES = 8


class Lens(Protocol):
    """One deterministic check. It looks only at what the branch added."""

    def check(self, request: ReviewRequest) -> Iterable[Finding]: ...


@runtime_checkable
class ShapesLens(Protocol):
    """The tests lens: whole-change, fed the head side's function shapes the per-file stage made."""

    def check_with_shapes(
        self, request: ReviewRequest, head_shapes: Mapping[str, Shapes | None] | None
    ) -> Iterable[Finding]: ...

    def wants_shapes(self, request: ReviewRequest) -> bool: ...


class FileOutcome(NamedTuple):
    """What the per-file lenses found in one file, and its head-side functions when wanted."""

    findings: tuple[tuple[Finding, ...], ...]  # per per-file lens, in lens order
    shapes: Shapes | None  # the head side's functions, when the tests lens will want them
    given_up: tuple[str, ...] = ()  # files whose syntax tree went over its budget (syntax_tree.py)


def _narrowed(request: ReviewRequest, change: FileChange) -> ReviewRequest:
    """The request as a per-file lens sees it: the change of one file."""
    return request._replace(target=replace(request.target, files=(change,)))


def review_file(
    request: ReviewRequest, change: FileChange, per_file: Sequence[Lens], with_shapes: bool
) -> FileOutcome:
    narrowed = _narrowed(request, change)
    findings = tuple(tuple(lens.check(narrowed)) for lens in per_file)
    shapes = head_shapes_of(request, change) if with_shapes and _is_behaviour_change(change) else None
    forget_parsed_trees()
    return FileOutcome(findings, shapes, tuple(take_given_up()))


def _is_behaviour_change(change: FileChange) -> bool:
    return (
        change.status is not ChangeStatus.DELETED
        and not change.is_binary
        and not change.is_submodule
        and is_behaviour_file(change.path)
        and change.added_line_count() > 0
    )


def configured_workers() -> int:
    """The variable's number of processes; 0 when unset (chosen by the change's size)."""
    configured = os.environ.get(WORKERS_VARIABLE, "").strip()
    if configured and not configured.isdigit():
        raise ConfigError(
            f"{WORKERS_VARIABLE}={configured!r}: expected a whole number of processes (1 runs the lenses "
            "in one process, 0 or unset picks by the change's size)"
        )
    return int(configured or 0)


def worker_count(request: ReviewRequest) -> int:
    """Processes for the per-file stage: the variable's number when it is set (1: here, serially),
    else the cores available for a large change and 1 for a small one."""
    configured = configured_workers()
    if configured > 0:
        wanted = configured
    else:
        if sum(change.added_line_count() for change in request.target.files) < PARALLEL_MIN_ADDED_LINES:
            return 1
        cores = available_cores()
        if cores < PARALLEL_MIN_CORES:
            return 1
        wanted = cores
    if wanted > 1:
        import multiprocessing  # a small change never needs it: not paid at start-up

        if "fork" not in multiprocessing.get_all_start_methods():
            return 1  # the workers share the parent's reads by forking; elsewhere, one process
    return wanted


def available_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_lenses(request: ReviewRequest, lenses: Sequence[Lens], whole_change: Collection[Lens]) -> list[Finding]:
    """Every lens's findings, in lens order and, within a lens, in file order. The lenses in
    `whole_change` run once over the whole change, the others file by file."""
    per_file = [lens for lens in lenses if lens not in whole_change]
    whole = [lens for lens in lenses if lens in whole_change]
    workers = worker_count(request)
    shaped = [lens for lens in whole if _shapes_lens(lens) is not None]
    unshaped = [lens for lens in whole if lens not in shaped]
    if workers == 1 or (workers < SPREAD_MIN_WORKERS and not unshaped):  # a shard's per-file part: nothing to split
        # The lenses that need no shapes first: the function shapes hold their files' trees, and
        # the DRY index is the largest allocation of a review; one after the other, not together.
        whole_findings = {id(lens): list(lens.check(request)) for lens in unshaped}
        outcomes, shaped_findings = _per_file_here(request, per_file, shaped)
    else:
        outcomes, shaped_findings, unshaped_findings = _in_parallel(request, unshaped, shaped, per_file, workers)
        whole_findings = dict(zip(map(id, unshaped), unshaped_findings, strict=True))
    whole_findings.update(shaped_findings)
    found: list[Finding] = []
    position = 0  # of the lens among the per-file ones
    for lens in lenses:
        if lens in whole_change:
            found += whole_findings[id(lens)]
        else:
            found += [finding for outcome in outcomes for finding in outcome.findings[position]]
            position += 1
    record_given_up(path for outcome in outcomes for path in outcome.given_up)
    return found


def _per_file_here(
    request: ReviewRequest, per_file: Sequence[Lens], shaped: Sequence[Lens]
) -> tuple[list[FileOutcome], dict[int, list[Finding]]]:
    """The per-file stage in this process, keeping the head side's function shapes for the
    tests lens, then the tests lens with them: each file parsed once."""
    files = request.target.files
    with_shapes = any(shapes_lens.wants_shapes(request) for lens in shaped if (shapes_lens := _shapes_lens(lens)))
    outcomes = [_counted(review_file(request, change, per_file, with_shapes)) for change in files]
    head_shapes = (
        {change.path: outcome.shapes for change, outcome in zip(files, outcomes, strict=True)} if with_shapes else None
    )
    return outcomes, {id(lens): list(_whole_change_findings(lens, request, head_shapes)) for lens in shaped}


def _counted(outcome: FileOutcome) -> FileOutcome:
    """A file's outcome, counted as one file done for the progress line (progress.py)."""
    progress.files_done()
    return outcome


def _shapes_lens(lens: Lens) -> ShapesLens | None:
    return lens if isinstance(lens, ShapesLens) else None


def _whole_change_findings(
    lens: Lens, request: ReviewRequest, head_shapes: Mapping[str, Shapes | None] | None
) -> Iterator[Finding]:
    shapes_lens = _shapes_lens(lens)
    if shapes_lens is not None:
        yield from shapes_lens.check_with_shapes(request, head_shapes)
    else:
        yield from lens.check(request)


# What a forked worker reviews: set in the parent just before the workers fork, read by them.
_shared: tuple[ReviewRequest, Sequence[Lens], Sequence[Lens]] | None = None


def _worker_signals() -> None:
    """A worker leaves cancellation to the gate: the gate's SIGTERM/SIGINT handlers (which only
    record the signal) would keep a worker alive through the pool's own SIGTERM at the end."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _review_chunk(indices: range) -> list[FileOutcome]:
    assert _shared is not None, "the per-file stage ran in a process not forked by run_lenses"
    request, per_file, _unshaped = _shared
    return [review_file(request, request.target.files[index], per_file, False) for index in indices]


def _review_unshaped() -> tuple[list[list[Finding]], list[str]]:
    """The whole-change lenses' findings, and the files whose parse they gave up."""
    assert _shared is not None, "the whole-change lenses ran in a process not forked by run_lenses"
    request, _per_file, unshaped = _shared
    return [list(lens.check(request)) for lens in unshaped], take_given_up()


def _unshaped_process(sending: Connection) -> None:
    """The whole-change lenses' worker: it sends their findings (or what they raised) and ends.
    A pool's worker stayed alive until the pool closed, holding what the DRY index had left in
    its heap (250 MB at +300k lines) while this process still ran the per-file stage."""
    _worker_signals()
    try:
        outcome: tuple[bool, object] = (True, _review_unshaped())
    except BaseException as error:  # noqa: BLE001 - raised again in the parent, as a pool would
        outcome = (False, error)
    sending.send(outcome)
    sending.close()


class _UnshapedWorker:
    """The forked process running the whole-change lenses that need no shapes, its findings
    received by a thread as soon as they are sent, so it never waits on this process to end."""

    def __init__(self) -> None:
        import multiprocessing
        import threading

        context = multiprocessing.get_context("fork")
        receiving, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_unshaped_process, args=(sending,), daemon=True)
        self._process.start()
        sending.close()  # this process's end of it: the worker's ending is then an end of file here
        self._received: list[tuple[bool, object]] = []
        self._receiver = threading.Thread(target=self._receive, args=(receiving,), daemon=True)

    def listen(self) -> None:
        """Receive from now on: after any other fork (a process forked with a thread running may
        inherit a lock held), before this process's own long work."""
        self._receiver.start()

    def _receive(self, receiving: Connection) -> None:
        with receiving:
            try:
                self._received.append(receiving.recv())
            except EOFError:
                pass  # ended without sending: told by `findings`

    def findings(self) -> list[list[Finding]]:
        self._receiver.join()
        self._process.join()
        if not self._received:
            raise BlockedError(
                f"the whole-change lenses' worker process ended without an answer (exit code {self._process.exitcode})"
            )
        ok, value = self._received[0]
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        findings, given_up = cast(tuple[list[list[Finding]], list[str]], value)  # what _review_unshaped returned
        record_given_up(given_up)
        return findings

    def stop(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()


def _in_parallel(
    request: ReviewRequest,
    unshaped: Sequence[Lens],
    shaped: Sequence[Lens],
    per_file: Sequence[Lens],
    workers: int,
) -> tuple[list[FileOutcome], dict[int, list[Finding]], list[list[Finding]]]:
    """`workers` processes in all, this one included. A worker runs the whole-change lenses that
    need no shapes (the DRY lens: as long as the per-file stage) and ends when they are done. With
    two processes this one runs the per-file stage and the tests lens with the shapes it made; with
    more, the per-file stage goes to a pool of the others and the tests lens parses the head side
    again here."""
    global _shared
    _shared = (request, per_file, unshaped)
    files = request.target.files
    gc.freeze()  # the workers' collectors leave what they inherit alone (and its pages shared)
    worker: _UnshapedWorker | None = None
    try:
        worker = _UnshapedWorker()
        if workers >= SPREAD_MIN_WORKERS:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(workers - 2, initializer=_worker_signals) as pool:
                worker.listen()
                chunks = [range(start, min(start + CHUNK_FILES, len(files))) for start in range(0, len(files), CHUNK_FILES)]
                pending = pool.imap(_review_chunk, chunks)
                shaped_findings = {id(lens): list(_whole_change_findings(lens, request, None)) for lens in shaped}
                outcomes = [_counted(outcome) for chunk in pending for outcome in chunk]
        else:
            worker.listen()
            outcomes, shaped_findings = _per_file_here(request, per_file, shaped)
        unshaped_findings = worker.findings()
    finally:
        if worker is not None:
            worker.stop()
        gc.unfreeze()
        _shared = None
    return outcomes, shaped_findings, unshaped_findings
