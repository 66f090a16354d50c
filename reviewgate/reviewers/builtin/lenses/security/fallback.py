"""A broad handler that returns a default around a security check (JavaScript, TypeScript): the
shape the Python lens reports as a swallowed exception, where JavaScript makes it matter most.

`try { return verifyToken(t) } catch { return false }` answers "not verified" when the key store
is down or the code has a bug, and `return true` there lets everyone in. Every JavaScript catch is
broad (it cannot name the error it expects), so this fires only where the try block calls a
security check by name (auth, permission, verify, token, signature, csrf, jwt, hmac, password):
a default elsewhere (`catch { return [] }` around a parse) is a design choice, not evidence.
The same for a promise: `verifyToken(t).catch(() => false)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.swallowed.python import PythonSwallowedFailureLens

if TYPE_CHECKING:  # imported where a JavaScript or TypeScript file is read: a Python-only run never loads it
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

# The same rule as Python's broad handler that returns a default.
RULE_SWALLOWED = PythonSwallowedFailureLens.rule

_JS_LANGUAGES = frozenset({Language.JAVASCRIPT, Language.TYPESCRIPT})
_TRY = LazyPattern(r"\btry\s*\{")
_CATCH_AFTER = LazyPattern(r"\s*catch\s*(?:\([^(){}]*\))?\s*\{")
_RETURN_DEFAULT = LazyPattern(
    r"\s*return\s*(?P<value>false|true|null|undefined|void\s+0|-?[01]|''|\"\"|``|\[\s*\]|\{\s*\}"
    r"|\(\s*\{\s*\}\s*\)|[\w$]*(?:[Dd]efault|[Ff]allback)[\w$]*)?\s*;?\s*"
)
_PROMISE_DEFAULT = LazyPattern(
    r"\.catch\(\s*(?:async\s+)?(?:\(\s*[\w$]*\s*(?::\s*[\w$]+)?\s*\)|[\w$]+)\s*=>\s*"
    r"(?P<value>false|true|-?[01]|''|\"\"|\[\s*\]|\(\s*\{\s*\}\s*\)|[\w$]*(?:[Dd]efault|[Ff]allback)[\w$]*)\s*\)"
)
_CALL = LazyPattern(r"(?P<name>[\w$#]+(?:\s*\.\s*[\w$#]+)*)\s*\(")
# Words of a called name that make it a security check (split on camelCase, `_` and `.`).
_SECURITY_WORDS = frozenset(
    {
        "auth", "authenticate", "authenticated", "authentication", "authorize", "authorized",
        "authorization", "authn", "authz", "permission", "permissions", "permitted", "verify",
        "verified", "verification", "signature", "csrf", "xsrf", "jwt", "hmac", "password",
        "credential", "credentials",
    }
)  # fmt: skip
_TOKEN_CHECK_WORDS = frozenset({"validate", "check", "decode", "introspect", "is", "has", "valid"})
_NAME_WORDS = LazyPattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def security_check(name: str) -> bool:
    """A called name that checks identity or integrity: `verifyToken`, `jwt.verify`,
    `hasPermission`, `validate_csrf`, `checkAuth`; not `tokenize`, `nextToken` or `jwt.split`
    (the method called is what checks, not the object it is called on)."""
    words = [word.lower() for word in _NAME_WORDS.findall(name.rsplit(".", 1)[-1])]
    if any(word in _SECURITY_WORDS for word in words):
        return True
    return "token" in words and any(word in _TOKEN_CHECK_WORDS for word in words)


class SecurityFallbackLens:
    rule = RULE_SWALLOWED

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            if language_of(change.path) not in _JS_LANGUAGES:
                continue
            text = request.head.read_text(change.path)
            if text is None or "catch" not in text:
                continue
            from reviewgate.reviewers.builtin.languages.javascript_source import read_js

            source = read_js(text)
            added = change.added_lines()
            for line, call, value in (*_try_blocks(source), *_promise_catches(source)):
                if line in added:
                    yield _finding(change.path, source, line, call, value)


def _checks_in(source: JsSource, start: int, end: int) -> str | None:
    for match in _CALL.finditer(source.masked, start, end):
        name = re.sub(r"\s+", "", match.group("name"))
        if security_check(name):
            return name
    return None


def _try_blocks(source: JsSource) -> Iterator[tuple[int, str, str]]:
    """(line of the catch, the security call in the try block, the returned default)."""
    masked = source.masked
    for match in _TRY.finditer(masked):
        opener = match.end() - 1
        closing = source.pairs.get(opener)
        if closing is None:
            continue
        catch = _CATCH_AFTER.match(masked, closing + 1)
        if catch is None or catch.end() - 1 not in source.pairs:
            continue
        body_open = catch.end() - 1
        body_close = source.pairs[body_open]
        returned = _RETURN_DEFAULT.fullmatch(masked, body_open + 1, body_close)
        if returned is None:
            continue
        call = _checks_in(source, opener, closing)
        if call is None:
            continue
        value = source.text[returned.start("value") : returned.end("value")] if returned.group("value") else ""
        yield source.line_of(catch.start() + len(catch.group(0)) - len(catch.group(0).lstrip())), call, value


def _promise_catches(source: JsSource) -> Iterator[tuple[int, str, str]]:
    """`.catch(() => default)` on a chain that starts with a security call in the same statement."""
    masked = source.masked
    for match in _PROMISE_DEFAULT.finditer(masked):
        start = _statement_start(source, match.start())
        call = _checks_in(source, start, match.start())
        if call is not None:
            value = source.text[match.start("value") : match.end("value")]
            yield source.line_of(match.start()), call, value


def _statement_start(source: JsSource, offset: int, limit: int = 2000) -> int:
    """Walk back over the chain before `offset` (bracketed groups whole) to where its statement
    or argument begins."""
    masked = source.masked
    index = offset - 1
    floor = max(0, offset - limit)
    while index > floor:
        char = masked[index]
        if char in ")]" and index in source.pairs:
            index = source.pairs[index] - 1
        elif char in ";{}(,[":
            return index + 1
        else:
            index -= 1
    return floor


def _finding(path: str, source: JsSource, line: int, call: str, value: str) -> Finding:
    returned = f"`{value}`" if value else "nothing (`return;`)"
    meaning = (
        "lets every caller through when the check itself fails"
        if value == "true"
        else "makes a broken check (a key store that is down, a bug, a misconfiguration) look like an "
        "ordinary refusal, so nobody is told"
    )
    code = source.line_text(line)
    return lens_finding(
        rule=RULE_SWALLOWED,
        category="swallowed-failure",
        finding_class=FindingClass.CORRECTNESS,
        severity=Severity.MAJOR,
        title="Broad handler returns a default around a security check",
        body=(
            f"The handler catches every error from code that calls `{call}(...)`, a security check by its "
            f"name, and does nothing but return {returned} (no log, no rethrow, no look at the error): "
            f"it {meaning}. JavaScript cannot catch one error type, so the handler must tell the expected "
            "failure (an invalid or expired token) from the rest: check the error and rethrow or log what "
            "you did not expect."
        ),
        path=path,
        line=line,
        code=code,
    )

# Its rule is the Python lens's (swallowed/python.py); the registry runs the lens.
RULES: tuple[()] = ()
LENSES = (SecurityFallbackLens(),)
