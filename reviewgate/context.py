"""What a reviewer is given: the frozen change and what it may read, nothing else.

The reviewer reads the diff, the codebase, governing docs, REPRODUCTION: and
REVIEW-REJECTED: comments. It never gets the branch's own reasoning (PR description, commit
messages, specs and plans the branch adds) nor earlier REVIEW: comments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from reviewgate.cache_trust import NO_CACHE, ReviewCache
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.freeze.git import TreeReader
from reviewgate.policy.instructions import PathInstruction
from reviewgate.verify.outcome import ABSENT, VerifyOutcome


class Rejection(NamedTuple):
    """A trusted REVIEW-REJECTED: <file>:<line> reason comment from an earlier round."""

    path: str
    line: int | None
    reason: str
    author: str = ""
    created_at: str = ""  # when the comment was written (the forge's ISO 8601 time), when known
    # Whether it sets the finding aside by itself: written, unedited, by a trusted person who did
    # not write the change. Otherwise (the author answering) reviewers read it and judge.
    dismisses: bool = False


class ReviewScope(NamedTuple):
    """The part of the change one shard reviews (`run --shard`): per-file work for `paths` only;
    work that reads the change as a whole (cross-file lenses, the verify's evidence) only where
    `whole_change` is set, so it runs exactly once across the shards."""

    paths: frozenset[str]
    whole_change: bool


class ReviewRequest(NamedTuple):
    """Everything a reviewer is given: the frozen change, its files at head, the verify and the conversation."""

    target: FrozenTarget
    head: TreeReader
    verify: VerifyOutcome = ABSENT
    reproduction: str | None = None  # the REPRODUCTION: text, when the forge or repo has one
    rejections: tuple[Rejection, ...] = ()
    # Whether the change says it is a fix (branch name or head subject starting fix/bug/hotfix).
    # Derived by the gate; deterministic lenses use it, it is never put in a model's prompt.
    marked_as_fix: bool = False
    # Config sections owned by reviewers (e.g. `lenses`), validated by their owners.
    sections: Mapping[str, Mapping[str, Any]] = MappingProxyType({})  # read-only: one shared default
    # None: the whole change, as one run reviews it.
    scope: ReviewScope | None = None
    # The repository's rules for some paths ([[review.instructions]]), for model reviewers.
    instructions: tuple[PathInstruction, ...] = ()
    # The run's review cache, its key read before the verify (what the DRY index is kept in).
    cache: ReviewCache = NO_CACHE
    # Every path the change writes, kept where the request is narrowed to some of its files (a
    # shard's, a per-file lens's one): what a lens that follows a call into another file looks in.
    # Empty: the target's files are all of them.
    changed_paths: tuple[str, ...] = ()

    @property
    def repo_root(self) -> Path:
        return Path(self.target.repo_root)

    @property
    def whole_change(self) -> bool:
        """Whether this request does the work that reads the change as a whole."""
        return self.scope is None or self.scope.whole_change

    def in_scope(self, path: str) -> bool:
        return self.scope is None or path in self.scope.paths

    def part(self) -> ReviewRequest:
        """This request narrowed to its scope's files (itself outside a shard): what per-file
        work reads. The full target stays in `self` for what must see every changed path."""
        if self.scope is None:
            return self
        target = replace(
            self.target,
            files=tuple(change for change in self.target.files if self.in_scope(change.path)),
            oversized=tuple(change for change in self.target.oversized if self.in_scope(change.path)),
        )
        return self._replace(target=target, changed_paths=self.all_changed_paths())

    def all_changed_paths(self) -> tuple[str, ...]:
        """Every path the change writes, however far this request was narrowed."""
        return self.changed_paths or tuple(change.path for change in self.target.files)
