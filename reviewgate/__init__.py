"""reviewgate: an independent review gate for CI."""

from __future__ import annotations

__version__ = "0.1.0"
