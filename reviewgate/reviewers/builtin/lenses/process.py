"""The process rules that a diff alone can show."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from reviewgate.config import Config
from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id
from reviewgate.freeze.diff import ChangeStatus
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.rule import Example, File, Rule
from reviewgate.reviewers.builtin.settings import (
    OPT_IN_DIRECTORY,
    SECTION,
    ReproductionPolicy,
    check_lens_settings,
    describe_reproduction_rule,
    parse_lens_settings,
    reproduction_rules_apply,
)
from reviewgate.verify.outcome import ReproductionStatus

REPRO_IN_DIFF = Rule(
    id="process/repro-in-diff",
    finding_class=FindingClass.SYSTEMATIC,
    severity=Severity.MAJOR,
    short="Reproduction files are part of the change",
    full=(
        "Files under `repro/` or `.repro/` are meant to reproduce a problem during review, not to be "
        "merged."
    ),
    tags=("process",),
    precision="very-high",
    fires_on="any file under `repro/` or `.repro/` in the diff",
    not_on="deletions",
    fires=(
        Example(
            file=File("repro/case.py", "python", """\
print(0.1 + 0.2)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("tests/repro/test_rounding.py", "python", """\
def test_adding_cents_is_exact():
    assert round(0.1 + 0.2, 2) == 0.3
"""),
            caption="The reproduction turned into a regression test.",
        ),
    ),
)

MISSING_REPRODUCTION = Rule(
    id="process/missing-reproduction",
    finding_class=FindingClass.SYSTEMATIC,
    severity=Severity.MAJOR,
    short="Required reproduction is missing",
    full=(
        "The repository's policy requires a reproduction for this change and none was found (from the "
        "issue, `REPRODUCTION.md` or `.reviewgate/reproduction.md`)."
    ),
    tags=("process",),
    precision="very-high",
    fires_on=(
        "**only in repositories that opt in** (below): the policy requires a reproduction and there "
        "is none: not from the forge's issue (`ReviewRequest.reproduction`), nor in `REPRODUCTION.md` "
        "/ `.reviewgate/reproduction.md` at head"
    ),
    not_on=(
        "repositories that did not opt in; policy `never`; policy `fixes` on a change not marked as a "
        "fix"
    ),
    fires=(
        Example(
            file=File("app/prices.py", "python", """\
def total(a, b):
    return round(a + b, 2)
"""),
            caption=(
                "A fix with no reproduction anywhere, in a repository that opted in (it has a "
                "`.prepcook/` directory)."
            ),
            base=(
                File(".prepcook/scripts.toml", "toml", """\
[test]
run = "true"
"""),
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
            caption="The same fix in a repository that did not opt in.",
            base=(
                File("app/prices.py", "python", """\
def total(a, b):
    return a + b
"""),
            ),
            branch_name="fix/rounding",
        ),
    ),
)

REPRODUCTION_NOT_RERUN = Rule(
    id="process/reproduction-not-rerun",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Reproduction did not pass against the change",
    full="A reproduction exists, but the verify's `reproduce` step did not pass against this change.",
    tags=("process", "correctness"),
    precision="very-high",
    fires_on=(
        "**only in repositories that opt in**: a reproduction exists but the verify's `reproduce` "
        "step did not pass against this change (absent or failed)"
    ),
    not_on="repositories that did not opt in; `verify.reproduction = passed`",
    fires=(
        Example(
            file=File("app/prices.py", "python", """\
def total(a, b):
    return round(a + b, 2)
"""),
            caption=(
                "In a repository that opted in, the change brings a reproduction that no verify step "
                "re-ran."
            ),
            base=(
                File(".prepcook/scripts.toml", "toml", """\
[test]
run = "true"
"""),
                File("app/prices.py", "python", """\
def total(a, b):
    return a + b
"""),
            ),
            branch=(
                File("REPRODUCTION.md", "markdown", """\
total(0.1, 0.2): expected 0.3, observed 0.30000000000000004
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
            caption="The same change in a repository that did not opt in.",
            base=(
                File("app/prices.py", "python", """\
def total(a, b):
    return a + b
"""),
            ),
            branch=(
                File("REPRODUCTION.md", "markdown", """\
total(0.1, 0.2): expected 0.3, observed 0.30000000000000004
"""),
            ),
            branch_name="fix/rounding",
        ),
    ),
)

RULES = (REPRO_IN_DIFF, MISSING_REPRODUCTION, REPRODUCTION_NOT_RERUN)


REPRODUCTION_DIRECTORIES = ("repro", ".repro")


def is_reproduction_file(path: str) -> bool:
    return path.split("/", 1)[0] in REPRODUCTION_DIRECTORIES


class ReproductionFilesLens:
    """Anything under repro/ or .repro/ in the diff is a systematic major too:
    A reproduction harness belongs on the card or in the tests, not in the shipped tree."""

    rule = REPRO_IN_DIFF.id

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in request.target.files:
            if change.status is ChangeStatus.DELETED or not is_reproduction_file(change.path):
                continue
            title = "Reproduction files are part of the change"
            yield Finding(
                id=make_finding_id("builtin", change.path, "reproduction", title),
                finding_class=FindingClass.SYSTEMATIC,
                severity=Severity.MAJOR,
                category="reproduction",
                rule=self.rule,
                title=title,
                body=(
                    f"`{change.path}` is under a reproduction directory. A reproduction is an acceptance "
                    "harness for the review, not product code: keep it on the issue or turn it into a "
                    "regression test, and remove it from the branch."
                ),
                source="builtin",
                path=change.path,
            )


RULE_MISSING_REPRODUCTION = MISSING_REPRODUCTION.id
RULE_REPRODUCTION_NOT_RERUN = REPRODUCTION_NOT_RERUN.id
# A reproduction kept in the repository instead of on the forge's issue (docs/lenses.md).
REPRODUCTION_FILES = ("REPRODUCTION.md", ".reviewgate/reproduction.md")


def find_reproduction(request: ReviewRequest) -> str | None:
    """The reproduction text: from the forge first, else a reproduction file at head."""
    if request.reproduction and request.reproduction.strip():
        return request.reproduction
    for path in REPRODUCTION_FILES:
        text = request.head.read_text(path)
        if text is not None and text.strip():
            return text
    return None


def reproduction_rule_line(repo: Path, commit: str, config: Config) -> str:
    """`reviewgate doctor`'s line on the reproduction rule, as a review against `commit` as the
    merge base would apply it; a bad `[lenses]` section raises the ConfigError naming it."""
    settings = check_lens_settings(config)
    return describe_reproduction_rule(settings, TreeReader(repo, commit).is_directory(OPT_IN_DIRECTORY))


def has_opt_in_directory(request: ReviewRequest) -> bool:
    """Whether .prepcook/ exists at the merge base (at head for a bundle, which has no base), so
    a branch cannot switch the rules off by deleting it, nor on for itself by adding it."""
    reader = base_reader_for(request.target) or request.head
    return reader.is_directory(OPT_IN_DIRECTORY)


class ReproductionPolicyLens:
    """No reproduction on the card at all is the first finding, systematic, major, and
    a reproduction "that was not re-run against this change is a correctness major". Only for
    repositories that opted in (settings.reproduction_rules_apply)."""

    reads = REPRODUCTION_FILES  # at head, on every review: the builtin reviewer reads them in its batch

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        settings = parse_lens_settings(request.sections.get(SECTION, {}), warn=False)
        policy = settings.require_reproduction
        reproduction = find_reproduction(request)
        status = request.verify.reproduction
        if reproduction is None:
            reports = policy is ReproductionPolicy.ALWAYS or (
                policy is ReproductionPolicy.FIXES and request.marked_as_fix
            )
        else:
            reports = status is not ReproductionStatus.PASSED
        # The opt-in is asked last: reading the base costs a git process, most changes need none.
        if not reports or not reproduction_rules_apply(settings, has_opt_in_directory(request)):
            return
        if reproduction is None:
            yield lens_finding(
                rule=RULE_MISSING_REPRODUCTION,
                category="reproduction",
                finding_class=FindingClass.SYSTEMATIC,
                severity=Severity.MAJOR,
                title="No reproduction for this change",
                body=(
                    f'The policy (lenses.require_reproduction = "{policy.value}") requires a '
                    "reproduction and none was found: not on the forge's issue, nor in "
                    f"{' or '.join(REPRODUCTION_FILES)}. Write down the failing case (inputs, expected, "
                    "observed) so the review can check the change against it."
                ),
                path=None,
            )
            return
        what = (
            "failed"
            if status is ReproductionStatus.FAILED
            else "was not run (no `reproduce` step in the verify)"
        )
        yield lens_finding(
            rule=RULE_REPRODUCTION_NOT_RERUN,
            category="reproduction",
            finding_class=FindingClass.CORRECTNESS,
            severity=Severity.MAJOR,
            title="Reproduction not re-run against this change",
            body=(
                f"A reproduction exists but its re-run {what}. Passing unit tests do not stand in "
                "for the case the customer hit; run it in the verify's `reproduce` step against this change."
            ),
            path=None,
        )

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (ReproductionFilesLens(), ReproductionPolicyLens())
