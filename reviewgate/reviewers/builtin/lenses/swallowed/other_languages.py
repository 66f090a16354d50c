"""Swallowed failures outside Python ("for every catch, default or fallback,
whether a real failure now looks like success"), found by careful tokenization of each language:
empty `catch` blocks (JavaScript, TypeScript, Java, C#, Kotlin), promise `.catch(() => {})`,
Go's `if err != nil { return nil }` and `_ = err`, shell `|| true` and `set +e` in CI and scripts.

An empty catch or a promise `.catch(() => undefined)` with a comment in it or right above it (or
above its `try`, past at most two lines that set the fallback value) that says why is a deliberate fallback ("Ignore cancellation failures from
already-locked streams"): reported as minor with the comment as evidence. "ignore", a to-do or a
lint pragma is not a reason, and stays major."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator

from reviewgate.context import ReviewRequest
from reviewgate.findings import BY_DESIGN, SUPPORT_CODE, Finding, FindingClass, Severity
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import reviewable_changes
from reviewgate.reviewers.builtin.comment_intent import explains_a_fallback, states_a_reason
from reviewgate.reviewers.builtin.comments import comment_on, defused_comment_openers
from reviewgate.reviewers.builtin.file_kinds import is_ci_or_script, is_support_code
from reviewgate.reviewers.builtin.language_table import C_LIKE, Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.swallowed import ADVISORY_NOTE
from reviewgate.reviewers.builtin.lenses.swallowed.catch_context import deliberate_catch
from reviewgate.reviewers.builtin.lenses.swallowed.exit_traps import exit_trap_lines
from reviewgate.reviewers.builtin.lenses.swallowed.go_results import returns_no_error
from reviewgate.reviewers.builtin.lenses.swallowed.handler_comments import nearby_comments
from reviewgate.reviewers.builtin.rule import Example, File, Rule

EMPTY_CATCH = Rule(
    id="correctness/empty-catch",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Empty catch block",
    full=(
        "A catch block or promise `.catch` handler that is empty or holds only comments drops the "
        "error. Handle, log or rethrow it, or say in a comment why it can be ignored."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="high",
    fires_on=(
        "JS/TS/Java/C#/Kotlin: `catch { }` / `catch (e) { }` whose body is empty or comments only; "
        "promise `.catch(() => {})`, `.catch(() => null)`, `.catch(function () {})` — e.g. `catch { "
        "// ignore }` or `catch (e) { /* TODO */ }`. With a comment that says why — in the handler (a "
        "reason word or ≥ 4 words of prose: `// Use default message if accessing properties throws`), "
        "or right above it / above its `try` (past at most two lines that set the fallback value) and "
        "about the failure (`// Ignore cancellation failures from already-locked streams`) — it is a "
        "deliberate fallback: **minor**, quoting the comment. Also minor in test and support code "
        "(test files, `scripts/`, `bench/`, `benchmarks/`, `examples/`): a test's assertions are its "
        "check, and a script ships to no user; and for the shapes that drop a failure by design: a "
        "promise `.catch` on a clean-up call (`reader.cancel().catch(() => undefined)`: cancel, close, "
        "abort, destroy, dispose, detach, shutdown, unlink, unsubscribe …), on the copy a `.finally()` "
        "makes (`void work.finally(cleanup).catch(() => {})`: the rejection is handled where `work` is "
        "awaited), an empty `catch {}` after a `try` block that returns (`try { return new "
        "TextDecoder(label); } catch {}`, the `return` after a `;`, a brace or on a line of its own: a "
        "failure falls through to the default after it), after a `try` block that is one clean-up "
        "call (`try { close() } catch (_: Exception) {}`, also behind earlier catches of the same "
        "`try`), a JVM catch of only `ClassNotFoundException`, `NoSuchMethodException`, "
        "`NoSuchFieldException` or `NoClassDefFoundError` (a lookup by name whose absence is the "
        "answer), and a `try` block that ends by assigning a name the statement right after the "
        "catch tests (`try { url = new URL(input); } catch {}` then `if (!url)`, `url == null`, `url "
        "??`)"
    ),
    not_on=(
        "catches that log, rethrow, wrap or return an error; commented-out code; catches the merge "
        "base already had (as many matches in the file at the merge base as at head: a formatter's "
        "pass, a test wrapped in `describe`). \"ignore\", \"ignored\", a to-do (`TODO`, `FIXME`, \"for "
        "now\") or a lint pragma is not a reason and stays major"
    ),
    severity_note=f"(minor with a reason); {ADVISORY_NOTE}",
    fires=(
        Example(
            file=File("src/config.js", "javascript", """\
export function readConfig(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
  }
}
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("src/config.js", "javascript", """\
export function readConfig(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    console.error("config is not JSON", error);
    throw error;
  }
}
"""),
        ),
    ),
)


DROPPED_ERROR = Rule(
    id="correctness/dropped-error",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    severity_note=f", {ADVISORY_NOTE}",
    short="Go error dropped",
    full=(
        "An `if err != nil` block returns nil or nothing, or the error is assigned to `_`: the caller "
        "never learns of the failure. Return or wrap the error."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="high",
    fires_on="Go: `if err != nil { return nil }` (or `return nil, nil`, or an empty block), and `_ = err`",
    not_on=(
        "`return nil, fmt.Errorf(…%w…, err)`; `if errors.Is(err, os.ErrNotExist) { return nil }`; "
        "`return nil` in a function with no `error` result (`func Find(id string) *User`, "
        "`[]string`): its nil value is the answer there"
    ),
    fires=(
        Example(
            file=File("store/load.go", "go", """\
package store

import "os"

func Load(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	return data, nil
}
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("store/load.go", "go", """\
package store

import (
	"fmt"
	"os"
)

func Load(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return data, nil
}
"""),
        ),
    ),
)


IGNORED_EXIT_STATUS = Rule(
    id="correctness/ignored-exit-status",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    severity_note=f", {ADVISORY_NOTE}",
    short="Shell command's failure ignored",
    full=(
        "`|| true`, `|| :` or `set +e` in a script or CI file lets a failing command pass silently. "
        "Handle the failure, or let it stop the script."
    ),
    tags=("correctness", "reliability", "error-handling"),
    precision="high",
    fires_on=(
        "`|| true`, `|| :`, `set +e`, `set +o errexit` on an added line of a shell script, "
        "`.github/workflows/`, `.gitlab-ci.yml`, `.ci/`, `ci/`, `scripts/`, `.circleci/`, `Makefile`, "
        "`Dockerfile`, `Jenkinsfile`, `justfile`"
    ),
    not_on=(
        "comments; the same text in docs or other files; a script's clean-up on exit: a `trap '… || "
        "true' EXIT` line and the body of a function an EXIT trap runs (`cleanup() { rm -rf \"$tmp\" || "
        "true; }`), where a failed clean-up step must not replace the script's own exit status"
    ),
    fires=(
        Example(
            file=File("scripts/deploy.sh", "sh", """\
#!/bin/sh
set -e
make test || true
make deploy
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("scripts/deploy.sh", "sh", """\
#!/bin/sh
set -e
# no `|| true` after the tests: a failing test must stop the deploy
make test
make deploy
"""),
        ),
    ),
)


RULES = (EMPTY_CATCH, DROPPED_ERROR, IGNORED_EXIT_STATUS)


RULE_EMPTY_CATCH = EMPTY_CATCH.id


RULE_DROPPED_ERROR = DROPPED_ERROR.id


RULE_IGNORED_EXIT = IGNORED_EXIT_STATUS.id


# Whitespace and comments only: the block does nothing. Each comment matches one way only: a
# line comment runs to the end of its line, a block comment stops at its own `*/`. (With
# `//[^\n]*` free to stop early, a `////////` banner line splits into exponentially many
# comments when no `}` follows: a 1,300-line file held the gate for minutes.)
_NOTHING = r"(?:\s|//[^\n]*(?![^\n])|/\*(?:[^*]|\*(?!/))*\*/)*"


_EMPTY_CATCH = LazyPattern(r"\bcatch\b\s*(?:\([^(){}]*\))?\s*\{" + _NOTHING + r"\}", re.DOTALL)
_PROMISE_CATCH = LazyPattern(
    r"\.catch\(\s*(?:async\s+)?(?:\(\s*[\w$]*\s*(?::\s*[\w$]+)?\s*\)|[\w$]+)\s*=>\s*"
    r"(?:\{" + _NOTHING + r"\}|null|undefined|void 0)\s*\)"
    r"|\.catch\(\s*function\s*[\w$]*\s*\([^)]*\)\s*\{" + _NOTHING + r"\}\s*\)",
    re.DOTALL,
)


_GO_DROPPED = LazyPattern(
    r"\bif\s+(?:[^{};\n]+;\s*)?(?P<name>[\w.]*[eE]rr\w*)\s*!=\s*nil\s*\{\s*(?:return\s+nil(?:\s*,\s*nil)*\s*)?\}"
)


_GO_BLANK = LazyPattern(r"^\s*_\s*=\s*(?P<name>err\w*|\w*Err)\s*$")
_SHELL_TRUE = LazyPattern(r"\|\|\s*(?:true|:)\s*(?:$|[;&)#'\"])")


_SHELL_SET_E = LazyPattern(r"(?:^|[\s;'\"])set\s+(?:\+e|\+o\s+errexit)\b")


def _line_starts(text: str) -> list[int]:
    return [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]


class OtherLanguagesSwallowedFailureLens:
    rules = (RULE_EMPTY_CATCH, RULE_DROPPED_ERROR, RULE_IGNORED_EXIT)

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            language = language_of(change.path)
            if is_ci_or_script(change.path):
                yield from self._shell(change, language, functools.partial(request.head.read_text, change.path))
            if language not in C_LIKE:
                continue
            text = request.head.read_text(change.path)
            if text is None:
                continue
            # The merge-base side is read only when a match makes it matter (most files have none).
            base_text = functools.cache(functools.partial(_base_text, request, change))
            yield from self._blocks(change, language, text, base_text)

    def _blocks(
        self, change: FileChange, language: Language, text: str, base_text: Callable[[], str | None]
    ) -> Iterator[Finding]:
        added = change.added_lines()
        starts = _line_starts(text)
        lines = text.split("\n")
        patterns: list[tuple[LazyPattern, str]] = []
        if language is Language.GO:
            patterns.append((_GO_DROPPED, RULE_DROPPED_ERROR))
        else:
            patterns += [(_EMPTY_CATCH, RULE_EMPTY_CATCH), (_PROMISE_CATCH, RULE_EMPTY_CATCH)]
        # Searched with the `/*` no `*/` follows defused (one character for one, so the offsets are
        # the text's): each `catch {` tried such an opener to the end of the file (40 KB of
        # `catch {/*` lines: 3.4 s, growing with the square of the size). A match is read from `text`.
        searched = defused_comment_openers(text)[0]
        for pattern, rule in patterns:
            matches = [match for match in pattern.finditer(searched) if not _idiom(pattern, text, match)]
            if not matches:
                continue
            base = base_text()
            if base is not None and len(matches) <= _count(pattern, base):
                # The file had as many of these at the merge base: re-indented, re-wrapped or
                # moved (a formatter's pass, a test wrapped in `describe`), not added by this change.
                continue
            for match in matches:
                first = bisect.bisect_right(starts, match.start())
                last = bisect.bisect_right(starts, match.end() - 1)
                if not any(number in added for number in range(first, last + 1)):
                    continue
                if comment_on(first, lines[first - 1], language) is not None and lines[
                    first - 1
                ].strip().startswith(("//", "/*", "*")):
                    continue  # commented-out code is the readability lens's business
                evidence = ""
                if rule == RULE_EMPTY_CATCH:
                    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

                    inside, above = nearby_comments(read_js(text), match, lines, language)
                    reason = "\n".join(part for part in (inside, above) if part)
                    if states_a_reason(inside) or explains_a_fallback(above):
                        yield self._deliberate(change.path, first, last, lines[first - 1], reason)
                        continue
                    by_design = deliberate_catch(text, match.start(), match.end(), pattern is _PROMISE_CATCH)
                    if by_design is not None:
                        yield self._by_design(change.path, first, last, lines[first - 1], by_design)
                        continue
                    said = f' (only "{" ".join(reason.split())[:80]}")' if reason else ""
                    evidence = (
                        f" Matched `{' '.join(text[match.start() : match.end()].split())[:80]}`: no comment in it or right "
                        f"above it says why the failure is expected{said}."
                    )
                yield self._finding(change.path, first, last, rule, lines[first - 1], evidence)
        if language is Language.GO:
            for number, line in added.items():
                if _GO_BLANK.match(line):
                    yield self._finding(change.path, number, number, RULE_DROPPED_ERROR, line)

    def _deliberate(self, path: str, line: int, end_line: int, code: str, reason: str) -> Finding:
        quoted = " ".join(reason.split())
        return self._minor_catch(
            path, line, end_line, code, "Deliberate fallback swallows the failure",
            f"This handler drops the error, and the comment next to it says why: \"{quoted[:200]}\". "
            "Reported as minor: check that only the failure it describes can reach it (a narrower "
            "condition, or a log line, keeps other failures visible).",
        )

    def _by_design(self, path: str, line: int, end_line: int, code: str, why: str) -> Finding:
        return self._minor_catch(
            path, line, end_line, code, "Empty catch drops a failure by design",
            f"This handler drops the error: {why}. Reported as minor: check that no other failure can reach it.",
        )

    def _minor_catch(self, path: str, line: int, end_line: int, code: str, title: str, body: str) -> Finding:
        return lens_finding(
            demoted=BY_DESIGN,
            rule=RULE_EMPTY_CATCH,
            category="swallowed-failure",
            finding_class=FindingClass.CORRECTNESS,
            severity=Severity.MINOR,
            title=title,
            body=body,
            path=path,
            line=line,
            end_line=end_line if end_line != line else None,
            code=code,
        )

    def _shell(self, change: FileChange, language: Language, read: Callable[[], str | None]) -> Iterator[Finding]:
        cleanup: set[int] | None = None  # worked out when a `|| true` makes it matter
        for number, line in sorted(change.added_lines().items()):
            code = line.split(" #", 1)[0] if language is not Language.OTHER else line
            if code.lstrip().startswith("#"):
                continue
            if _SHELL_SET_E.search(code):
                yield self._finding(change.path, number, number, RULE_IGNORED_EXIT, line)
            elif _SHELL_TRUE.search(code):
                if cleanup is None:
                    cleanup = exit_trap_lines(read() or "")
                if number not in cleanup:
                    yield self._finding(change.path, number, number, RULE_IGNORED_EXIT, line)

    def _finding(self, path: str, line: int, end_line: int, rule: str, code: str, evidence: str = "") -> Finding:
        title, body = _WORDING[rule]
        body += evidence or f" Matched `{' '.join(code.split())[:100]}`."
        severity, demoted = Severity.MAJOR, None
        if rule == RULE_EMPTY_CATCH and is_support_code(path):
            # A test swallowing an expected throw is checked by its own assertions after it; a
            # script, benchmark or example ships to no user: neither makes a production failure
            # look like success.
            severity, demoted = Severity.MINOR, SUPPORT_CODE
            body += " Reported as minor: this is test or support code (tests, scripts, benchmarks, examples)."
        return lens_finding(
            demoted=demoted,
            rule=rule,
            category="swallowed-failure",
            finding_class=FindingClass.CORRECTNESS,
            severity=severity,
            title=title,
            body=body,
            path=path,
            line=line,
            end_line=end_line if end_line != line else None,
            code=code,
        )


def _base_text(request: ReviewRequest, change: FileChange) -> str | None:
    """The file as the merge base has it (its old name for a rename); None when it is new."""
    base = base_reader_for(request.target)
    if base is None or change.status is ChangeStatus.ADDED:
        return None
    return base.read_text(change.old_path or change.path)


def _idiom(pattern: re.Pattern[str] | LazyPattern, text: str, match: re.Match[str]) -> bool:
    """A match that is the language's idiom where it stands, not a swallowed failure."""
    return pattern is _GO_DROPPED and returns_no_error(text, match)


def _count(pattern: re.Pattern[str] | LazyPattern, text: str) -> int:
    searched = defused_comment_openers(text)[0]  # as `_blocks` searches
    return sum(1 for match in pattern.finditer(searched) if not _idiom(pattern, text, match))


_WORDING = {
    RULE_EMPTY_CATCH: (
        "Empty catch swallows the failure",
        "This handler catches the error and does nothing with it, so a real failure here looks like "
        "success to the caller. Handle the specific error you expect, and log, rethrow or return an "
        "explicit error for the rest.",
    ),
    RULE_DROPPED_ERROR: (
        "Non-nil error is dropped",
        "The error is checked and then thrown away (or assigned to `_`), so the caller sees success "
        "when the operation failed. Return it (wrapped with context), or handle the specific case.",
    ),
    RULE_IGNORED_EXIT: (
        "Failing command's exit status is ignored",
        "`|| true` / `set +e` makes a failed command look like success, so CI passes when the step "
        "broke. Check for the specific condition you expect instead.",
    ),
}


# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (OtherLanguagesSwallowedFailureLens(),)
