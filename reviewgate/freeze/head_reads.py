"""Files at head read while `git diff` still streams: the freeze reads the head side of every file
whose generated-code header decides its fate (exclusions.needs_header), whole, since the reviewers
read them next. Asked for as the diff names them, they are read by a thread in batches, so git's
`cat-file` works beside `git diff` and this process's parse of it, rather than after both."""

from __future__ import annotations

import threading
from pathlib import Path

from reviewgate.freeze.git import read_whole_files

# A batch's fewest paths while the diff still streams: each batch is a git process, so a small
# change (one batch, read when the diff ends) starts no more than it did before.
MIN_BATCH = 100


class HeadReads:
    """Whole files at `tree`, read by a thread in batches of at least `min_batch` as they are asked
    for (`ask`); `whole_files` waits for the batches and reads the rest itself (a small change:
    all of them, with no thread started)."""

    def __init__(self, repo: Path, tree: str, min_batch: int = MIN_BATCH) -> None:
        self._repo, self._tree, self._min_batch = repo, tree, min_batch
        self._pending: list[str] = []
        self._batched: set[str] = set()  # read in a batch, found or not
        self._found: dict[str, bytes] = {}
        self._error: BaseException | None = None
        self._closed = False
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None

    def ask(self, path: str) -> None:
        """Read `path` at `tree` in a batch, once enough are asked for."""
        with self._condition:
            if self._closed:
                return
            self._pending.append(path)
            if len(self._pending) < self._min_batch:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._read_batches, name="reviewgate-head-reads", daemon=True)
                self._thread.start()
            self._condition.notify()

    def _read_batches(self) -> None:
        while True:
            with self._condition:
                while len(self._pending) < self._min_batch and not self._closed:
                    self._condition.wait()
                if self._closed:
                    return  # what is left is read by whole_files
                batch, self._pending = self._pending, []
            try:
                found = read_whole_files(self._repo, self._tree, batch)
            except BaseException as error:  # noqa: BLE001 - raised again by whole_files, in the caller's thread
                with self._condition:
                    self._error = error
                return
            with self._condition:
                self._found.update(found)
                self._batched.update(batch)

    def _close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify()
        if self._thread is not None:
            self._thread.join()

    def whole_files(self, paths: list[str]) -> dict[str, bytes]:
        """The whole file of each of `paths` at `tree`, in that order, as `read_whole_files` answers
        (a missing one, a non-blob and one over the size cap left out): those the batches read
        already, and the others read now."""
        self._close()
        if self._error is not None:
            raise self._error
        rest = [path for path in paths if path not in self._batched]
        if rest:
            self._found.update(read_whole_files(self._repo, self._tree, rest))
        return {path: self._found[path] for path in paths if path in self._found}

    def stop(self) -> None:
        """Wait for the thread and drop what it read (the freeze failed before asking for them)."""
        self._close()
        self._found.clear()
