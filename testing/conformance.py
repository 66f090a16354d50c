"""Where the conformance schemas are: `../shared/conformance` from the repository root, or
from one of its parents (a git worktree lives one level deeper than the main checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def conformance_file(name: str) -> Path:
    """The schema file, or a skip saying where it was looked for."""
    for parent in REPO_ROOT.parents:
        candidate = parent / "shared" / "conformance" / name
        if candidate.is_file():
            return candidate
    pytest.skip(
        f"conformance schema {name} not found in shared/conformance beside {REPO_ROOT} or its parents"
    )
