"""What a comment is for: explaining why, or only pointing somewhere (a ticket, a tool pragma).

Two lenses ask: the readability lens (a why-comment that also cites an issue is not narration)
and the swallowed-failure lens (an empty catch whose comment says why is a deliberate fallback).
"""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

# Words that introduce a reason or a condition: the comment says why the code is as it is.
_WHY = LazyPattern(
    r"[,;]\s*so\b|\b(?:because|since|so\s+(?:that|the|it|we|a|an|they|this)|otherwise|to\s+(?:avoid|prevent|keep|ensure|make\s+sure|allow)"
    r"|in\s+order\s+to|would|(?:can|does|do|is|are|must)\s*(?:not|n't)|cannot|must|need(?:s|ed)?\s+to"
    r"|requires?|expect(?:s|ed)?|work\s*-?around|unless|until|if|when|already|may|might|never|only)\b",
    re.IGNORECASE,
)
# Markers of work left for later, and tool pragmas: neither explains anything.
_UNFINISHED = LazyPattern(r"\b(?:todo|fixme|xxx|hack|for\s+now|later)\b", re.IGNORECASE)
_PRAGMA = LazyPattern(
    r"^(?:eslint|@ts-|istanbul|c8|prettier|jshint|tslint|biome|noqa|type:|pylint|nolint|reviewgate:)",
    re.IGNORECASE,
)
_WORD = LazyPattern(r"[A-Za-z][A-Za-z'-]*")
# A fallback's comment of this many words or more describes the case it handles ("Ignore
# cancellation failures from already-locked streams"); "ignore" or "ignore errors" do not.
MIN_REASON_WORDS = 4


def explains_why(text: str) -> bool:
    """The comment gives a reason or a condition, not only a pointer or a story."""
    return not _PRAGMA.match(text.strip()) and _WHY.search(text) is not None


def states_a_reason(text: str) -> bool:
    """The comment next to a fallback says what it expects and why (for an empty catch): a
    reason word, or a sentence of several words; never a to-do, a pragma or a bare "ignore"."""
    stripped = text.strip()
    if not stripped or _UNFINISHED.search(stripped):
        return False
    prose = " ".join(line for line in stripped.splitlines() if not _PRAGMA.match(line.strip()))
    return explains_why(prose) or len(_WORD.findall(prose)) >= MIN_REASON_WORDS


# A comment above a statement usually says what it does; it explains the fallback when it gives
# a reason or speaks of the failure itself.
_ABOUT_FAILURE = LazyPattern(
    r"\b(?:ignor\w*|swallow\w*|fail\w*|errors?|throws?|reject\w*|best[\s-]effort|harmless|fine|expected)\b",
    re.IGNORECASE,
)


def explains_a_fallback(text: str) -> bool:
    """A comment above a handler (not in it) that is about the failure it drops."""
    return states_a_reason(text) and (explains_why(text) or _ABOUT_FAILURE.search(text) is not None)
