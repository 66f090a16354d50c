"""New behaviour needs tests; a bug fix without a regression test is incomplete.

What the change does is judged against the merge base (behaviour.py): a function absent there,
a function with more branches, a changed default, a changed body. Which test covers which
function cannot be known without running them, so any test file added or changed in the diff
counts as the change's tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.diff import ChangeStatus, FileChange, LineKind
from reviewgate.reviewers.builtin.behaviour import ToldEvidence, analyse, is_behaviour_file
from reviewgate.reviewers.builtin.file_kinds import adds_inline_tests, is_test_file, is_test_input
from reviewgate.reviewers.builtin.function_comparison import Evidence, EvidenceKind
from reviewgate.reviewers.builtin.gradle_build import is_gradle_test_support
from reviewgate.reviewers.builtin.language_table import HASH_COMMENT, SLASH_COMMENT, Language, language_of
from reviewgate.reviewers.builtin.languages.shapes import Shapes
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.rule import Example, File, Rule

MISSING_TESTS = Rule(
    id="tests/missing-tests",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="New behaviour without a test",
    full=(
        "A source file gains a function or branches absent at the merge base, and the change adds or "
        "changes no test file. Behaviour without a test can break unnoticed."
    ),
    tags=("correctness", "testing"),
    precision="medium",
    fires_on=(
        "compared with the merge base, a source file (Python, JS/TS, Go, Java, C#, Kotlin, Rust, "
        "Ruby, PHP) gains a function absent there (``connect` is absent at the merge base``) or an "
        "existing function gains branches (`branches: 3 → 5 in `connect``), and the change adds or "
        "changes no test file; one finding per file, listing the evidence with `path:line`. **Major** "
        "when the evidence is strong: a new public function (not a stub — `...`, `pass`, `raise "
        "NotImplementedError`, an `@overload` — nor a bare accessor like `return self._name`, nor a "
        "Rust `Debug` impl's `fmt`, a developer's view whose output the standard library calls unstable, nor a "
        "one-statement question about what runs the code: `RUBY_ENGINE == \"jruby\"`, `sys.platform == "
        "\"win32\"`, `Rails::VERSION::MAJOR >= 7`, whose answer a CI matrix tests, not a unit test), any "
        "other new function of ≥ 5 statements (not one whose statements each register a constant "
        "row: `Translate<EmailValidator>(\"...\");`), or ≥ 2 new branches in one function; otherwise (a small "
        "private helper, a stub, one more branch, a changed default of a public function) minor. Also "
        "minor in a file the change puts back byte for byte as it was before the newest commit of the "
        "merge base's history that changed it, with that commit's test files back as they were too (a "
        "revert: the project's earlier code, told by the history and the code, not a message). Also "
        "minor when the file holds no more branches overall than at the merge base and the new "
        "functions rearrange decisions the file already made, or hold statements other functions of "
        "the file lost while the file's statements grow by at most one (a call) per new function (a "
        "refactor into helpers), and for a new function of at most 4 statements and no branch that "
        "restates what the file computed: an expression a function of the file computed inline at "
        "the merge base and now calls it for, every token of it (its parameters matched with the "
        "arguments passed) in the lines that function lost, within a stretch of them at most a third "
        "longer than it (`%r!#{dir}(.*)!` memoized as "
        "`superdirs_regex(dir)`), or the body (80 % of its tokens alike) of a sibling of the same "
        "class or file, there at the merge base and of no decision, whose name it makes plural or "
        "adds one word to (`RegisterFromAssemblies` beside `RegisterFromAssembly`, `getStateViewModel` "
        "beside `getViewModel`); and for code that only announces a removal: new branches each "
        "leading to a deprecation warning within 8 lines (`warnings.warn(..., DeprecationWarning)`, "
        "depd's `deprecate(...)`), or a new function of at most 8 statements whose branches all do "
        "(an alias that warns and forwards, a module `__getattr__` for a removed attribute)"
    ),
    not_on=(
        "moved or renamed functions (same normalised body as one at the base side of the changed "
        "files, including files the change only removes lines from or deletes); extracted helpers (≥ "
        "60 % of their distinct body lines, at least 3, already at the base side of the changed "
        "files, each line read without a leading `return` or assignment: an expression extracted into "
        "a helper that returns it); a function moved under the same name and edited on the way (the change removes "
        "the one function of that name, enclosing modules aside, from another place): compared with "
        "where it came from, as if edited in place, and so is a new method of at least 3 statements whose "
        "normalised body has 70 % of its tokens in common with the one of its name the change removes from "
        "another class (moved up into a base class and edited), and so is each method of a class renamed (a "
        "class the change removes whose every method, at least 3, one class of another name holds under "
        "its name); an existing function's new branches that replace as "
        "many calls of a guard helper of its file (a function at the merge base whose one decision "
        "raises: `assert(msg) { cond }` written out as `raise Error, msg unless cond`), or the branches of a "
        "function the change removes that it called at the merge base and no longer calls, 60 % of whose "
        "body lines (at least 3) it now holds (a helper written into its caller), or no more than the "
        "boolean operators and nil-safe calls it lost (`a && b` split into `return false unless a`); a Ruby method "
        "defined only where a literal lacks it (`def match?(s) ... end unless //.respond_to?(:match?)`: "
        "the runtime's method, backported); a Rust `if` that hands one stored setting on, unchanged, to "
        "the place of its name when it is set (`if let Some(size) = config.max_frame_size { "
        "builder.max_frame_size(size); }`, `if config.adaptive { builder.adaptive(true); }`), no "
        "decision of its own; translations (files under `locales/`, `locale/`, `i18n/`, `l10n/`, `translations/`); "
        "comments, docstrings, annotations and signature-only typing, formatting, string texts, "
        "renamed local variables; `if TYPE_CHECKING:` and `if __name__ == \"__main__\":` blocks; code "
        "inside string literals (a shell `if` in a Go raw string); a file that does not parse at one "
        "side; config and wiring files (`setup.py`, `conftest.py`, `*.config.js`, `*.d.ts`), a Rust "
        "package's build script (`build.rs` beside its Cargo.toml, or the manifest's `build = ...`), "
        "Gradle's build logic (an included build, `includeBuild(\"build-logic\")`, or `buildSrc/`), `docs/`, "
        "`examples/`, `scripts/`, `benchmarks/`, `migrations/`; any test file changed anywhere in the "
        "diff (code a Rust file's `#[test]` function or `#[cfg(test)]` module gains, an `assert!` added "
        "to a doc example `cargo test` runs — a fenced block in a library's doc comment, not `ignore`, "
        "`no_run` or another language's (`txt`) — and a `compile_fail` example written, a file in a "
        "Gradle project's test source set, `src/commonTest/` or `src/jvmTest/`, and "
        "the code of a project the build depends on only for tests, a "
        "`testImplementation(projects.testingSupport)` or test source set's dependency, the project "
        "not published, count as ones; an edit of a test file's comments alone does not)"
    ),
    severity_note=(
        "or minor; advisory: reported, not blocking unless `[lenses] block_on_missing_tests = true`"
    ),
    fires=(
        Example(
            file=File("app/prices.py", "python", """\
RATE = 2


def discounted(price, percent):
    if percent > 100:
        raise ValueError(percent)
    return price * (100 - percent) / 100
"""),
            caption="A new public function with a branch, and no test changed.",
            base=(
                File("app/prices.py", "python", """\
RATE = 2
"""),
                File("tests/test_prices.py", "python", """\
def test_rate():
    assert True
"""),
            ),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/prices.py", "python", """\
RATE = 2


def discounted(price, percent):
    if percent > 100:
        raise ValueError(percent)
    return price * (100 - percent) / 100
"""),
            caption="The change tests it.",
            base=(
                File("app/prices.py", "python", """\
RATE = 2
"""),
                File("tests/test_prices.py", "python", """\
def test_rate():
    assert True
"""),
            ),
            branch=(
                File("tests/test_prices.py", "python", """\
from app.prices import discounted


def test_rate():
    assert True


def test_discounted():
    assert discounted(100, 10) == 90
"""),
            ),
        ),
    ),
)

FIX_WITHOUT_TEST = Rule(
    id="tests/fix-without-test",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Fix without a test",
    full=(
        "The change is marked as a fix, alters what source code does, and changes no test file. A fix "
        "without a test that fails before it can regress unnoticed."
    ),
    tags=("correctness", "testing"),
    precision="medium",
    fires_on=(
        "the change is marked as a fix, changes no test file, and alters what source code does: any "
        "of the evidence above, or an existing function whose normalised body or default values "
        "changed (one finding for the change, placed on its first strong piece of evidence, else its "
        "first, over the lines the change adds there; the body names each function). **Major** when the fix brings "
        "a strong piece of evidence (a substantial new function, ≥ 2 new branches in one function) or "
        "changes a public default; a fix that only edits a few lines of existing functions is minor "
        "(on real merged fixes these were typing, runtime-compatibility and platform fixes taken "
        "untested)"
    ),
    not_on=(
        "fixes touching only docs, changelogs, CI files, dependency pins or packaging; comment, "
        "docstring, typing, formatting, string-text or local-rename edits; fixes that ship a test; "
        "files put back as they were before their last change (a revert: reported as minor)"
    ),
    severity_note=(
        "or minor; advisory: reported, not blocking unless `[lenses] block_on_missing_tests = true`"
    ),
    fires=(
        Example(
            file=File("app/prices.py", "python", """\
def total(a, b):
    return round(a + b, 2)
"""),
            caption="The change alters what `total` does and changes no test.",
            base=(
                File("app/prices.py", "python", """\
def total(a, b):
    return a + b
"""),
            ),
            branch_name="fix/rounding",
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/prices.py", "python", """\
def total(a, b):
    return round(a + b, 2)
"""),
            caption="The fix comes with its test.",
            base=(
                File("app/prices.py", "python", """\
def total(a, b):
    return a + b
"""),
            ),
            branch=(
                File("tests/test_prices.py", "python", """\
from app.prices import total


def test_total_rounds_to_cents():
    assert total(0.1, 0.2) == 0.3
"""),
            ),
            branch_name="fix/rounding",
        ),
    ),
)

RULES = (MISSING_TESTS, FIX_WITHOUT_TEST)


RULE_MISSING_TESTS = MISSING_TESTS.id
RULE_FIX_WITHOUT_TEST = FIX_WITHOUT_TEST.id
RULE_IDS = frozenset(rule.id for rule in RULES)
# Evidence lines shown in one finding's body; the rest are counted.
SHOWN_EVIDENCE = 6

__all__ = ["RULE_FIX_WITHOUT_TEST", "RULE_MISSING_TESTS", "TestsLens", "changes_tests", "is_behaviour_file"]


# Why a major tests finding does not block by default: on projects the lens was not tuned on, too
# few of its blocks held (docs/lenses.md, "Missing tests are advisory").
ADVISORY_REASON = (
    "missing tests are advisory: on projects the tests lens was not tuned on, too few of its blocks "
    "held (set [lenses] block_on_missing_tests = true to block on them)"
)


def changes_tests(request: ReviewRequest) -> bool:
    """Whether the change adds or changes test code: a test file, test support, or a Rust file's
    inline tests or asserting doc examples. An edit of a test file's comments alone (a doc comment
    on a fake) tests nothing; a doc example rustdoc runs is a test written as a comment."""
    return any(
        change.status is not ChangeStatus.DELETED
        and (
            (is_test_file(change.path) or is_test_input(request, change.path) or adds_inline_tests(change)
             or is_gradle_test_support(request, change.path))
            and not _only_comments(change)
            or _changes_rust_inline_tests(request, change)
        )
        for change in request.target.files
    )


def _changes_rust_inline_tests(request: ReviewRequest, change: FileChange) -> bool:
    """languages/rust_inline_tests.py, imported only for a Rust file: a run without one loads none of it."""
    if language_of(change.path) is not Language.RUST:
        return False
    from reviewgate.reviewers.builtin.languages.rust_inline_tests import changes_inline_tests

    return changes_inline_tests(request, change)


def _only_comments(change: FileChange) -> bool:
    """Whether every line the change adds to or removes from a code file is blank or a comment."""
    language = language_of(change.path)
    markers = ("#",) if language in HASH_COMMENT else ("//", "/*", "*") if language in SLASH_COMMENT else None
    if markers is None:
        return False
    lines = [line.text.strip() for hunk in change.hunks for line in hunk.lines
             if line.kind is LineKind.ADDED or line.kind is LineKind.REMOVED]
    return bool(lines) and all(not text or text.startswith(markers) for text in lines)


def _listing(evidence: list[Evidence]) -> str:
    lines = [f"- `{item.path}:{item.line}`: {item.detail}" for item in evidence[:SHOWN_EVIDENCE]]
    if len(evidence) > SHOWN_EVIDENCE:
        lines.append(f"- and {len(evidence) - SHOWN_EVIDENCE} more")
    return "\n".join(lines)


def _missing_tests(request: ReviewRequest, path: str, evidence: list[Evidence]) -> Finding:
    placed = _placed(evidence)
    return lens_finding(
        rule=RULE_MISSING_TESTS,
        category="tests",
        finding_class=FindingClass.CORRECTNESS,
        # Weak evidence (a tiny helper, one more branch, a changed default) is worth a look, not a block.
        severity=Severity.MAJOR if placed.strong else Severity.MINOR,
        title="New behaviour without a test change",
        body=(
            "Compared with the merge base, this file gains behaviour, and the change adds or changes "
            f"no test file. New behaviour needs tests.\n\n{_listing(evidence)}"
        ),
        path=path,
        line=placed.line,
        end_line=placed.span_end,
        code=_added_line(request, path, placed.line),
    )


def _placed(evidence: list[Evidence]) -> Evidence:
    """Where a finding on this evidence goes: its first strong piece, else its first."""
    return next((item for item in evidence if item.strong), evidence[0])


def _added_line(request: ReviewRequest, path: str, line: int) -> str:
    """The text the change adds at `path:line` (empty where it adds none): what a finding's id reads."""
    return next((change.added_lines().get(line, "") for change in request.target.files if change.path == path), "")


def _fix_severity(evidence: list[Evidence]) -> Severity:
    """Major when the fix brings behaviour a regression test would pin down: a substantial new
    function, grown branches, or a public default changed. A fix that only edits a few lines of
    existing functions is worth a remark, not a block: on real merged fixes of popular projects,
    those were typing, runtime-compatibility and platform fixes that maintainers took untested."""
    if any(item.strong or item.kind is EvidenceKind.CHANGED_DEFAULT for item in evidence):
        return Severity.MAJOR
    return Severity.MINOR


class TestsLens:
    __test__ = False  # not a pytest test class, whatever its name says

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        return self.check_with_shapes(request, None)

    def wants_shapes(self, request: ReviewRequest) -> bool:
        """Whether the lens reads the head side's functions (not when the change touches tests)."""
        return not changes_tests(request)

    def check_with_shapes(
        self,
        request: ReviewRequest,
        head_shapes: Mapping[str, Shapes | None] | None,
        extracted: Mapping[str, Mapping[str, bool]] | None = None,
        told: Mapping[str, ToldEvidence] | None = None,
    ) -> Iterator[Finding]:
        """The findings, given the head side's functions by path when the caller has them (and
        which of them were extracted from existing code: behaviour.extracted_verdicts; each file's
        evidence were no function removed: behaviour.told_evidence)."""
        if changes_tests(request):
            return
        # Changed bodies only matter for a fix: normalising every edited function costs a walk each.
        evidence = analyse(
            request, changed_bodies=request.marked_as_fix, head_shapes=head_shapes, extracted=extracted, told=told
        )
        if any(item.strong for item in evidence):
            # A file put back as it was before its last change is the project's earlier code: weak
            # evidence. Read only where evidence is strong, so most runs load none of it.
            from reviewgate.reviewers.builtin.restored_files import restored_paths

            restored = restored_paths(request, {item.path for item in evidence})
            evidence = [
                item._replace(strong=False, detail=f"{item.detail}; the file is as it was before "
                              f"{restored[item.path][:10]}, which the change undoes")
                if item.path in restored else item
                for item in evidence
            ]
        if request.marked_as_fix and evidence:
            severity = _fix_severity(evidence)
            # About the whole change, shown where its evidence is: the diff's annotation sits on
            # the code the fix changed.
            placed = _placed(evidence)
            weak = (
                "\n\nReported as minor: the fix edits existing functions without new functions, new "
                "branches or a changed public default."
                if severity is Severity.MINOR else ""
            )
            yield lens_finding(
                rule=RULE_FIX_WITHOUT_TEST,
                category="tests",
                finding_class=FindingClass.CORRECTNESS,
                severity=severity,
                title="Fix without a regression test",
                body=(
                    "The change is marked as a fix (branch name or head commit subject), changes what "
                    "the code does, and adds or changes no test. A bug fix without a "
                    "regression test is incomplete; add the test that fails without the fix.\n\n"
                    f"Behaviour changed against the merge base:\n{_listing(evidence)}{weak}"
                ),
                path=placed.path,
                line=placed.line,
                end_line=placed.span_end,
                code=_added_line(request, placed.path, placed.line),
            )
        by_path: dict[str, list[Evidence]] = {}
        for item in evidence:
            if item.adds_behaviour:
                by_path.setdefault(item.path, []).append(item)
        for path, items in by_path.items():
            yield _missing_tests(request, path, items)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (TestsLens(),)
