"""Credential formats by the prefixes their issuers document (so that scanners can find them).

One table for both uses: the builtin security lens reports these in added lines, and the
model reviewers mask them before any text leaves the machine.
"""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

PRIVATE_KEY_HEADER = LazyPattern(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----")

TOKEN_PATTERNS: tuple[tuple[str, LazyPattern], ...] = (
    ("private key block", PRIVATE_KEY_HEADER),
    # AWS access key ids: docs.aws.amazon.com IAM "Understanding unique ID prefixes" (AKIA, ASIA).
    ("AWS access key id", LazyPattern(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    # GitHub: "Behind GitHub's new authentication token formats" (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_).
    ("GitHub token", LazyPattern(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b")),
    # GitLab personal/project/group access tokens: docs.gitlab.com "Token prefixes" (glpat-).
    ("GitLab token", LazyPattern(r"\bgl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,}")),
    ("Slack token", LazyPattern(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", LazyPattern(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("Stripe live key", LazyPattern(r"\b[rs]k_live_[0-9A-Za-z]{20,}\b")),
    ("Anthropic API key", LazyPattern(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", LazyPattern(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}")),
    ("npm token", LazyPattern(r"\bnpm_[A-Za-z0-9]{36}\b")),
)

# Masking may be broader than reporting: a masked look-alike costs nothing, a leaked key a
# rotation. These shapes are too loose to report as findings but are masked before sending.
MASK_ONLY_PATTERNS: tuple[tuple[str, LazyPattern], ...] = (
    ("OpenAI-style key", LazyPattern(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("JSON web token", LazyPattern(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
)

MASKED_PATTERNS = TOKEN_PATTERNS + MASK_ONLY_PATTERNS
# A literal every value of the kind contains: every output is masked, and a substring test
# skips a format's regex pass over text that cannot hold it (nearly all text).
REQUIRED_LITERALS: dict[str, tuple[str, ...]] = {
    "private key block": ("PRIVATE KEY",),
    "AWS access key id": ("AKIA", "ASIA"),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "GitLab token": ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-"),
    "Slack token": ("xox",),
    "Google API key": ("AIza",),
    "Stripe live key": ("k_live_",),
    "Anthropic API key": ("sk-ant-",),
    "OpenAI API key": ("T3BlbkFJ",),
    "npm token": ("npm_",),
    "OpenAI-style key": ("sk-",),
    "JSON web token": ("eyJ",),
}


# Any of those literals: one pass over the text tells that no format can be in it, which is what
# nearly every text every sink masks (each field of each finding) is.
_ANY_REQUIRED_LITERAL = LazyPattern("|".join(
    re.escape(literal) for literals in REQUIRED_LITERALS.values() for literal in literals
))


def mask_known_formats(text: str) -> tuple[str, list[str]]:
    """The text with every value in a known credential format replaced by `[REDACTED <kind>]`,
    and the kinds replaced. The replacement holds no quote, backslash, angle bracket or
    ampersand, so masking serialised JSON, XML or Markdown leaves it well formed."""
    kinds: list[str] = []
    if not _ANY_REQUIRED_LITERAL.search(text):
        return text, kinds
    for kind, pattern in MASKED_PATTERNS:
        if not any(literal in text for literal in REQUIRED_LITERALS[kind]):
            continue
        text, count = pattern.subn(f"[REDACTED {kind}]", text)
        kinds += [kind] * count
    return text, kinds
