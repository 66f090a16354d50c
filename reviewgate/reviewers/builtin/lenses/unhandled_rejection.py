"""Promises dropped with nobody to hear them fail (JavaScript, TypeScript): `void promise` with no
`.catch`, and a call to a function this file declares `async` that is neither awaited, returned
nor caught. Node ends the process on an unhandled rejection by default; browsers log it and carry
on with the work half done.

Not at a module's top level: there an unhandled rejection ends the process with the error
printed, which is what a script's `main()` wants. Minor in test or support code: the test runner
reports an unhandled rejection, and no user's process ends on it.

Only evidence that the value is a promise counts, so `void schema.parse(x)` (discarding a plain
value) stays quiet: the callee is declared `async` in the same file, is awaited elsewhere in it, is a
promise API (`fetch`, `Promise.all`, `.then`), or is an async arrow called in place. A name ending
in `Async` is weaker evidence and reports at minor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import SUPPORT_CODE, Finding, FindingClass, Severity
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.file_kinds import is_support_code
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.swallowed import ADVISORY_NOTE
from reviewgate.reviewers.builtin.moved_code import as_moved
from reviewgate.reviewers.builtin.rule import Example, File, Rule

UNHANDLED_REJECTION = Rule(
    id="correctness/unhandled-rejection",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Promise rejection not handled",
    full=(
        "A promise is discarded (`void p`, or an async call that is not awaited) with no rejection "
        "handler: a failure is lost, or ends the process as an unhandled rejection."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="medium",
    fires_on=(
        "JS/TS, on an added line inside a function or block: `void p` where `p` is a call with no "
        "`.catch(…)` and no `.then(ok, onRejected)`, and the file shows it is a promise — the callee "
        "is declared `async` in the same file (`void this.refresh()`), is awaited elsewhere in the "
        "file, is `fetch`/`import()`/`Promise.all…`/`.then(…)`, or is an async arrow called in place "
        "(`void (async () => {…})()`); a statement that only calls a function the file declares "
        "`async` (`pushChanges(queue);`), not awaited, returned, assigned or caught. A callee whose "
        "only evidence is an `…Async` name: minor; either kind in test or support code (the test "
        "runner reports an unhandled rejection, and a `void` there marks the discard as "
        "deliberate): minor"
    ),
    not_on=(
        "`void body.cancel().catch(() => undefined)`; `void Promise.allSettled([...])` (it never "
        "rejects); `void schema.safeParse(x)` and `void (x satisfies never)` (nothing says it is a "
        "promise); an async function whose whole body is a try/catch that does not rethrow (it cannot "
        "reject); calls at a module's top level (`main();`: an unhandled rejection there ends the "
        "process with the error printed). Minor, with a note: a call the merge base already makes, "
        "unhandled, from the function of the same name in the file (`start` calling `refresh`, moved "
        "into a class by a rewrite)"
    ),
    severity_note=f"(minor on weak evidence); {ADVISORY_NOTE}",
    fires=(
        Example(
            file=File("src/items.js", "javascript", """\
async function refresh() {
  const response = await fetch("/api/items");
  return response.json();
}

export function start() {
  void refresh();
}
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("src/items.js", "javascript", """\
async function refresh() {
  const response = await fetch("/api/items");
  return response.json();
}

export async function start() {
  await refresh();
}
"""),
        ),
    ),
)

RULES = (UNHANDLED_REJECTION,)


if TYPE_CHECKING:  # imported where a JavaScript or TypeScript file is read: a Python-only run never loads it
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

RULE_UNHANDLED_REJECTION = UNHANDLED_REJECTION.id

_JS_LANGUAGES = frozenset({Language.JAVASCRIPT, Language.TYPESCRIPT})
_VOID = LazyPattern(r"(?<![\w$.])void\s+(?=[\w$#(])")
_AWAITED = LazyPattern(r"\bawait\s+(?:[\w$#]+\s*(?:\?\.|!?\.)\s*)*(?P<name>#?[\w$]+)\s*\(")
_CALLED = LazyPattern(r"(?P<name>#?[\w$]+)\s*\(\)")
_PROMISE_API = LazyPattern(r"(?:^|[^\w$.])(?:fetch|import)\(\)|\bPromise\.(?:all|allSettled|race|any|reject)\(\)")
_STATEMENT_CALL = LazyPattern(r"[ \t]*(?P<chain>(?:this\.)?(?P<name>#?[\w$]+))\s*\(")
_STATEMENT_BOUNDARY = frozenset(";{})")
_CHAINED = LazyPattern(r"\.\s*(?P<method>catch|then)\s*\(")
# `Promise.allSettled(...)` fulfils whatever its promises do: alone, it never rejects.
_NEVER_REJECTS = LazyPattern(r"Promise\.allSettled\(\)")


class UnhandledRejectionLens:
    rule = RULE_UNHANDLED_REJECTION

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            if language_of(change.path) not in _JS_LANGUAGES:
                continue
            text = request.head.read_text(change.path)
            if text is None or ("void" not in text and "async" not in text):
                continue
            from reviewgate.reviewers.builtin.languages.javascript_source import read_js

            found = list(_FileCheck(change, read_js(text)).findings())
            if found and change.status is not ChangeStatus.ADDED:
                found = _moved_within_file(request, change, text, found)
            yield from found


# The function a statement calls: the last name before the first `(` (`this.refresh()`, `void sync()`).
_CALLEE = LazyPattern(r"(#?[\w$]+)\s*\(")


def _call_places(text: str, findings: list[Finding], path: str) -> list[tuple[str, str]]:
    """(enclosing function, called function) of each finding: the function by its own name, not
    its class's (a rewrite into a class keeps `start` calling `refresh`), innermost first."""
    from reviewgate.reviewers.builtin.languages.tree_shapes import shapes_of_file  # only for a file with findings

    shapes = list((shapes_of_file(text, path) or {}).values())  # a file that does not parse: no places
    lines = text.split("\n")
    places = []
    for finding in findings:
        line = finding.line or 0
        holding = [shape for shape in shapes if shape.line <= line <= shape.end_line]
        function = max(holding, key=lambda shape: shape.line).name if holding else ""
        callee = _CALLEE.search(lines[line - 1]) if 0 < line <= len(lines) else None
        places.append((function.rsplit(".", 1)[-1].split("#", 1)[0], callee.group(1) if callee else ""))
    return places


def _moved_within_file(request: ReviewRequest, change: FileChange, text: str, found: list[Finding]) -> list[Finding]:
    """Findings on a call the merge base already makes, unhandled, from the function of the same
    name in this file: moved within a rewrite of the file (into a class, split, reordered), not
    written by this change. Minor, with a note."""
    reader = base_reader_for(request.target)
    base = reader.read_text(change.old_path or change.path) if reader is not None else None
    if base is None or ("void" not in base and "async" not in base):
        return found
    before = Counter(_call_places(base, _every_unhandled_call(change, base), change.path))
    # The head's own unchanged calls keep theirs: only what the change removed can have moved.
    on_added_lines = {finding.line for finding in found}
    unchanged = [finding for finding in _every_unhandled_call(change, text) if finding.line not in on_added_lines]
    before -= Counter(_call_places(text, unchanged, change.path))
    kept = []
    for finding, place in zip(found, _call_places(text, found, change.path), strict=True):
        if place[1] and before[place] > 0:
            before[place] -= 1
            function = f"`{place[0]}`" if place[0] else "the top of the file"
            finding = as_moved(finding, f"the merge base makes this call of `{place[1]}` from {function} unhandled "
                                        "too: it moved within a rewrite of the file")
        kept.append(finding)
    return kept


def _every_unhandled_call(change: FileChange, text: str) -> list[Finding]:
    """The findings the file's text would give if every line were added."""
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    return list(_FileCheck(change, read_js(text), set(range(1, text.count("\n") + 2))).findings())


class _FileCheck:
    def __init__(self, change: FileChange, source: JsSource, added: set[int] | None = None) -> None:
        from reviewgate.reviewers.builtin.languages.javascript_source import async_names

        self.change = change
        self.source = source
        self.added = change.added_lines() if added is None else dict.fromkeys(added, "")
        self.asyncs = async_names(source)
        self.awaited: dict[str, int] = {}
        for match in _AWAITED.finditer(source.masked):
            self.awaited.setdefault(match.group("name"), source.line_of(match.start()))

    def _inside_a_block(self, offset: int) -> bool:
        """Whether `offset` is inside braces (a function, a class, a block), not at top level."""
        masked = self.source.masked
        return any(
            masked[opener] == "{" and opener < offset < closing
            for opener, closing in self.source.pairs.items()
            if opener < closing
        )

    def findings(self) -> Iterator[Finding]:
        seen: set[int] = set()
        for match in _VOID.finditer(self.source.masked):
            line = self.source.line_of(match.start())
            if line in self.added and line not in seen and self._inside_a_block(match.start()):
                found = self._voided(match.end(), line)
                if found is not None:
                    seen.add(line)
                    yield found
        if not self.asyncs:
            return
        for line in sorted(self.added):
            if line not in seen:
                found = self._floating(line)
                if found is not None:
                    yield found

    def _skeleton(self, start: int, end: int) -> str:
        """The chain with every bracketed group emptied: `body.cancel().catch()`."""
        masked = self.source.masked
        parts: list[str] = []
        index = start
        while index < end:
            char = masked[index]
            if char in "([" and index in self.source.pairs:
                closing = self.source.pairs[index]
                parts.append(char + masked[closing])
                index = closing + 1
            else:
                if not char.isspace():
                    parts.append(char)
                index += 1
        return "".join(parts)

    def _handled(self, start: int, end: int) -> bool:
        """A `.catch(...)` on the chain itself (not inside its arguments), or a
        `.then(onFulfilled, onRejected)`."""
        masked = self.source.masked
        index = start
        while index < end:
            if masked[index] in "([" and index in self.source.pairs:
                index = self.source.pairs[index] + 1
                continue
            method = _CHAINED.match(masked, index)
            if method is not None:
                opener = method.end() - 1
                if method.group("method") == "catch" or self._has_two_arguments(opener):
                    return True
            index += 1
        return False

    def _has_two_arguments(self, opener: int) -> bool:
        masked = self.source.masked
        index = opener + 1
        closing = self.source.pairs.get(opener, opener)
        while index < closing:
            if masked[index] in "([{" and index in self.source.pairs:
                index = self.source.pairs[index] + 1
                continue
            if masked[index] == ",":
                return masked[index + 1 : closing].strip() != ""  # not a trailing comma
            index += 1
        return False

    def _evidence(self, start: int, skeleton: str) -> tuple[Severity, str] | None:
        """Why the value is a promise, and how strongly."""
        from reviewgate.reviewers.builtin.languages.javascript_source import never_rejects

        if _NEVER_REJECTS.fullmatch(skeleton):
            return None
        names = [match.group("name") for match in _CALLED.finditer(skeleton)]
        for name in names:
            body = self.asyncs.get(name)
            if body is not None and not never_rejects(self.source, body):
                declared = self.source.line_of(body) if body >= 0 else None
                where = f" at line {declared}" if declared else ""
                return Severity.MAJOR, f"`{name}` is declared `async`{where} in this file"
        for name in names:
            if name in self.awaited:
                return Severity.MAJOR, f"`{name}(...)` is awaited at line {self.awaited[name]} of this file"
        if _PROMISE_API.search(skeleton) or ".then()" in skeleton:
            return Severity.MAJOR, "the chain is a promise API (`fetch`, `import()`, `Promise.*`, `.then`)"
        masked = self.source.masked
        if skeleton.startswith("()") and masked[self.source.skip_space(start + 1) :].startswith("async"):
            arrow = masked.find("=>", start, self.source.pairs.get(start, start))
            body = self.source.skip_space(arrow + 2) if arrow >= 0 else -1
            if body >= 0 and masked[body] == "{" and never_rejects(self.source, body):
                return None
            return Severity.MAJOR, "an `async` function is called in place"
        if names and names[-1].endswith("Async"):
            return Severity.MINOR, f"`{names[-1]}`'s name says it returns a promise"
        return None

    def _voided(self, start: int, line: int) -> Finding | None:
        from reviewgate.reviewers.builtin.languages.javascript_source import call_chain_end

        end = call_chain_end(self.source, start)
        skeleton = self._skeleton(start, end)
        if not skeleton.endswith(")") or self._handled(start, end):
            return None  # not a call (`void (x satisfies never)`), or its rejection is handled
        evidence = self._evidence(start, skeleton)
        if evidence is None:
            return None
        severity, why = evidence
        if is_support_code(self.change.path):
            # `void` is the explicit way to leave a promise unawaited, and a test runner reports
            # an unhandled rejection as a failure: in tests and scripts, worth a look only.
            return self._finding(line, Severity.MINOR, f"`void` discards the promise and {why}",
                                 " Reported as minor: `void` marks the discard as deliberate, in test or support code.",
                                 SUPPORT_CODE)
        return self._finding(line, severity, f"`void` discards the promise and {why}")

    def _floating(self, line: int) -> Finding | None:
        """A statement that is nothing but a call of a same-file async function."""
        from reviewgate.reviewers.builtin.languages.javascript_source import call_chain_end, never_rejects

        source = self.source
        start = source.line_starts[line - 1]
        match = _STATEMENT_CALL.match(source.masked, start)
        if match is None or match.group("name") not in self.asyncs:
            return None
        if not self._inside_a_block(match.start("chain")):
            return None
        before = source.skip_space_back(start - 1)
        if before >= 0 and source.masked[before] not in _STATEMENT_BOUNDARY:
            return None  # part of a longer expression: an argument, a return, an arrow's value
        body = self.asyncs[match.group("name")]
        if never_rejects(source, body):
            return None
        chain_start = match.start("chain")
        end = call_chain_end(source, chain_start)
        after = source.skip_space(end)
        if after < len(source.masked) and source.masked[after] not in ";}" and "\n" not in source.masked[end:after]:
            return None  # `load() || other()`, `load() ? a : b`: the value is used
        if self._handled(chain_start, end):
            return None
        declared = f" at line {source.line_of(body)}" if body >= 0 else ""
        evidence = (f"the call is not awaited, returned or caught, and `{match.group('name')}` is declared `async`"
                    f"{declared} in this file")
        if is_support_code(self.change.path):
            # A test runner hears what the call rejects with (it reports the unhandled rejection as
            # a failure of the run): no user's process ends, no work stops half done.
            return self._finding(line, Severity.MINOR, evidence,
                                 " Reported as minor: in test or support code, the test runner reports an "
                                 "unhandled rejection.", SUPPORT_CODE)
        return self._finding(line, Severity.MAJOR, evidence)

    def _finding(self, line: int, severity: Severity, evidence: str, note: str = "",
                 demoted: str | None = None) -> Finding:
        code = self.source.line_text(line)
        return lens_finding(
            demoted=demoted,
            rule=RULE_UNHANDLED_REJECTION,
            category="swallowed-failure",
            finding_class=FindingClass.CORRECTNESS,
            severity=severity,
            title="Promise rejection is unhandled",
            body=(
                f"Matched `{' '.join(code.split())[:100]}`: {evidence}; there is no `.catch` or rejection "
                "handler on it. If it rejects, nobody hears: Node ends the process on an unhandled "
                "rejection, a browser logs it and the work stops half done. Await it where the caller "
                "can handle the error, or add `.catch` that logs or reports it." + note
            ),
            path=self.change.path,
            line=line,
            code=code,
        )

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (UnhandledRejectionLens(),)
