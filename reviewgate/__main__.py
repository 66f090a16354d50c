from __future__ import annotations

from reviewgate.cli import console

console()
