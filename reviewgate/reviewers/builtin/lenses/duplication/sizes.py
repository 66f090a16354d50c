"""How large a repetition is before it is a `reuse/duplicate-code` finding, and before one blocks:
the sizes its declaration (lens.py) states. Apart from the search, so the lens can tell a change
too small for any finding without loading it."""

# A duplicate worth a finding spans at least this many non-empty added lines, of which this many
# differ from each other (six `self.a = a` lines are a shape, not a copy), and this many
# normalized characters.
MIN_LINES = 5
MIN_DISTINCT_LINES = 4
MIN_CHARACTERS = 50
# A whole definition copied (it starts a definition on both sides and ends where each ends) is a
# copy under MIN_CHARACTERS when it is dense with logic, this many decisions, calls and arithmetic
# operators (substance.py): a short function with a decision and calls is as much a second place
# to fix the next bug as a longer one, a body of plain assignments and returns is not. Only the
# runs through such a definition's first window may be this short (short_definitions.py).
MIN_SUBSTANCE = 3
MIN_DEFINITION_CHARACTERS = 32
# Small blocks of a common shape (`a = a.a(a)` / `if a is None: return`) recur in any large
# repository; below this many lines a match must also share part of its names (duplicates.py).
LARGE_BLOCK_LINES = 12
# Repetition inside the change blocks from this many lines: shorter runs are parallel variants
# written side by side, which real merged PRs are full of (calibrated on the development set).
IN_BRANCH_MAJOR_LINES = 25
# A copy of existing code blocks from this many lines, or when it copies a whole definition:
# shorter fragments (a nested callback, a guard and its message) were fair remarks on real merged
# PRs, rarely worth sending work back for.
EXISTING_MAJOR_LINES = 20
# A new file whose lines are this share of one existing file is a fork of it.
NEAR_COPY_SHARE = 0.8
