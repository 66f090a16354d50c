"""Swallowed failures: a handler that makes a real failure look like success."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import BY_DESIGN, DEMOTED, SUPPORT_CODE, Finding, FindingClass, Severity, make_finding_id
from reviewgate.freeze.diff import ChangeStatus
from reviewgate.reviewers.builtin.file_kinds import is_support_code
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.swallowed import ADVISORY_NOTE
from reviewgate.reviewers.builtin.python_parsing import parse_python_touched
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Rule

if TYPE_CHECKING:  # read only where a broad handler swallows (python_shapes.py)
    from reviewgate.reviewers.builtin.lenses.swallowed.python_shapes import Place

SWALLOWED_EXCEPTION = Rule(
    id="correctness/swallowed-exception",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Broad exception handler hides the failure",
    full=(
        "A broad handler (Python `except Exception`, or a JavaScript catch around a security check) "
        "does nothing or returns a default, so a real failure looks like success. Catch the specific "
        "error, or handle and report it."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="high",
    fires_on=(
        "Python: a broad handler (`except:`, `Exception`, `BaseException`, alone or in a tuple) whose "
        "whole body is `pass`, `...`, `continue`, `return`/`return None`, or returns a literal or "
        "empty container (`except: return False`). JavaScript/TypeScript (every catch is broad): a "
        "catch whose whole body returns a default (`false`, `true`, `null`, `undefined`, `0`, `''`, "
        "`[]`, `{}`, a `*default*`/`*fallback*` name, or nothing) when the try block calls a security "
        "check by name — the called method's words include auth/authenticate/authorize, permission, "
        "verify, signature, csrf/xsrf, jwt, hmac, password, credential, or token with "
        "validate/check/decode (`try { await verifyToken(t); return true } catch (e) { return false "
        "}`, `jwt.verify`, `hasPermission(u).catch(() => false)`). A Python handler with a comment "
        "that says why the failure is expected — in it (a reason word or ≥ 4 words of prose: `# Keep "
        "the value as a string if loading failed.`), or right above its `try` and about the failure — "
        "is a deliberate fallback: **minor**, quoting the comment; so is one in test or support code "
        "(test files, `scripts/`, `bench/`, `benchmarks/`, `examples/`), and one of the shapes that "
        "drop a failure by design: a yes/no question whose failure is its no (the handler returns "
        "`False` where the try block returns the answer or the code right after it returns `True`: "
        "`try: ipaddress.IPv4Address(host)` / `except Exception: return False` / `return True`), a "
        "handler in `__del__`, a try block that is one clean-up call (`connection.close()`: close, "
        "cancel, abort, release, detach, shutdown …), and a try block that ends by assigning a name "
        "the `if` right after the try tests (`parsed = json.loads(text)` / `except Exception: pass` / "
        "`if parsed is None:`)"
    ),
    not_on=(
        "narrow Python handlers (`except KeyError: return 8080` — naming the exception is the "
        "decision); handlers that log and re-raise, or do anything else; a JS default around code "
        "that checks nothing (`catch { return [] }` around `JSON.parse(nextToken(text))`); "
        "`jwt.split('.')` (the method called must be the check). \"ignore\", a to-do (`TODO`, "
        "`FIXME`, \"for now\") or a lint pragma (`# noqa: BLE001`) is not a reason and stays major; so "
        "does a handler that returns `True` (a check failing open) or a default that looks like a "
        "result (`{}`, `None`)"
    ),
    severity_note=f"(minor with a reason); {ADVISORY_NOTE}",
    fires=(
        Example(
            file=File("app/cache.py", "python", """\
import json


def load(text):
    try:
        return json.loads(text)
    except Exception:
        return {}
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/cache.py", "python", """\
import json


def load(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {}
"""),
        ),
    ),
)

RULES = (SWALLOWED_EXCEPTION,)


BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})


def _is_broad(handler: ast.ExceptHandler) -> bool:
    """A bare `except:` or one naming Exception/BaseException (alone or in a tuple)."""
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        (isinstance(node, ast.Name) and node.id in BROAD_EXCEPTIONS)
        or (isinstance(node, ast.Attribute) and node.attr in BROAD_EXCEPTIONS)
        for node in names
    )


def _swallows(handler: ast.ExceptHandler) -> str | None:
    """How the body hides the failure, or None when it does something with it."""
    body = handler.body
    if len(body) != 1:
        return None
    statement = body[0]
    if isinstance(statement, ast.Pass):
        return "does nothing (`pass`)"
    if (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and statement.value.value is ...
    ):
        return "does nothing (`...`)"
    if isinstance(statement, ast.Continue):
        return "skips to the next iteration (`continue`)"
    if isinstance(statement, ast.Return) and (
        statement.value is None
        or (isinstance(statement.value, ast.Constant) and statement.value.value is None)
    ):
        return "returns None"
    if isinstance(statement, ast.Return) and _is_default_value(statement.value):
        assert statement.value is not None
        return f"returns a default (`{ast.unparse(statement.value)}`)"
    return None


def _is_default_value(node: ast.expr | None) -> bool:
    """A broad handler that returns a default: a literal or an empty container, which
    the caller cannot tell apart from a real result."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return False


class PythonSwallowedFailureLens:
    rule = SWALLOWED_EXCEPTION.id

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in request.target.files:
            if change.status is ChangeStatus.DELETED or change.is_binary or not change.path.endswith(".py"):
                continue
            added = change.added_lines()
            if not added:
                continue
            source = request.head.read_text(change.path)
            tree = None if source is None else parse_python_touched(change, source)  # reported where it spans an added line
            if source is None or tree is None:
                continue
            lines = source.splitlines()
            for node in nodes_of(tree, ast.ExceptHandler):
                if not _is_broad(node):
                    continue
                how = _swallows(node)
                body_lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
                if how is None or not any(line in added for line in body_lines):
                    continue
                from reviewgate.reviewers.builtin.lenses.swallowed.python_shapes import place_of

                yield self._finding(change.path, node, how, lines, place_of(tree, node))

    def _finding(
        self, path: str, handler: ast.ExceptHandler, how: str, lines: list[str], place: Place | None
    ) -> Finding:
        code = lines[handler.lineno - 1]
        caught = "every exception" if handler.type is None else f"`{ast.unparse(handler.type)}`"
        title = f"Broad exception handler {how}"
        body = (
            f"This handler catches {caught} and {how}, so a real failure here looks like success "
            f"to the caller. Matched `{' '.join(code.split())[:100]}`: the handler is broad and that "
            "is its whole body (nothing logged, re-raised or returned as an error). Catch the "
            "specific exception you expect, and log, re-raise or return an explicit error for the rest."
        )
        severity, demoted = Severity.MAJOR, None
        reason = _stated_reason(handler, lines, handler.lineno if place is None else place.try_node.lineno)
        from reviewgate.reviewers.builtin.lenses.swallowed.python_shapes import deliberate_shape

        shape = None if reason is not None or place is None else deliberate_shape(place, handler)
        if reason is not None:
            # As for an empty catch in the other languages: a comment that says why the failure is
            # expected makes the handler a deliberate fallback, worth a look, not a block.
            severity, demoted = Severity.MINOR, BY_DESIGN
            body += (
                f' The comment next to it says why: "{" ".join(reason.split())[:200]}". Reported as minor: '
                "check that only the failure it describes can reach it (a narrower exception, or a log "
                "line, keeps other failures visible)."
            )
        elif shape is not None:
            # The shapes an empty catch in the other languages has by design (catch_context.py).
            severity, demoted = Severity.MINOR, BY_DESIGN
            body += f" Reported as minor: {shape}; check that no other failure can reach it."
        elif is_support_code(path):
            # A test's own assertions check what it expects; a script, benchmark or example ships
            # to no user: neither makes a production failure look like success.
            severity, demoted = Severity.MINOR, SUPPORT_CODE
            body += " Reported as minor: this is test or support code (tests, scripts, benchmarks, examples)."
        return Finding(
            id=make_finding_id("builtin", path, "swallowed-failure", title, code),
            finding_class=FindingClass.CORRECTNESS,
            severity=severity,
            category="swallowed-failure",
            rule=self.rule,
            title=title,
            body=body,
            source="builtin",
            path=path,
            line=handler.lineno,
            end_line=handler.end_lineno,
            extra={DEMOTED: demoted} if demoted else {},
        )


def _stated_reason(handler: ast.ExceptHandler, lines: list[str], try_line: int) -> str | None:
    """The comment in a handler, or right above its `try`, that says why its failure is expected:
    a reason inside, or one about the failure above (comment_intent); None when none does."""
    from reviewgate.reviewers.builtin.comment_intent import explains_a_fallback, states_a_reason
    from reviewgate.reviewers.builtin.comments import comment_on
    from reviewgate.reviewers.builtin.lenses.swallowed.handler_comments import comments_above

    end = handler.end_lineno or handler.lineno
    found = (comment_on(number, lines[number - 1], Language.PYTHON) for number in range(handler.lineno, end + 1))
    inside = "\n".join(comment.text for comment in found if comment is not None)
    if states_a_reason(inside):
        return inside
    above = "\n".join(comments_above(try_line, lines, Language.PYTHON))
    return above if explains_a_fallback(above) else None


# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (PythonSwallowedFailureLens(),)
