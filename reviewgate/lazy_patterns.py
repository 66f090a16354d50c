"""Regular expressions compiled when first used, not when their module is imported.

The lenses and sinks hold well over a hundred module-level patterns; compiling them all was a
fifth of the package's import time, paid by every run, while a small change uses a few of them
(a Python change none of the JavaScript ones). A `LazyPattern` compiles on its first use and
then puts the compiled pattern's own bound methods on itself, so every later call costs what
calling the compiled pattern costs: no indirection is left in the lenses' per-line loops.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """`re.compile(pattern, flags)`, compiled on first use (see the module's docstring)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern; from the first call on, its methods shadow the ones below."""
        if self._compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
            self.__dict__.update(
                search=compiled.search,
                match=compiled.match,
                fullmatch=compiled.fullmatch,
                finditer=compiled.finditer,
                findall=compiled.findall,
                sub=compiled.sub,
                subn=compiled.subn,
                split=compiled.split,
            )
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"
