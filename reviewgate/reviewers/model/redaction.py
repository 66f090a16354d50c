"""Secrets never leave the machine: values that look like keys or tokens are masked before any
text is sent to a reviewer, and each masking is
listed in the report so a person can rotate what leaked into the branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewgate.secret_formats import mask_known_formats

# `password = "..."`-style assignments: only the quoted value is masked, the name stays readable.
_ASSIGNMENT = re.compile(
    r"""(?i)((?:api[_\-]?key|secret|token|passw(?:or)?d|credentials?|auth)[A-Za-z0-9_\-]*["']?\s*[:=]\s*["'])"""
    r"""([^"'\s]{12,})(["'])"""
)


@dataclass(frozen=True)
class Redaction:
    path: str
    line: int | None
    kind: str

    def describe(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"redacted a value that looks like a {self.kind} at {where} before sending it to the reviewer"


def redact_line(text: str) -> tuple[str, list[str]]:
    """The line with every secret-looking value masked, and the kinds that were masked."""
    text, kinds = mask_known_formats(text)
    text, count = _ASSIGNMENT.subn(lambda match: f"{match.group(1)}[REDACTED secret]{match.group(3)}", text)
    kinds += ["secret assignment"] * count
    return text, kinds


def redact_text(text: str, path: str, first_line: int = 1) -> tuple[str, list[Redaction]]:
    """Redact a file or snippet line by line, so each masking names its line."""
    found: list[Redaction] = []
    lines = text.split("\n")
    for index, line in enumerate(lines):
        lines[index], kinds = redact_line(line)
        found += [Redaction(path, first_line + index, kind) for kind in kinds]
    return "\n".join(lines), found
