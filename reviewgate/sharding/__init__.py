"""Scale a review out over CI jobs: `run --shard I/N` reviews one part, `merge` publishes the whole."""
