"""What an empty catch (JS/TS, Java, Kotlin, C#) is attached to, when that says the failure is
dropped by design.

JavaScript cannot catch one kind of error: every `catch` is broad, so the code around it is what
tells a swallowed failure from a deliberate one. These shapes are deliberate on real code:
- best-effort clean-up: `reader.cancel().catch(() => undefined)`; failing to cancel, close or
  remove something leaves the work itself done;
- the copy a `.finally()` makes: `void work.finally(cleanup).catch(() => {})`; the rejection is
  handled where `work` itself is awaited, this catch only keeps its copy from being unhandled;
- a fallback: `try { return new TextDecoder(label); } catch {}`; the try block returns on
  success, so a failure falls through to the code after it, the default;
- a try block that is one clean-up call (`try { editor.abort() } catch (_: IOException) {}`);
- a JVM lookup by name whose absence is the answer (`catch (_: ClassNotFoundException) {}`);
- a value left unset: the try block ends by assigning a name and the statement right after the
  catch tests it (`try { url = new URL(input); } catch {}` then `if (!url)`).
"""

from __future__ import annotations

import re

from reviewgate.lazy_patterns import LazyPattern

# Calls that undo or release something: when one fails, the work itself is done.
CLEANUP_VERBS = frozenset({
    "cancel", "close", "abort", "destroy", "dispose", "release", "unlink", "rm", "rmdir", "rmtree",
    "unsubscribe", "terminate", "kill", "disconnect", "end", "unref", "removeListener", "off", "detach",
    "shutdown",
})
CLEANUP_REASON = "it drops the failure of a clean-up call (cancel, close, remove ...), not of the work itself"
# A clean-up call right before `.catch(`: what it undoes is not the work that failed.
_CLEANUP_CALL = LazyPattern(r"\.(?:" + "|".join(sorted(CLEANUP_VERBS)) + r")\([^()]*\)\s*$")
# A try block that is one clean-up call (`editor.abort();`, `close()`).
_ONE_CLEANUP_CALL = LazyPattern(r"^(?:[\w$]+\s*\??\.\s*)*(?:" + "|".join(sorted(CLEANUP_VERBS)) + r")\([^()]*\)\s*;?$")
_FINALLY = LazyPattern(r"\.finally\(")
# The try block's last statement returns: after a `;` or a brace, or on a line of its own (Kotlin
# and JavaScript end a statement at the line's end).
_RETURN = LazyPattern(r"(?:^|[;{}]\s*|\n\s*)return\b[^;{}\n]*;?\s*$")
# JVM exceptions a lookup by name throws when the class or member is not there: a try that asks for
# one (`Class.forName`, `getMethod`, a class that may be missing) and drops its absence is a test
# for a feature, the absence its answer.
_LOOKUP_EXCEPTIONS = frozenset({
    "ClassNotFoundException", "NoSuchMethodException", "NoSuchFieldException", "NoClassDefFoundError",
})
_CAUGHT_TYPES = LazyPattern(r"\bcatch\s*\(\s*(?:\w+\s*:\s*)?(?P<types>[\w.]+(?:\s*\|\s*[\w.]+)*)")
# The name a try block's last statement assigns (`absoluteInput = new URL(input);`).
_LAST_ASSIGNMENT = LazyPattern(r"(?:^|[;{}\n]\s*)(?:this\.)?(?P<name>[\w$]+)\s*=(?!=)[^;{}\n]*;?\s*$")
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


# The clause of an earlier catch of the same try, ending right before a block's `{`.
_CATCH_CLAUSE = LazyPattern(r"\bcatch\s*(?:\([^(){}]*\))?\s*$")


def _try_block_before(text: str, index: int) -> str | None:
    """The body of the `try { ... }` whose catch starts at `index`: the block right before it, or
    before the catches of the same try that come first (`catch (e: RuntimeException) { throw e }`)."""
    for _catch in range(_MAX_CATCHES):
        block = _block_before(text, index)
        if block is None:
            return None
        start, end = block
        before = text[max(0, start - 200) : start]
        if re.search(r"\btry\s*$", before[-20:]):
            return text[start + 1 : end - 1]
        clause = _CATCH_CLAUSE.search(before)
        if clause is None:
            return None
        index = start - len(before) + clause.start()
    return None


# How many catches of one try are walked back over to find it.
_MAX_CATCHES = 8


def _block_before(text: str, index: int) -> tuple[int, int] | None:
    """(the `{`, one past the `}`) of the block whose closing brace comes right before `index`."""
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
    if start < 0 or depth != 0:
        return None
    return start, end


def deliberate_catch(text: str, start: int, end: int, promise_catch: bool) -> str | None:
    """Why the empty catch at `start` (a `.catch(` call when `promise_catch`, else the `catch`
    keyword; its block ends at `end`) drops the failure by design, or None."""
    if promise_catch:
        chain = _statement_before(text, start)
        if _CLEANUP_CALL.search(chain):
            return CLEANUP_REASON
        if _FINALLY.search(chain):
            return (
                "it silences the copy of a rejection that `.finally()` passes on; the rejection is handled "
                "where the original promise is awaited"
            )
        return None
    caught = _CAUGHT_TYPES.match(text[start : start + 300])
    if caught is not None and all(
        name.strip().rsplit(".", 1)[-1] in _LOOKUP_EXCEPTIONS for name in caught.group("types").split("|")
    ):
        return "what it catches says a class or member looked up by name is missing: the try tests for a feature"
    body = _try_block_before(text, start)
    if body is None:
        return None
    tried = body.strip()
    if _RETURN.search(tried):
        return "the try block returns on success, so a failure falls through to the code after it (a fallback)"
    if _ONE_CLEANUP_CALL.search(tried):
        return CLEANUP_REASON
    assigned = _LAST_ASSIGNMENT.search(tried)
    if assigned is not None and _tests_next(text, end, assigned.group("name")):
        name = assigned.group("name")
        return f"a failure leaves `{name}` unset, and the code right after the catch tests it, so the failure is handled there"
    return None


def _tests_next(text: str, catch_end: int, name: str) -> bool:
    """Whether the statement right after the catch block tests `name`: `if (!name)`, `if (name ==
    null)`, `name ?? fallback`."""
    following = text[catch_end : catch_end + 200].lstrip()
    escaped = re.escape(name)
    return bool(re.match(
        rf"if\s*\(\s*(?:!\s*{escaped}\b|{escaped}\s*(?:[!=]==?\s*(?:null|undefined)|\)))"
        rf"|(?:\w+\s*=\s*)?{escaped}\s*\?\?",
        following,
    ))
