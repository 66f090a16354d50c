"""How the lenses run over a change: file by file, then over the whole change.

Most lenses judge one file at a time. Each changed file goes through all of them in turn, so its
syntax tree is parsed once, shared by every lens, and dropped when the file is done (memory
follows the largest file, not the change). The lenses that need the whole change (the DRY
index, the tests lens's moved-code and fix evidence, the process lenses) run after, over all of
it. Findings are put back in lens order, then file order, which is the order the lenses would
give each running over every file in turn: a run gives the same findings in the same order
whichever way it was computed.

A large change uses the machine's cores (worker processes forked from this one, so they share
the texts read already): a worker runs the DRY lens and the other whole-change lenses that need no
function shapes, while this process and any other workers share the per-file stage, each taking
the next file when it is free; once the DRY worker is done, a new worker takes its core in the
per-file stage. The head side's function shapes a worker made come back with its findings for the
tests lens, which runs here once every file is done, with which of the new functions were extracted
from existing code and each file's evidence were no function removed (worked out in the process that
made them, to leave less for that last step; behaviour.told_evidence).
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast, runtime_checkable

from reviewgate import progress
from reviewgate.context import ReviewRequest
from reviewgate.errors import BlockedError
from reviewgate.findings import Finding
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.reviewers.builtin.behaviour import ToldEvidence, extracted_verdicts, is_behaviour_file, told_evidence
from reviewgate.reviewers.builtin.given_up_parses import record_given_up, take_given_up
from reviewgate.reviewers.builtin.languages.shapes import Shapes
from reviewgate.reviewers.builtin.python_parsing import forget_parsed_trees
from reviewgate.reviewers.builtin.side_shapes import HeadShapesByPath, head_shapes_of, sent_shapes
from reviewgate.reviewers.builtin.workers import configured_workers

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

# Below this the workers cost more than they save. The per-file stage is about 15 us an added
# line (1.5 s for 100,000 on the Django benchmark) and the DRY lens about as much; forking a worker a
# few tens of milliseconds.
PARALLEL_MIN_ADDED_LINES = 5_000
PARALLEL_MIN_CORES = 2


class Lens(Protocol):
    """One deterministic check. It looks only at what the branch added."""

    def check(self, request: ReviewRequest) -> Iterable[Finding]: ...


@runtime_checkable
class ShapesLens(Protocol):
    """The tests lens: whole-change, fed the head side's function shapes the per-file stage made."""

    def check_with_shapes(
        self,
        request: ReviewRequest,
        head_shapes: Mapping[str, Shapes | None] | None,
        extracted: Mapping[str, Mapping[str, bool]] | None = None,
        told: Mapping[str, ToldEvidence] | None = None,
    ) -> Iterable[Finding]: ...

    def wants_shapes(self, request: ReviewRequest) -> bool: ...


class FileOutcome(NamedTuple):
    """What the per-file lenses found in one file, and its head-side functions when wanted."""

    findings: tuple[tuple[Finding, ...], ...]  # per per-file lens, in lens order
    shapes: Shapes | None  # the head side's functions, when the tests lens will want them
    given_up: tuple[str, ...] = ()  # files whose syntax tree went over its budget (syntax_tree.py)
    # Which of `shapes` were extracted from the base side (behaviour.extracted_verdicts), by name.
    extracted: dict[str, bool] | None = None
    told: ToldEvidence | None = None  # the file's evidence were no function removed (behaviour.told_evidence)
    packed: bytes | None = None  # `shapes` as another process sent them (_Reviewed), unpacked when asked for


def _narrowed(request: ReviewRequest, change: FileChange) -> ReviewRequest:
    """The request as a per-file lens sees it: the change of one file."""
    return request._replace(target=replace(request.target, files=(change,)), changed_paths=request.all_changed_paths())


def review_file(
    request: ReviewRequest, change: FileChange, per_file: Sequence[Lens], with_shapes: bool
) -> FileOutcome:
    narrowed = _narrowed(request, change)
    findings = tuple(tuple(lens.check(narrowed)) for lens in per_file)
    shapes = head_shapes_of(request, change) if with_shapes and _is_behaviour_change(change) else None
    forget_parsed_trees()
    # Worked out here, in whichever process reviews the file, to leave less for the tests lens after.
    extracted = None if shapes is None else extracted_verdicts(request, change, shapes)
    told = None if shapes is None or extracted is None else told_evidence(request, change, shapes, extracted)
    return FileOutcome(findings, shapes, tuple(take_given_up()), extracted, told)


def _is_behaviour_change(change: FileChange) -> bool:
    return (
        change.status is not ChangeStatus.DELETED
        and not change.is_binary
        and not change.is_submodule
        and is_behaviour_file(change.path)
        and change.added_line_count() > 0
    )


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
    # Every changed path, listed once: each file's narrowed request keeps it (`_narrowed`).
    request = request._replace(changed_paths=request.all_changed_paths())
    per_file = [lens for lens in lenses if lens not in whole_change]
    whole = [lens for lens in lenses if lens in whole_change]
    workers = worker_count(request)
    shaped = [lens for lens in whole if _shapes_lens(lens) is not None]
    unshaped = [lens for lens in whole if lens not in shaped]
    if workers == 1:
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


def _wants_shapes(request: ReviewRequest, shaped: Sequence[Lens]) -> bool:
    return any(shapes_lens.wants_shapes(request) for lens in shaped if (shapes_lens := _shapes_lens(lens)))


def _per_file_here(
    request: ReviewRequest, per_file: Sequence[Lens], shaped: Sequence[Lens]
) -> tuple[list[FileOutcome], dict[int, list[Finding]]]:
    """The per-file stage in this process, keeping the head side's function shapes for the
    tests lens, then the tests lens with them: each file parsed once."""
    with_shapes = _wants_shapes(request, shaped)
    outcomes = [_counted(review_file(request, change, per_file, with_shapes)) for change in request.target.files]
    return outcomes, _shaped_findings(request, shaped, outcomes, with_shapes)


def _shaped_findings(
    request: ReviewRequest, shaped: Sequence[Lens], outcomes: Sequence[FileOutcome], with_shapes: bool
) -> dict[int, list[Finding]]:
    """The tests lens's findings, given the head side's function shapes the per-file stage made."""
    files = request.target.files
    head_shapes = HeadShapesByPath(
        request,
        {change.path: outcome.shapes for change, outcome in zip(files, outcomes, strict=True)},
        {change.path: (change, outcome.packed) for change, outcome in zip(files, outcomes, strict=True)
         if outcome.packed is not None},
    ) if with_shapes else None
    extracted = (
        {change.path: outcome.extracted for change, outcome in zip(files, outcomes, strict=True) if outcome.extracted}
        if with_shapes else None
    )
    told = (
        {change.path: outcome.told for change, outcome in zip(files, outcomes, strict=True) if outcome.told is not None}
        if with_shapes else None
    )
    return {id(lens): list(_whole_change_findings(lens, request, head_shapes, extracted, told)) for lens in shaped}


def _counted(outcome: FileOutcome) -> FileOutcome:
    """A file's outcome, counted as one file done for the progress line (progress.py)."""
    progress.files_done()
    return outcome


def _shapes_lens(lens: Lens) -> ShapesLens | None:
    return lens if isinstance(lens, ShapesLens) else None


def _whole_change_findings(
    lens: Lens,
    request: ReviewRequest,
    head_shapes: Mapping[str, Shapes | None] | None,
    extracted: Mapping[str, Mapping[str, bool]] | None,
    told: Mapping[str, ToldEvidence] | None = None,
) -> Iterator[Finding]:
    shapes_lens = _shapes_lens(lens)
    if shapes_lens is not None:
        yield from shapes_lens.check_with_shapes(request, head_shapes, extracted, told)
    else:
        yield from lens.check(request)


class _Claims:
    """The changed files' numbers, handed out one at a time to this process and the workers forked
    from it (counters in memory they share): each process reviews the next file when it is free,
    so the files are shared by what each costs, not by their count."""

    def __init__(self, total: int) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.total = total
        self._next = context.Value("q", 0)
        self._done_elsewhere = context.Value("q", 0, lock=False)  # read only for the progress line
        self._done_lock = context.Lock()

    def take(self) -> int | None:
        """The next file's number, or None when every file is taken."""
        with self._next.get_lock():
            number = int(self._next.value)
            if number >= self.total:
                return None
            self._next.value = number + 1
        return number

    def left(self) -> bool:
        return int(self._next.value) < self.total

    def done_in_a_worker(self) -> None:
        with self._done_lock:
            self._done_elsewhere.value += 1

    def done_elsewhere(self) -> int:
        return int(self._done_elsewhere.value)


class _Work(NamedTuple):
    """What a forked worker reviews: set in the parent just before the workers fork, read by them."""

    request: ReviewRequest
    per_file: Sequence[Lens]
    unshaped: Sequence[Lens]
    with_shapes: bool
    claims: _Claims


_shared: _Work | None = None


class _Reviewed(NamedTuple):
    """A file a worker reviewed (FileOutcome), its function shapes packed to cross the pipe and
    pickled apart (side_shapes.sent_shapes): this process reads them only if the tests lens asks."""

    number: int
    findings: tuple[tuple[Finding, ...], ...]
    shapes: bytes | None
    given_up: tuple[str, ...]
    extracted: dict[str, bool] | None
    told: ToldEvidence | None


def _worker_signals() -> None:
    """A worker leaves cancellation to the gate: the gate's SIGTERM/SIGINT handlers (which only
    record the signal) would keep a worker alive through the gate's own SIGTERM at the end."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _review_taken() -> tuple[list[_Reviewed], list[str]]:
    """A per-file worker: the files it takes until none is left."""
    assert _shared is not None, "the per-file stage ran in a process not forked by run_lenses"
    request, per_file, _unshaped, with_shapes, claims = _shared
    reviewed: list[_Reviewed] = []
    while (number := claims.take()) is not None:
        outcome = review_file(request, request.target.files[number], per_file, with_shapes)
        shapes = None if outcome.shapes is None else sent_shapes(outcome.shapes)
        reviewed.append(_Reviewed(number, outcome.findings, shapes, outcome.given_up, outcome.extracted, outcome.told))
        claims.done_in_a_worker()
    return reviewed, []


def _review_unshaped() -> tuple[list[list[Finding]], list[str]]:
    """The whole-change lenses' findings, and the files whose parse they gave up."""
    assert _shared is not None, "the whole-change lenses ran in a process not forked by run_lenses"
    return [list(lens.check(_shared.request)) for lens in _shared.unshaped], take_given_up()


def _answer(work: Callable[[], tuple[object, list[str]]], sending: Connection) -> None:
    """A worker's run: it sends what `work` returned (or what it raised) and ends."""
    _worker_signals()
    try:
        outcome: tuple[bool, object] = (True, work())
    except BaseException as error:  # noqa: BLE001 - raised again in the parent, as a pool would
        outcome = (False, error)
    sending.send(outcome)
    sending.close()


class _Worker:
    """A forked process running one piece of work, its answer received by a thread as soon as it
    is sent, so it never waits on this process to end: a pool's worker stayed alive until the pool
    closed, holding what the DRY index had left in its heap (250 MB at +300k lines) while this
    process still ran the per-file stage."""

    def __init__(self, work: Callable[[], tuple[object, list[str]]]) -> None:
        import multiprocessing
        import threading

        gc.freeze()  # the worker's collector leaves what it inherits alone (and its pages shared)
        context = multiprocessing.get_context("fork")
        receiving, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_answer, args=(work, sending), daemon=True)
        self._process.start()
        sending.close()  # this process's end of it: the worker's ending is then an end of file here
        self._received: list[tuple[bool, object]] = []
        self._ended = threading.Event()
        self._receiver = threading.Thread(target=self._receive, args=(receiving,), daemon=True)

    def listen(self) -> None:
        """Receive from now on: after the forks made together with this one (a process forked with
        a thread running may inherit a lock held), before this process's own long work."""
        self._receiver.start()

    def _receive(self, receiving: Connection) -> None:
        with receiving:
            try:
                self._received.append(receiving.recv())
            except EOFError:
                pass  # ended without sending: told by `answer`
            finally:
                self._ended.set()

    def answered(self) -> bool:
        """Whether the worker is done (its answer received, or it ended without one)."""
        return self._ended.is_set()

    def answer(self) -> object:
        self._receiver.join()
        self._process.join()
        if not self._received:
            raise BlockedError(
                f"the builtin reviewer's worker process ended without an answer (exit code {self._process.exitcode})"
            )
        ok, value = self._received[0]
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        answer, given_up = cast(tuple[object, list[str]], value)
        record_given_up(given_up)
        return answer

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
    """`workers` processes in all, this one included. One worker runs the whole-change lenses that
    need no shapes (the DRY lens) and ends when they are done; this process and the others share
    the per-file stage a file at a time, and once the DRY worker has ended, a new worker takes its
    core there (forked then, from this process: the DRY worker's heap stays what the index left).
    The tests lens runs here last, with the function shapes every process made."""
    global _shared
    files = request.target.files
    with_shapes = _wants_shapes(request, shaped)
    claims = _Claims(len(files))
    _shared = _Work(request, per_file, unshaped, with_shapes, claims)
    whole: _Worker | None = None
    helpers: list[_Worker] = []
    try:
        whole = _Worker(_review_unshaped) if unshaped else None
        helpers += [_Worker(_review_taken) for _ in range(workers - 1 - (whole is not None))]
        for worker in [*([whole] if whole else []), *helpers]:
            worker.listen()
        outcomes: dict[int, FileOutcome] = {}
        replaced = whole is None
        counted = 0  # files reported done on the progress line
        while (number := claims.take()) is not None:
            outcomes[number] = review_file(request, files[number], per_file, with_shapes)
            done = len(outcomes) + claims.done_elsewhere()
            progress.files_done(done - counted)
            counted = done
            if not replaced and whole is not None and whole.answered() and claims.left():
                replaced = True
                helper = _Worker(_review_taken)
                helper.listen()
                helpers.append(helper)
        for helper in helpers:
            for reviewed in cast(list[_Reviewed], helper.answer()):
                outcomes[reviewed.number] = FileOutcome(
                    reviewed.findings, None, reviewed.given_up, reviewed.extracted, reviewed.told, reviewed.shapes)
        progress.files_done(len(files) - counted)
        ordered = [outcomes[number] for number in range(len(files))]
        shaped_findings = _shaped_findings(request, shaped, ordered, with_shapes)
        unshaped_findings = cast(list[list[Finding]], whole.answer()) if whole is not None else []
    finally:
        for worker in [*([whole] if whole else []), *helpers]:
            worker.stop()
        gc.unfreeze()
        _shared = None
    return ordered, shaped_findings, unshaped_findings
