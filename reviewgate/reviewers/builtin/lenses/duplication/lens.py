"""Reuse and DRY, the first weight: added code that repeats code the repository already has (or
that the change adds twice). The search (search.py: normalization, fingerprints, the
stored index) is imported only for a change that could repeat anything: a finding needs
MIN_LINES added lines of code in one file, or a file git itself saw copied. A change smaller
than that (most pushes of a review) loads none of it. What the search finds becomes findings here,
beside the rules' declarations.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import BY_DESIGN, Finding, FindingClass, Severity
from reviewgate.freeze.diff import ChangeStatus
from reviewgate.reviewers.builtin.file_kinds import is_configuration_file
from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.duplication.sizes import MIN_LINES
from reviewgate.reviewers.builtin.rule import Example, File, Rule

if TYPE_CHECKING:  # the search's, imported only for a change that could repeat anything
    from reviewgate.reviewers.builtin.lenses.duplication.duplicates import Candidate
    from reviewgate.reviewers.builtin.lenses.duplication.rules import Families

DUPLICATE_CODE = Rule(
    id="reuse/duplicate-code",
    finding_class=FindingClass.SYSTEMATIC,
    severity=Severity.MAJOR,
    short="Added code repeats code that already exists",
    full=(
        "Added code has the same normalized tokens as code elsewhere in the repository, under one "
        "consistent renaming of identifiers and changed literals. Two copies are two places to fix "
        "the next bug: call or extend the existing code instead."
    ),
    tags=("maintainability", "duplication"),
    precision="medium",
    fires_on=(
        "added code (≥ 5 non-empty lines, ≥ 4 distinct, ≥ 50 characters once normalized; a whole "
        "definition from 32 when it holds 3 decisions, calls and arithmetic operators, not one of plain "
        "assignments and returns) with the same normalized tokens as code "
        "elsewhere in the repository at head, under renamed identifiers and changed literals, where "
        "the aligned names follow one consistent renaming (≥ 85 % of them: `total → amount` "
        "everywhere; a name kept as it is, such as the attribute in `self.total = amount`, always "
        "agrees); blocks under 12 lines must also share a quarter of their names (called functions, "
        "attributes). A copy whose independent statements were put in another order is still one (a "
        "block of up to 4 lines in another order, its lines paired by shape and names); a function around the "
        "same table (the same strings and numbers in order) is one. Each pair is reported once: repetition inside the branch at the second copy, a "
        "pair found from both sides at the later place, a copy broken by one small edit as one "
        "finding. The title names a real definition of the existing code, found by its own language's "
        "syntax: ``use `load_settings` at app/settings.py:4``; the body quotes the existing code with "
        "both places and the number of lines. Fewer than 5 substantive lines (two names or more, not "
        "an argument line) is weak evidence: minor, which does not block. Also minor (sizes in lines "
        "of code: docstring, comment and blank lines are not counted): a copy of existing code under "
        "20 lines that is a fragment (it does not copy a whole definition on both sides); repetition "
        "inside the change under 25 lines (parallel variants written side by side); runs in two "
        "subclasses of the same base class (two implementations of one interface, such as "
        "`ZshComplete` and `PowerShellComplete`); under 20 lines, runs that both open a class, under "
        "different names with the same bases or none (a new sink or handler beside the others: the "
        "same attribute and method headers by design); two files of the same name in directories that "
        "mirror each other (at head they hold at least 3 other files of the same names, and those are "
        "at least half of the smaller one: `v4/classic/` and `v4/mini/`, `_async/` and `_sync/`), "
        "variants of one module kept side by side; one module for two module systems beside each "
        "other (`index.d.ts` and `index.d.cts`, `lib.mjs` and `lib.cjs`)."
    ),
    not_on=(
        "test files (helpers are meant to look alike); examples and benchmarks (`examples/`, "
        "`bench/`, `benchmarks/`: standalone by design); translations (`locales/`, `locale/`, "
        "`i18n/`, `l10n/`, `translations/`: one file per language by design); vendored dirs "
        "(`node_modules`, `vendor`, `third_party`, `dist`, `build`); files over 1 MB or `.min.` "
        "files; imports; hunks that only re-wrap or re-indent (their added lines equal their removed "
        "lines once whitespace, line breaks, quote style and trailing commas are folded: a "
        "formatter's pass); code the change moves (the old place is gone at head), including a new "
        "file split out of a file the change shrank (compared with that file at head, not as a fork); "
        "tables (regions whose operands are mostly strings and numbers) that differ in their literals "
        "(the same strings and numbers in the same order under new names are a copy), or a table "
        "alone; a shape "
        "repeated inside one run (`self.a = a` ×6); two calls of one helper with keyword arguments "
        "(argument lines do not count as distinct); code that only shares a shape, with names that do "
        "not map one-to-one."
    ),
    severity_note=(
        ", advisory: reported, not blocking unless `[lenses] block_on_duplicates = true` (minor on "
        "weak evidence)"
    ),
    fires=(
        Example(
            file=File("app/jobs.py", "python", """\
import json


def run():
    return 1


def read_job_config(filename, fallback):
    with open(filename, encoding="utf-8") as stream:
        payload = json.load(stream)
    result = dict(fallback)
    for name, item in payload.items():
        if name in result and item is not None:
            result[name] = item
    return result
"""),
            caption="The change writes the same code again under new names.",
            base=(
                File("app/settings.py", "python", """\
import json


def load_settings(path, defaults):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    merged = dict(defaults)
    for key, value in data.items():
        if key in merged and value is not None:
            merged[key] = value
    return merged
"""),
                File("app/jobs.py", "python", """\
def run():
    return 1
"""),
            ),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/jobs.py", "python", """\
from app.settings import load_settings


def run():
    return 1


def read_job_config(filename, fallback):
    return load_settings(filename, fallback)
"""),
            caption="It calls the code that exists (same merge base).",
            base=(
                File("app/settings.py", "python", """\
import json


def load_settings(path, defaults):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    merged = dict(defaults)
    for key, value in data.items():
        if key in merged and value is not None:
            merged[key] = value
    return merged
"""),
                File("app/jobs.py", "python", """\
def run():
    return 1
"""),
            ),
        ),
    ),
)

NEAR_COPY_FILE = Rule(
    id="reuse/near-copy-file",
    finding_class=FindingClass.SYSTEMATIC,
    severity=Severity.MAJOR,
    short="New file is a near copy of an existing file",
    full=(
        "A new file's text is mostly covered by one file that existed before (a fork of a module). "
        "Extend or parameterize the original instead of keeping two versions."
    ),
    tags=("maintainability", "duplication"),
    precision="high",
    fires_on=(
        "a new file whose normalized text is ≥ 80 % covered by one file that existed before (a fork), "
        "or a file git reports as a copy"
    ),
    not_on=(
        "two new look-alike files (that is in-branch repetition, above); a copy of a file the same "
        "change shrank by ≥ 5 lines (code split out of it)"
    ),
    severity_note=(
        ", advisory: reported, not blocking unless `[lenses] block_on_duplicates = true` (minor for a "
        "configuration file such as a second `*.config.ts`)"
    ),
    fires=(
        Example(
            file=File("billing/shared_copy.py", "python", """\
import json


def load_settings(path, defaults):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    merged = dict(defaults)
    for key, value in data.items():
        if key in merged and value is not None:
            merged[key] = value
    return merged


def save_settings(path, settings):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=4, sort_keys=False)
    return path
"""),
            caption="A new file that forks it.",
            base=(
                File("lib/shared.py", "python", """\
import json


def load_settings(path, defaults):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    merged = dict(defaults)
    for key, value in data.items():
        if key in merged and value is not None:
            merged[key] = value
    return merged


def save_settings(path, settings):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=2, sort_keys=True)
    return path
"""),
            ),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("billing/settings.py", "python", """\
from lib.shared import load_settings, save_settings

DEFAULTS = {"currency": "EUR", "rounding": 2}


def load_billing_settings(path):
    return load_settings(path, DEFAULTS)


def save_billing_settings(path, settings):
    return save_settings(path, settings)
"""),
            caption="A new file that uses it.",
        ),
    ),
)

RULES = (DUPLICATE_CODE, NEAR_COPY_FILE)


RULE_DUPLICATE = DUPLICATE_CODE.id
RULE_NEAR_COPY = NEAR_COPY_FILE.id
# Why a major duplicate or near-copy file does not block by default: on projects their rules were
# not tuned on, their blocks did not hold (docs/lenses.md, "Duplicate code is advisory").
ADVISORY_REASON = (
    "duplicate code is advisory: on projects its rules were not tuned on, its blocks did not hold "
    "(set [lenses] block_on_duplicates = true to block on it)"
)
ADVISORY_RULES = (RULE_DUPLICATE, RULE_NEAR_COPY)


def could_repeat(request: ReviewRequest) -> bool:
    """Whether any file of the change could hold a finding: git saw it copied, or it adds
    MIN_LINES non-blank lines (every finding needs that many added lines of code)."""
    for change in request.target.files:
        if change.status is ChangeStatus.COPIED:
            return True
        if change.status is not ChangeStatus.DELETED and not change.is_binary:
            if sum(1 for line in change.added_lines().values() if line.strip()) >= MIN_LINES:
                return True
    return False


class DuplicationLens:
    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        if not could_repeat(request):
            return
        from reviewgate.reviewers.builtin.lenses.duplication.rules import mirrored_directories  # see the docstring
        from reviewgate.reviewers.builtin.lenses.duplication.search import copies_in

        found = copies_in(request)
        for path, original in found.forks:
            yield near_copy_finding(path, original)
        files = request.head.list_files() if found.duplicates else []
        families: dict[str, Families] = {}  # by changed file: found once for all its copies
        # By changed file, split once for all its copies (which its Families hold anyway); the
        # other side's file is split for each copy and let go of.
        lines: dict[str, list[str]] = {}
        for candidate in found.duplicates:
            mirrored = mirrored_directories(files, candidate.mine.path, candidate.theirs.path)
            mine_lines = lines.get(candidate.mine.path)
            if mine_lines is None:
                mine_lines = lines[candidate.mine.path] = candidate.query.source.split("\n")
            other_lines = found.sources[candidate.theirs.path].split("\n")
            yield duplicate_finding(candidate, mine_lines, other_lines, mirrored, families)


def duplicate_finding(
    candidate: Candidate,
    mine_lines: list[str],
    other_lines: list[str],
    mirrored: tuple[str, str, int] | None,
    families: dict[str, Families],
) -> Finding:
    """The `reuse/duplicate-code` finding of one pair of places, given the lines of both files:
    `mirrored` is the pair of directories mirroring each other the two files are in, if any
    (rules.py)."""
    from reviewgate.reviewers.builtin.lenses.duplication.demotions import demotion  # imported by the search
    from reviewgate.reviewers.builtin.lenses.duplication.rules import definition_name, evidence

    query, mine, theirs = candidate.query, candidate.mine, candidate.theirs
    name = definition_name(other_lines, theirs.first, theirs.last, language_of(theirs.path))
    what = f"`{name}`" if name else "the code"
    count = mine.last - mine.first + 1
    quoted = evidence(other_lines, theirs)
    repeated = (
        f"Lines {mine.first}-{mine.last} of {mine.path} ({count} lines) repeat {what} at "
        f"{theirs.path}:{theirs.first}-{theirs.last}"
    )
    if candidate.in_branch:
        title = f"Repeats code this change adds at {theirs}"
        body = (
            f"{repeated}, which this change also adds:\n\n{quoted}\n\nRepetition inside the "
            "branch counts; keep one and call it from both places."
        )
    else:
        title = f"Duplicates existing code: use {what} at {theirs}"
        body = (
            f"{repeated} (same tokens, up to names and literals):\n\n{quoted}\n\nA working "
            f"duplicate is still a finding, two places to fix the next bug. Use {what} at {theirs}, "
            "extending it if it needs a parameter."
        )
    minor = demotion(candidate, mine_lines, other_lines, mirrored, families)
    if minor is not None:
        body += "\n\n" + minor.reason
    return lens_finding(
        rule=RULE_DUPLICATE,
        category="reuse",
        finding_class=FindingClass.SYSTEMATIC,
        severity=Severity.MINOR if minor is not None else Severity.MAJOR,
        title=title,
        body=body,
        path=mine.path,
        line=mine.first,
        end_line=mine.last,
        code=query.normalized.lines[mine.first - 1] + theirs.path + (name or ""),
        stable_title="duplicate",
        demoted=BY_DESIGN if minor is not None and minor.by_design else None,
    )


def near_copy_finding(path: str, other: str) -> Finding:
    """The `reuse/near-copy-file` finding of a new file that forks `other`."""
    # A second configuration file (`vitest.compile.config.ts` beside `vitest.config.ts`) is a
    # variant by design: worth a look, not a block.
    configuration = is_configuration_file(path)
    return lens_finding(
        rule=RULE_NEAR_COPY,
        category="reuse",
        finding_class=FindingClass.SYSTEMATIC,
        severity=Severity.MINOR if configuration else Severity.MAJOR,
        title=f"New file is a near copy of {other}",
        body=(
            f"`{path}` repeats most of `{other}`. A fork of a shared module instead of an "
            f"extension is two places to fix the next bug; extend or parameterize `{other}` instead."
            + ("\n\nReported at minor: it is a configuration file." if configuration else "")
        ),
        path=path,
        code=other,
    )


# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (DuplicationLens(),)
