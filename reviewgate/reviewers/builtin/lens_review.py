"""The builtin reviewer's review: every lens over the change, then what marks, filters and
suppresses their findings. Its own module, loaded by the first review (BuiltinReviewer.review): the
lenses' modules are most of the builtin reviewer's start-up, and a run that reuses a stored
outcome (outcome_cache.py) never loads them."""

from __future__ import annotations

import time

from reviewgate.context import ReviewRequest
from reviewgate.findings import one_per_place, sort_key
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.reviewers.builtin.behaviour import prefetch_both_sides
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.engine import Lens, run_lenses
from reviewgate.reviewers.builtin.given_up_parses import given_up_note, take_given_up
from reviewgate.reviewers.builtin.language_table import CODE_LANGUAGES, language_of
from reviewgate.reviewers.builtin.lens_findings import advisory
from reviewgate.reviewers.builtin.lenses import swallowed, tests_needed
from reviewgate.reviewers.builtin.lenses.duplication import lens as duplication
from reviewgate.reviewers.builtin.lenses.duplication.lens import DuplicationLens
from reviewgate.reviewers.builtin.lenses.oversized import left_out_findings, oversized_findings
from reviewgate.reviewers.builtin.lenses.process import ReproductionFilesLens, ReproductionPolicyLens
from reviewgate.reviewers.builtin.lenses.tests_needed import TestsLens
from reviewgate.reviewers.builtin.moved_code import mark_moved
from reviewgate.reviewers.builtin.product_code import mark_non_product
from reviewgate.reviewers.builtin.repository_tooling import mark_repository_tooling
from reviewgate.reviewers.builtin.rules import LENSES
from reviewgate.reviewers.builtin.settings import SECTION, parse_lens_settings
from reviewgate.reviewers.builtin.suppression_names import unknown_rule_names
from reviewgate.reviewers.builtin.suppressions import apply_suppressions, missing_reasons

# Every lens, in the order of weight of findings (the registry, rules.py).
lenses: tuple[Lens, ...] = LENSES
# The lenses that compare files with each other: run once over the whole change, after the others
# have gone through it file by file (engine.py); in a shard, only in the shard that does the
# whole-change work.
_WHOLE_CHANGE = (DuplicationLens, TestsLens, ReproductionFilesLens, ReproductionPolicyLens)
whole_change_lenses: tuple[Lens, ...] = tuple(lens for lens in lenses if isinstance(lens, _WHOLE_CHANGE))


def review(name: str, request: ReviewRequest) -> ReviewerOutcome:
    """The builtin reviewer `name`'s outcome on `request`."""
    started = time.monotonic()
    take_given_up()  # a parse given up before this review is not this review's
    settings = parse_lens_settings(request.sections.get(SECTION, {}), warn=False)
    # The tests lens reads source files at the merge base, the process lens the reproduction
    # files: read with the head files below in one batch, which then finds them all cached.
    # In a shard, the per-file lenses read `part` (the shard's files) and the whole-change
    # lenses run only in the shard that owns them, over the whole change.
    part = request.part()
    whole = request.whole_change
    read = request if whole else part
    prefetch_both_sides(read, ReproductionPolicyLens.reads)
    # Every changed code file is read at head by some lens: in one batch, not a process each.
    request.head.prefetch(
        [change.path for change in reviewable_changes(read) if language_of(change.path) in CODE_LANGUAGES]
    )
    if request.scope is None:
        found = run_lenses(request, lenses, whole_change_lenses)
    else:
        # A shard: the per-file lenses on its own files; the whole-change lenses over the
        # whole change, in the one shard that owns them.
        per_file = tuple(lens for lens in lenses if lens not in whole_change_lenses)
        found = run_lenses(part, per_file, ())
        if whole:
            found += run_lenses(request, whole_change_lenses, whole_change_lenses)
    found += missing_reasons(part)
    found += unknown_rule_names(part)
    found += oversized_findings(part)
    if whole:
        found += left_out_findings(request)
    found = mark_repository_tooling(request, mark_moved(request, found))
    found, left_out = mark_non_product(request, found)
    reformatted: list[str] = []
    if found:  # substance.py reads the diff's removed lines: loaded only when there is a finding
        from reviewgate.reviewers.builtin.substance import keep_substance

        found, reformatted = keep_substance(request, found)
    if not settings.block_on_duplicates:
        found = advisory(found, duplication.ADVISORY_RULES, duplication.ADVISORY_REASON)
    if not settings.block_on_missing_tests:
        found = advisory(found, tests_needed.RULE_IDS, tests_needed.ADVISORY_REASON)
    if not settings.block_on_swallowed_failures:
        found = advisory(found, swallowed.RULE_IDS, swallowed.ADVISORY_REASON)
    # One finding per place: 120 identical handlers are 120 findings, each with its own id.
    findings = one_per_place(finding for finding in found if settings.enabled(finding.rule))
    kept = apply_suppressions(request, findings)
    return ReviewerOutcome(
        reviewer=name,
        status=ReviewerStatus.OK,
        findings=tuple(sorted(kept, key=sort_key)),
        duration_seconds=time.monotonic() - started,
        notes=(*(f"{change.path}: over the per-file size cap, read by the line lenses only"
                 for change in part.target.oversized),
               *left_out,
               *reformatted,
               *(given_up_note(path) for path in take_given_up())),
    )
