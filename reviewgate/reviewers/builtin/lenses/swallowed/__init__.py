"""Swallowed failures: handlers that make a real failure look like success.

The family's five rules are advisory by default: lens_review.py marks their major findings so
unless `[lenses] block_on_swallowed_failures` is true (docs/lenses.md, "Swallowed failures are
advisory"). Their ids are written here, not imported from their modules, which import this one."""

RULE_IDS = frozenset({
    "correctness/swallowed-exception",
    "correctness/empty-catch",
    "correctness/dropped-error",
    "correctness/ignored-exit-status",
    "correctness/unhandled-rejection",
})
ADVISORY_REASON = (
    "swallowed failures are advisory: on released code and merged pull requests too few of these "
    "findings held (set [lenses] block_on_swallowed_failures = true to block on them)"
)
# What each of them says of its severity after its own note (docs/rules.md).
ADVISORY_NOTE = "advisory: reported, not blocking unless `[lenses] block_on_swallowed_failures = true`"
