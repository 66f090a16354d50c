"""Run the builtin reviewer on a real repository made from dicts of files (corpus and lens tests)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reviewgate.cache_trust import ReviewCache, open_cache
from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, Severity
from reviewgate.freeze.exclusions import ExclusionRules
from reviewgate.freeze.freeze import freeze, resolve_refs
from reviewgate.freeze.git import TreeReader, prefetch_sides
from reviewgate.freeze.tooling import PYPROJECT, TOOLING_FILES, tooling_at
from reviewgate.own_directories import cache_directory_of
from reviewgate.reviewers.builtin import BuiltinReviewer
from reviewgate.reviewers.builtin.fix_marker import is_marked_as_fix
from reviewgate.verify.outcome import ABSENT, VerifyOutcome
from testing.repo import FileContent, make_repo

# The config of a repository that asks the tests rules to block (`[lenses] block_on_missing_tests`):
# for tests that use a missing-tests block to see whether code was read as product code.
TESTS_BLOCK: Mapping[str, Mapping[str, Any]] = {"lenses": {"block_on_missing_tests": True}}


def review_change(
    root: Path,
    base: Mapping[str, FileContent],
    branch: Mapping[str, FileContent],
    *,
    branch_name: str = "feature",
    message: str = "feature work",
    sections: Mapping[str, Mapping[str, Any]] | None = None,
    verify: VerifyOutcome = ABSENT,
    reproduction: str | None = None,
    before_review: Callable[[Path], None] | None = None,
) -> list[Finding]:
    """Every finding the builtin reviewer reports for `branch` on top of `base`, as the gate runs it
    (fix marking from the real branch name and head subject). `before_review` is given the
    checkout once both commits are made: what the branch's code could do to it before the gate."""
    repo = make_repo(root, base, branch, branch_name=branch_name, message=message)
    if before_review is not None:
        before_review(repo.path)
    request = review_request(repo.path, sections=sections, verify=verify, reproduction=reproduction)
    return list(BuiltinReviewer().review(request).findings)


def review_request(
    repo: Path,
    *,
    sections: Mapping[str, Mapping[str, Any]] | None = None,
    verify: VerifyOutcome = ABSENT,
    reproduction: str | None = None,
) -> ReviewRequest:
    """What the gate asks the builtin reviewer about the checkout's branch against `main`."""
    # The target side's tooling files, read as run_options.freeze_target reads them with the policy.
    refs = resolve_refs(repo, base="main")
    base_side = TreeReader(repo, refs.merge_base)
    prefetch_sides([(base_side, [PYPROJECT, *TOOLING_FILES])])  # misses cached too: one process
    tooling = tooling_at(base_side.read_bytes)
    target = freeze(repo, base="main", refs=refs, rules=ExclusionRules(generated=tooling.generated),
                    test_inputs=tooling.test_inputs, shipped_programs=tooling.shipped_programs)
    return ReviewRequest(
        target=target,
        head=TreeReader(repo, target.head_sha),
        verify=verify,
        reproduction=reproduction,
        marked_as_fix=is_marked_as_fix(repo, target.head_sha),
        sections=sections or {},
        cache=gate_cache(repo, sections),
    )


def gate_cache(repo: Path, sections: Mapping[str, Mapping[str, Any]] | None = None) -> ReviewCache:
    """The review cache `[cache]` in `sections` names (by default `.reviewgate-cache/`), opened as
    the gate opens it: with its key, from the key file a gate run there made or will make."""
    return open_cache(cache_directory_of((sections or {}).get("cache", {}), repo), repo, {})


def found_at(findings: list[Finding], rule: str) -> list[tuple[str | None, int | None]]:
    """The (path, line) of each finding of one rule, sorted: what a lens test compares."""
    return sorted((item.path, item.line) for item in findings if item.rule == rule)


def blocking_tests_findings(findings: list[Finding]) -> list[tuple[str, str, int]]:
    """The (rule, path, line) of each tests/ rule's finding at major or worse, sorted: what the
    tests lens's kind tests compare."""
    return sorted(
        (item.rule, item.path or "", item.line or 0)
        for item in findings
        if item.rule.startswith("tests/") and item.severity in (Severity.BLOCKER, Severity.MAJOR)
    )
