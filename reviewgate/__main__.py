from __future__ import annotations

from reviewgate.start_up import console

console()
