"""What the reviewer may not read, as one decision on a path.

"Anything written for this ticket's reasoning: its RCA or spec, its planning notes,
docs/specs/, any docs/plans/ document the branch adds or edits". These are left out of the
prompt (diff and context alike) and removed from an agent CLI's snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

_RCA_NAME = re.compile(
    r"(^|[/_.\-])(rca|root[_\-]?cause(?:[_\-]analysis)?|post[_\-]?mortem)([/_.\-]|$)", re.IGNORECASE
)


def _under(path: str, directory: str) -> bool:
    return path.startswith(directory + "/") or f"/{directory}/" in path


def withheld_reason(path: str, branch_paths: AbstractSet[str]) -> str | None:
    """Why the reviewer may not read `path`, or None; `branch_paths` are the files the branch changes."""
    if _under(path, "docs/specs"):
        return "a spec (docs/specs/): the author's reasoning"
    if _under(path, "docs/plans") and path in branch_paths:
        return "a plan the branch adds or edits (docs/plans/)"
    if _RCA_NAME.search(path):
        return "a root-cause analysis: the author's reasoning"
    return None
