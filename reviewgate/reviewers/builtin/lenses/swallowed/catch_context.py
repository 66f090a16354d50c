"""What an empty JS/TS catch is attached to, when that says the failure is dropped by design.

JavaScript cannot catch one kind of error: every `catch` is broad, so the code around it is what
tells a swallowed failure from a deliberate one. Three shapes are deliberate on real code:
- best-effort clean-up: `reader.cancel().catch(() => undefined)`; failing to cancel, close or
  remove something leaves the work itself done;
- the copy a `.finally()` makes: `void work.finally(cleanup).catch(() => {})`; the rejection is
  handled where `work` itself is awaited, this catch only keeps its copy from being unhandled;
- a fallback: `try { return new TextDecoder(label); } catch {}`; the try block returns on
  success, so a failure falls through to the code after it, the default.
"""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

# A clean-up call right before `.catch(`: what it undoes is not the work that failed.
_CLEANUP_CALL = LazyPattern(
    r"\.(?:cancel|close|abort|destroy|dispose|release|unlink|rm|rmdir|unsubscribe|terminate|kill|"
    r"disconnect|end|unref|removeListener|off)\([^()]*\)\s*$"
)
_FINALLY = LazyPattern(r"\.finally\(")
_RETURN = LazyPattern(r"(?:^|[;{}]\s*)return\b[^;{}]*;?\s*$")
# How far back a statement is read: a chain longer than this is not one of the shapes above.
_REACH = 2000


def _statement_before(text: str, index: int) -> str:
    """The text of the statement that ends at `index`: back to the `;`, `{` or `}` that is not
    inside the parentheses or braces of the statement itself (a callback's body)."""
    depth = 0
    start = index
    while start > 0 and index - start < _REACH:
        char = text[start - 1]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                break
            depth -= 1
        elif char == ";" and depth == 0:
            break
        start -= 1
    return text[start:index]


def _try_block_before(text: str, index: int) -> str | None:
    """The body of the `try { ... }` whose closing brace comes right before `index`, or None."""
    end = index
    while end > 0 and text[end - 1].isspace():
        end -= 1
    if end == 0 or text[end - 1] != "}":
        return None
    depth, start = 0, end - 1
    while start >= 0 and end - start < _REACH:
        if text[start] == "}":
            depth += 1
        elif text[start] == "{":
            depth -= 1
            if depth == 0:
                break
        start -= 1
    if start < 0 or depth != 0 or not re.search(r"\btry\s*$", text[max(0, start - 20) : start]):
        return None
    return text[start + 1 : end - 1]


def deliberate_catch(text: str, start: int, promise_catch: bool) -> str | None:
    """Why the empty catch at `start` (a `.catch(` call when `promise_catch`, else the `catch`
    keyword) drops the failure by design, or None."""
    if promise_catch:
        chain = _statement_before(text, start)
        if _CLEANUP_CALL.search(chain):
            return "it drops the failure of a clean-up call (cancel, close, remove ...), not of the work itself"
        if _FINALLY.search(chain):
            return (
                "it silences the copy of a rejection that `.finally()` passes on; the rejection is handled "
                "where the original promise is awaited"
            )
        return None
    body = _try_block_before(text, start)
    if body is not None and _RETURN.search(body.strip()):
        return "the try block returns on success, so a failure falls through to the code after it (a fallback)"
    return None
