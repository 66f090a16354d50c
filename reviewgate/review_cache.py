"""Reuse a model review of the same tree: a re-run, or a new commit with an identical tree,
costs no tokens (DESIGN.md: "the same patch reviewed again is not paid for twice").

The key is everything the answer depends on: the head tree, the merge-base, the reviewer's
settings, the prompt version, the reviewed files and the forge's REPRODUCTION/REVIEW-REJECTED
text. One JSON file per review under `<dir>/<reviewer>/<key>.json`; `[cache] dir` or
`--cache-dir` (default `.reviewgate-cache/`, relative to the repository; in Actions, keep it
with `actions/cache`). Only `ok` outcomes are stored: a blocked review is never reused.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from reviewgate.config import CONFIG_FILE, Config, TableReader
from reviewgate.context import ReviewRequest
from reviewgate.report.files import write_atomic
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus, Usage
from reviewgate.target.git import git_text

DEFAULT_DIRECTORY = ".reviewgate-cache"
CACHE_FORMAT = 1  # bump when the stored layout changes: older entries then simply miss
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")


@dataclass(frozen=True)
class ReviewCache:
    directory: Path | None  # None: caching is off


def open_review_cache(config: Config, repo: Path) -> ReviewCache:
    """The cache `[cache]` (or --cache-dir) names; `enabled = false` turns it off."""
    section = config.sections.get("cache", {})
    TableReader(config.source or CONFIG_FILE, "cache.", section).warn_unknown(("dir", "enabled"))
    return ReviewCache(cache_directory(section, repo, config.source or CONFIG_FILE))


def cache_directory(section: Mapping[str, Any], repo: Path, source: str = CONFIG_FILE) -> Path | None:
    """The directory the `[cache]` table names (relative to the repository), None when it is off."""
    reader = TableReader(source, "cache.", section)
    if not reader.boolean("enabled", True):
        return None
    directory = Path(reader.string("dir", DEFAULT_DIRECTORY) or DEFAULT_DIRECTORY)
    return directory if directory.is_absolute() else repo / directory


def key_material(identity: dict[str, Any], request: ReviewRequest) -> dict[str, Any]:
    target = request.target
    return {
        "format": CACHE_FORMAT,
        "head_tree": git_text(request.repo_root, "rev-parse", f"{target.head_sha}^{{tree}}"),
        "merge_base": target.merge_base,
        "reviewer": identity,
        "reviewed_paths": sorted(change.path for change in target.files),
        "reproduction": request.reproduction,
        "rejections": [[item.path, item.line, item.reason] for item in request.rejections],
    }


def cache_key(material: dict[str, Any]) -> str:
    text = json.dumps(material, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _load(path: Path) -> ReviewerOutcome | None:
    """A stored review, or None when absent or unreadable (a damaged entry is just a miss)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        outcome = ReviewerOutcome.from_json(stored["outcome"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if stored.get("format") != CACHE_FORMAT or outcome.status is not ReviewerStatus.OK:
        return None
    paid = outcome.usage
    note = (
        f"reused the review stored {stored.get('stored_at', '')} for this exact tree and reviewer settings "
        f"(it cost {paid.requests} request(s), {paid.input_tokens} input and "
        f"{paid.output_tokens} output tokens)"
    )
    return replace(outcome, cached=True, usage=Usage(), duration_seconds=0.0, notes=(*outcome.notes, note))


def _store(path: Path, outcome: ReviewerOutcome, material: dict[str, Any]) -> str | None:
    document = {
        "format": CACHE_FORMAT,
        "stored_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "key": material,
        "outcome": {**outcome.to_json(), "findings": [finding.to_json() for finding in outcome.findings]},
    }
    try:
        write_atomic(path, (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as error:
        return f"could not store the review in the cache ({path.parent}): {error.strerror or error}"
    return None


def review_with_cache(
    cache: ReviewCache,
    reviewer: Reviewer,
    request: ReviewRequest,
    run: Callable[[Reviewer, ReviewRequest], ReviewerOutcome],
) -> ReviewerOutcome:
    """`run(reviewer, request)`, unless an identical review is stored; only model reviewers
    (those with `cache_identity()`) are cached: the builtin lenses cost nothing to rerun."""
    identity = getattr(reviewer, "cache_identity", None)
    if cache.directory is None or identity is None:
        return run(reviewer, request)
    material = key_material(identity(), request)
    path = cache.directory / _UNSAFE_NAME.sub("_", reviewer.name) / f"{cache_key(material)}.json"
    stored = _load(path)
    if stored is not None:
        return stored
    outcome = run(reviewer, request)
    if outcome.status is ReviewerStatus.OK:
        problem = _store(path, outcome, material)
        if problem is not None:
            outcome = replace(outcome, notes=(*outcome.notes, problem))
    return outcome
