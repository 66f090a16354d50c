"""Token counts read from the usage objects providers return (untrusted JSON: a missing or odd
field counts nothing), into Reply's fields."""

from __future__ import annotations

from typing import Any


def token_count(data: Any, key: str) -> int:
    """A whole number of at least 0 at `key`, else 0."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def anthropic_counts(usage: Any) -> dict[str, int]:
    """Anthropic's usage (the Messages API, and Claude Code's result object): its `input_tokens`
    leaves out the prompt cache's reads and writes, which are added here and kept apart."""
    read, written = token_count(usage, "cache_read_input_tokens"), token_count(usage, "cache_creation_input_tokens")
    return {
        "input_tokens": token_count(usage, "input_tokens") + read + written,
        "output_tokens": token_count(usage, "output_tokens"),
        "cache_read_tokens": read,
        "cache_write_tokens": written,
    }
