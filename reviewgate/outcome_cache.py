"""The builtin reviewer's outcome kept for the same change reviewed again (a CI job re-run on the
same commits, a second push of the same head): reused, the run loads no lens at all, which is most
of a small change's run (a one-line change's: about a quarter of its instructions).

The builtin reviewer is deterministic, so its outcome is a function of what the key below names:
the commits and the tree reviewed, the change as the freeze split it (reviewed, excluded, over the
size cap, left out), the config's sections, the fix marker, the REPRODUCTION: text and REVIEW-REJECTED
replies, and the code that reviews (every file of the reviewgate package, each by size and
modification time as Python's own bytecode cache tells a changed module, the Python version and
the distributions installed beside it: the grammars are among them). A shard's part, a review
after a verify (the process lens reads its outcome) and a bundle are reviewed every time; only an
outcome the reviewer finished (`ok`) with every file parsed is kept (a parse given up ran out of
time, which another run may not). Entries are sealed as the chunk store's are
(cache_trust.py): a branch, its verify or a shared cache cannot plant one that hides a finding.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reviewgate
from reviewgate.cache_keys import cache_key
from reviewgate.cache_trust import ReviewCache
from reviewgate.context import ReviewRequest
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin.given_up_parses import is_given_up_note
from reviewgate.verify.outcome import VerifyStatus

ENTRY_KIND = "builtin-outcome"
OUTCOMES_DIRECTORY = "builtin-outcomes"
# Outcomes kept: the newest by the time they were written. A reuse is a re-run of recent commits,
# and a cache that CI saves and restores on every push would otherwise grow by one entry a push.
KEPT_OUTCOMES = 64


def reviewed_or_reused(
    cache: ReviewCache,
    reviewer: Reviewer,
    request: ReviewRequest,
    run: Callable[[Reviewer, ReviewRequest], ReviewerOutcome],
) -> ReviewerOutcome:
    """The outcome stored for this very review when one is (marked `cached`, with the time the
    lookup took), else `run(reviewer, request)`'s, stored when the reviewer finished."""
    if cache.directory is None or not _keepable(request):
        return run(reviewer, request)
    started = time.monotonic()
    path = cache.directory / OUTCOMES_DIRECTORY / f"{outcome_key(reviewer.name, request)}.json"
    stored = cache.read(ENTRY_KIND, path)
    if stored is not None:
        try:
            data = json.loads(stored)
            return ReviewerOutcome.from_json(data)._replace(cached=True, duration_seconds=time.monotonic() - started)
        except (ValueError, KeyError, TypeError):
            pass  # sealed by this gate but unreadable to this version: reviewed again, and replaced
    outcome = run(reviewer, request)
    if outcome.status is ReviewerStatus.OK and not any(is_given_up_note(note) for note in outcome.notes):
        data = {**outcome.to_json(), "findings": [finding.to_json() for finding in outcome.findings]}
        try:
            cache.write(ENTRY_KIND, path, json.dumps(data, sort_keys=True).encode("utf-8"))
            _drop_oldest(cache, path.parent)
        except OSError:
            pass  # a read-only or full cache: the next run reviews again
    return outcome


def _drop_oldest(cache: ReviewCache, directory: os.PathLike[str]) -> None:
    """Remove the oldest outcomes past KEPT_OUTCOMES: plain files only, and nothing through a
    symlink (a restored cache may hold links to anything: cache_trust.py)."""
    from reviewgate.own_directories import symlink_below

    if cache.directory is None or symlink_below(cache.directory, Path(directory)):
        return
    with os.scandir(directory) as entries:
        kept = [(entry.stat(follow_symlinks=False).st_mtime_ns, entry.path) for entry in entries
                if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False)]
    kept.sort(reverse=True)
    for _written, name in kept[KEPT_OUTCOMES:]:
        os.unlink(name)


def _keepable(request: ReviewRequest) -> bool:
    return (request.scope is None and request.target.mode == "diff"
            and request.verify.status is VerifyStatus.ABSENT)


def outcome_key(reviewer_name: str, request: ReviewRequest) -> str:
    """Everything the builtin reviewer's outcome on `request` depends on, as one digest."""
    target = request.target
    return cache_key({
        "entry": f"{ENTRY_KIND}/1",
        "reviewer": reviewer_name,
        "code": code_identity(),
        "commits": [target.repo_root, target.base_sha, target.merge_base, target.head_sha, target.head_tree,
                    target.dirty_sha256, target.patch_sha256],
        "files": [change.path for change in target.files],
        "excluded": [[item.path, item.reason] for item in target.excluded],
        "oversized": [change.path for change in target.oversized],
        "left_out": [change.path for change in target.left_out],
        "test_inputs": list(target.test_inputs),
        "shipped_programs": list(target.shipped_programs),
        "marked_as_fix": request.marked_as_fix,
        "reproduction": request.reproduction,
        "rejections": [repr(rejection) for rejection in request.rejections],
        "instructions": [repr(instruction) for instruction in request.instructions],
        "sections": _plain(request.sections),
    })


def _plain(value: Any) -> Any:
    """A config value as JSON holds it (its tables are read-only mappings)."""
    if hasattr(value, "items"):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def code_identity() -> str:
    """The code a review runs, as one digest: each file of the reviewgate package (path, size,
    modification time), the Python version, and the distributions installed on the import path
    (their names carry their versions). Hashed here as one text: 312 entries in the key's JSON
    would cost a third of its time."""
    package = os.path.dirname(reviewgate.__file__)
    lines = [sys.version]
    directories = [package]
    while directories:
        with os.scandir(directories.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        directories.append(entry.path)
                    continue
                status = entry.stat(follow_symlinks=False)
                lines.append(f"{entry.path[len(package):]}\0{status.st_size}\0{status.st_mtime_ns}")
    for place in sys.path:
        if place and os.path.isdir(place):
            lines.extend(name for name in os.listdir(place) if name.endswith(".dist-info"))
    lines[1:] = sorted(lines[1:])
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()
