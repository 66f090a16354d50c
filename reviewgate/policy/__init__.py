"""The policy that judges a change: where it is read (source), what the branch's edits to it would
change (changes), what the branch's own suppression comments may do (suppressions), the
`min_confidence` floor (confidence) and the per-path review instructions (instructions)."""
