"""Golden files: compare a sink's output with tests/golden/NAME, or rewrite it on request.

Regenerate after an intended format change with `REVIEWGATE_UPDATE_GOLDEN=1 pytest ...` and
review the diff of tests/golden/ like any other change.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "tests" / "golden"


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("REVIEWGATE_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"
