"""A Go function's declared results, read from its source: an `if err != nil { return nil }` in a
function with no `error` result returns its nil value on failure by design."""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

# A Go function's signature up to its body's brace: the results are what follows the parameters.
_GO_FUNC = LazyPattern(
    r"\bfunc\s*(?:\([^()]*\)\s*)?(?:[\w]+\s*)?(?:\[[^\]]*\]\s*)?\((?:[^()]|\([^()]*\))*\)"
    r"(?P<results>[^{}\n]*)\{"
)


_GO_ERROR_RESULT = LazyPattern(r"\berror\b")


def go_results_of(text: str, offset: int) -> str | None:
    """The result types of the innermost Go function (or function literal) whose body holds
    `offset`, as written (`(*Config, error)`, `[]string`); None when none is found."""
    found = None
    for match in _GO_FUNC.finditer(text, 0, offset):
        body = match.end() - 1
        if text.count("{", body, offset) > text.count("}", body, offset):
            found = match.group("results").strip()
    return found


def returns_no_error(text: str, match: re.Match[str]) -> bool:
    """`if err != nil { return nil }` in a function with no `error` result returns its nil value
    (`*T`, `[]T`, a map) on failure by design: the error is not the caller's to get."""
    if "return" not in match.group(0):
        return False  # an empty block drops the error whatever the function returns
    results = go_results_of(text, match.start())
    return results is not None and results != "" and not _GO_ERROR_RESULT.search(results)
