"""The hidden marker and metadata of the one summary comment per PR/MR.

The comment is found by its marker and edited in place. Its metadata binds the verdict to
the exact head SHA and patch hash and carries the round history (rounds.py). Metadata is
JSON inside an HTML comment, which GitHub and GitLab render as nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from reviewgate.forge.rounds import RoundEntry

MARKER = "<!-- reviewgate:summary -->"
_METADATA = re.compile(r"<!-- reviewgate:metadata (\{.*?\}) -->")
METADATA_VERSION = 1


@dataclass(frozen=True)
class CommentMetadata:
    head_sha: str = ""
    patch_sha256: str = ""
    verdict: str = ""
    rounds: tuple[RoundEntry, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": METADATA_VERSION,
            "head_sha": self.head_sha,
            "patch_sha256": self.patch_sha256,
            "verdict": self.verdict,
            "rounds": [entry.to_json() for entry in self.rounds],
        }


def render_metadata(metadata: CommentMetadata) -> str:
    # Our values are hex digests and enum names; escaping `-` keeps `-->` out whatever they are.
    text = json.dumps(metadata.to_json(), sort_keys=True, separators=(",", ":")).replace("-", "\\u002d")
    return f"<!-- reviewgate:metadata {text} -->"


def parse_metadata(body: str) -> CommentMetadata | None:
    """The metadata of a summary comment, or None when it has none we can read."""
    match = _METADATA.search(body)
    if match is None:
        return None
    try:
        data = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    rounds_data = data.get("rounds")
    entries = [RoundEntry.from_json(item) for item in rounds_data if isinstance(item, dict)] if isinstance(
        rounds_data, list) else []
    return CommentMetadata(
        head_sha=str(data.get("head_sha") or ""),
        patch_sha256=str(data.get("patch_sha256") or ""),
        verdict=str(data.get("verdict") or ""),
        rounds=tuple(entry for entry in entries if entry is not None),
    )


def is_summary_comment(body: str) -> bool:
    return MARKER in body
