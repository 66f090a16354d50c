"""How a file's functions changed between the merge base and head: the evidence of new or altered
behaviour, with moved, extracted, deprecated and restructured code told apart."""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Iterator
from typing import NamedTuple

from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.languages.shapes import (
    FunctionShape,
    Shapes,
)
from reviewgate.reviewers.builtin.moved_functions import MovedCode, head_members

# A new function of this many statements is substantial whether public or not.
SUBSTANTIAL_STATEMENTS = 5


# Branches an existing function must gain for the evidence to be strong.
STRONG_BRANCH_GROWTH = 2


class EvidenceKind(str, enum.Enum):
    NEW_FUNCTION = "new-function"
    MORE_BRANCHES = "more-branches"
    CHANGED_DEFAULT = "changed-default"
    CHANGED_BODY = "changed-body"  # counts for a fix only: it alters behaviour, adds none


class Evidence(NamedTuple):
    """One sign that a change adds or alters behaviour (a new function, more branches), and where."""

    kind: EvidenceKind
    path: str
    line: int
    name: str
    detail: str  # what a person reads: "`connect` is absent at the merge base"
    strong: bool
    # Where the evidence ends: a new function's last line (all of it is untested), or the last
    # line a function with more branches or another body gains (what it changed lies between).
    end_line: int | None = None

    @property
    def adds_behaviour(self) -> bool:
        return self.kind is not EvidenceKind.CHANGED_BODY

    @property
    def span_end(self) -> int | None:
        """The last line of a finding placed on this evidence, None when it is one line."""
        return self.end_line if self.end_line is not None and self.end_line > self.line else None


def _first_added_line(change: FileChange, shape: FunctionShape) -> int:
    added = change.added_lines()
    return next((line for line in range(shape.line, shape.end_line + 1) if line in added), shape.line)


def _last_added_line(change: FileChange, shape: FunctionShape) -> int | None:
    """The function's last added line: the branches it gains lie between its first and this."""
    added = change.added_lines()
    return next((line for line in range(shape.end_line, shape.line - 1, -1) if line in added), None)


def _new_function(change: FileChange, shape: FunctionShape) -> Evidence:
    # A new public function is what a library's users get: strong unless it is a stub or a bare
    # accessor. A private helper is strong only when substantial.
    # A trivial body (a stub, an accessor, a table of rows) is no behaviour however long.
    strong = not shape.trivial and (shape.statements >= SUBSTANTIAL_STATEMENTS or shape.public)
    detail = f"`{shape.name}` is absent at the merge base ({shape.statements} statement(s), {shape.branches} branch(es))"
    if strong and probes_environment(shape):
        strong = False
        detail += " (it asks what the runtime is: a CI matrix tests that, not a unit test)"
    return Evidence(EvidenceKind.NEW_FUNCTION, change.path, shape.line, shape.name, detail, strong, shape.end_line)


def _restatement(shape: FunctionShape, name: str, base: Shapes | None, head: Shapes) -> str | None:
    # Imported when first asked: most runs add no strong new function, and a local run's start
    # loads only the modules it needs.
    from reviewgate.reviewers.builtin.restated_functions import restatement

    return restatement(shape, name, base, head)


def is_decisionless_one_liner(shape: FunctionShape) -> bool:
    """A function written on one line that decides nothing (`export const f = () => Object.create(null)`,
    `def name(self): return self._name`): it names an expression; there is no behaviour of its own
    for a test to pin down."""
    return shape.line == shape.end_line and shape.branches == 0 and shape.statements <= 1


# A function that only asks what the process runs on (`RUBY_ENGINE == "jruby"`, `sys.platform ==
# "win32"`, `Rails::VERSION::MAJOR >= 7`) answers one fixed value in any one test process: the CI
# matrix of versions and platforms exercises it, not a unit test. Each language's ways of reading
# the runtime's identity; a dependency's version is read from its version constant
# (`ActiveRecord::VERSION::MAJOR`, `Rails.gem_version`), never from the application's own data.
_ENVIRONMENT_PROBE = LazyPattern(
    r"""
      \bRUBY_(?:ENGINE|VERSION|PLATFORM|PATCHLEVEL)\b | \bRbConfig::CONFIG\b
    | \b[A-Z]\w*(?:::[A-Z]\w*)*::VERSION\b | \b[A-Z]\w*\.gem_version\b | \bRails\.version\b
    | \bGem::(?:Version|Requirement)\b | \bGem\.loaded_specs\b | \bdefined\?\(\s*:*[A-Z]
    | \bsys\.(?:version_info|version|hexversion|platform|implementation)\b
    | \bplatform\.(?:system|python_implementation|python_version|machine|release)\(\) | \bos\.name\b
    | \bprocess\.(?:versions?|platform|arch)\b
    | \btypeof\s+[A-Za-z_$][\w$.]*\s*[!=]==?\s*["']undefined["']
    | \bruntime\.(?:GOOS|GOARCH|Version\(\))
    | \bcfg!\(
    | \bBuild\.VERSION\.SDK_INT\b | \bSystem\.getProperty\(\s*"(?:java\.(?:version|vendor)|os\.(?:name|arch))"
    | \bRuntimeInformation\.\w+ | \bEnvironment\.(?:OSVersion|Version|Is64BitProcess)\b | \bOperatingSystem\.Is\w+\(\)
    | \bPHP_(?:VERSION(?:_ID)?|MAJOR_VERSION|MINOR_VERSION|OS(?:_FAMILY)?)\b | \bversion_compare\(
    """,
    re.VERBOSE,
)


def probes_environment(shape: FunctionShape) -> bool:
    """One statement that decides nothing of its own and reads what the runtime is. The first
    line is the signature (a function written on one line decides nothing and is no evidence
    at all): a parameter named `platform` is not a probe."""
    if shape.branches or shape.statements > 1:
        return False
    body = shape.text.split("\n", 1)[1] if "\n" in shape.text else ""
    return _ENVIRONMENT_PROBE.search(body) is not None


def _changed_defaults(old: FunctionShape, shape: FunctionShape) -> list[tuple[str, str, str]]:
    before = dict(old.defaults)
    return [
        (parameter, before[parameter], value)
        for parameter, value in shape.defaults
        if parameter in before and before[parameter] != value
    ]


# A guard helper's one decision ends in a raise (Ruby's and Python's `raise`, `throw`, `panic!`).
_RAISES = re.compile(r"\b(?:raise|throw|panic!)")


# A guard helper's statements: its one decision and the raise under it.
GUARD_STATEMENTS = 2


class _Guards:
    """The file's guard helpers at the merge base: functions whose one decision raises (`def
    assert(message); raise LintError, message unless yield; end`). A call of one makes that
    decision for its caller, so calls replaced by the check written out (`raise LintError, msg
    unless cond`) leave the caller's decisions as they were. Read only when a function's branches
    grew."""

    def __init__(self, base: Shapes | None) -> None:
        self.base = base
        self._calls: re.Pattern[str] | None = None

    def calls(self, shape: FunctionShape) -> int:
        """How many times `shape`'s body (its signature line aside) calls one of the guards."""
        if self._calls is None:
            names = sorted({
                name.rsplit(".", 1)[-1].partition("#")[0]
                for name, helper in (self.base or {}).items()
                if helper.branches == 1 and helper.statements <= GUARD_STATEMENTS and _RAISES.search(helper.text)
            })
            # A call, not a definition, an assignment or a member of something else (`obj.assert`).
            self._calls = re.compile(
                rf"(?<![\w.@$:])(?:{'|'.join(map(re.escape, names))})(?![\w?!])(?!\s*(?:=[^=~]|::))" if names else r"(?!)"
            )
        return len(self._calls.findall(shape.text.split("\n", 1)[-1]))


# Operators that decide inside an expression: short-circuit logic and nil-safe navigation. They are
# no branches (a guard hoisted into one condition decides as the checks did), so the reverse, one
# condition split into guard clauses (`return false unless a` for `a && ...`), turns each into a
# branch without a new decision. Tokens of the normalised bodies of tree-sitter's languages; a
# method of that name (`.or(other)`) is none.
_EXPRESSION_DECISIONS = frozenset({"&&", "||", "and", "or", "&.", "?.", "??"})


def expression_decisions(shape: FunctionShape) -> int:
    """How many decisions `shape` makes inside expressions (see _EXPRESSION_DECISIONS)."""
    return sum(
        1 for previous, token in itertools.pairwise(["", *shape.body.split()])
        if token in _EXPRESSION_DECISIONS and previous not in (".", "&.", "?.", "::")
    )


def _restated(old: FunctionShape, shape: FunctionShape, grew: int) -> int:
    """`grew` when the function's expressions lost at least as many decisions as it gained branches
    (the condition written as guard clauses), else 0: growth beyond what was lost is decisions
    added (`a || b ? x : y` made `k ? (v ? x : y) : (f ? x : y)`), and which new branch restates
    which operator cannot be told."""
    if grew <= 0:
        return 0
    return grew if expression_decisions(old) - expression_decisions(shape) >= grew else 0


def compare(
    change: FileChange, base: Shapes | None, head: Shapes, moved: MovedCode, *, changed_bodies: bool = True
) -> list[Evidence]:
    """Evidence for one file: `base` None when the file is new. `changed_bodies` also reports
    functions that do something different without gaining behaviour (what a fix does)."""
    found: list[Evidence] = []
    guards = _Guards(base)
    # Moved and edited functions whose reading as new would be weak: compared with where they came
    # from, they are no stronger evidence than that.
    weak_moves: set[str] = set()
    members: dict[str, set[str]] | None = None  # the head side's method names by class, when asked
    for name, shape in head.items():
        old = None if base is None else base.get(name)
        if old is None:
            if is_decisionless_one_liner(shape) or moved.holds(shape):
                continue
            new = _new_function(change, shape)
            old = moved.origin(shape)
            if old is None:
                members = head_members(head) if members is None else members
                old = moved.renamed(shape, members)
            if old is None and new.strong:
                old = moved.resembled(shape)
            if old is None:
                if new.strong and (note := _restatement(shape, name, base, head)) is not None:
                    new = new._replace(strong=False, detail=new.detail + note)
                found.append(new)
                continue
            if not new.strong:
                weak_moves.add(name)
        if shape.text == old.text:
            continue  # untouched, whatever else moved around it
        grew = shape.branches - old.branches
        # The decisions of guard calls the change replaced, now written out in the function.
        inlined = min(grew, max(0, guards.calls(old) - guards.calls(shape))) if grew > 0 else 0
        grew -= inlined
        # The decisions of removed helpers the function called, now written into it.
        absorbed = min(grew, moved.inlined(old, shape)) if grew > 0 else 0
        grew -= absorbed
        restated = _restated(old, shape, grew)
        grew -= restated
        if grew > 0:
            found.append(Evidence(
                EvidenceKind.MORE_BRANCHES, change.path, _first_added_line(change, shape), name,
                f"branches: {old.branches} → {shape.branches} in `{name}`"
                + (f" ({inlined} of them a guard helper's, its calls written out)" if inlined else "")
                + (f" ({absorbed} of them a removed helper's, written into it)" if absorbed else "")
                + (f" ({restated} of them decisions its conditions made, written as branches)" if restated else ""),
                grew >= STRONG_BRANCH_GROWTH,
                _last_added_line(change, shape),
            ))
        defaults = _changed_defaults(old, shape) if shape.public else []
        if defaults:
            parameter, before, after = defaults[0]
            found.append(Evidence(
                EvidenceKind.CHANGED_DEFAULT, change.path, _first_added_line(change, shape), name,
                f"default of `{parameter}` in `{name}`: `{before}` → `{after}`", False,
            ))
        elif changed_bodies and grew <= 0 and shape.body != old.body:
            found.append(Evidence(
                EvidenceKind.CHANGED_BODY, change.path, _first_added_line(change, shape), name,
                f"`{name}` does something different than at the merge base", False,
                _last_added_line(change, shape),
            ))
    found = [item._replace(strong=False) if item.name in weak_moves else item for item in found]
    return _restructured(_deprecations(found, change, head), base, head)


# A line that says something is deprecated: Python's DeprecationWarning, depd's `deprecate(...)`,
# a `@deprecated` marker, a "... is deprecated" message.
_DEPRECATION = re.compile(r"deprecat", re.IGNORECASE)


# A line that opens a branch, in any language the lens reads.
_BRANCH_HEADER = re.compile(r"^\s*(?:\}\s*)?(?:if|elif|else\s+if|else|switch|case|catch|except|for|while)\b")


# How far below its header a branch's deprecation warning may be (a multi-line `warnings.warn(`).
DEPRECATION_REACH = 8


# A new function this small whose code warns of a deprecation is a shim (an alias that warns, a
# module `__getattr__` for a removed attribute), not behaviour.
DEPRECATION_SHIM_STATEMENTS = 8


def _only_deprecates(change: FileChange, shape: FunctionShape, *, opens_branches: bool) -> bool:
    """Whether the lines the change adds to the function warn of a deprecation and every branch
    among them leads to such a warning within DEPRECATION_REACH lines; with `opens_branches`,
    also whether they open a branch at all."""
    added = change.added_lines()
    lines = [(number, added[number]) for number in range(shape.line, shape.end_line + 1) if number in added]
    warnings = [number for number, text in lines if _DEPRECATION.search(text)]
    headers = [number for number, text in lines if _BRANCH_HEADER.match(text)]
    return bool(warnings) and (bool(headers) or not opens_branches) and all(
        any(header < warning <= header + DEPRECATION_REACH for warning in warnings) for header in headers
    )


def _deprecations(found: list[Evidence], change: FileChange, head: Shapes) -> list[Evidence]:
    """Branches or a small function added only to warn that something is deprecated announce a
    removal; they add no behaviour a test must pin down: weak evidence (minor)."""
    # Ruled out at once for the file when none of the lines it adds mentions a deprecation (most
    # files): each function's own lines are searched only otherwise. `lower` and `in` find what
    # _DEPRECATION finds (no other character matches its letters ignoring case) several times faster.
    if not any(item.strong for item in found) or "deprecat" not in "\n".join(change.added_lines().values()).lower():
        return found
    kept = []
    for item in found:
        shape = head.get(item.name)
        if item.strong and shape is not None and _is_deprecation(item, change, shape):
            item = item._replace(strong=False, detail=item.detail + " (its new code only warns of a deprecation)")
        kept.append(item)
    return kept


def _is_deprecation(item: Evidence, change: FileChange, shape: FunctionShape) -> bool:
    if item.kind is EvidenceKind.NEW_FUNCTION:
        return shape.statements <= DEPRECATION_SHIM_STATEMENTS and _only_deprecates(change, shape, opens_branches=False)
    if item.kind is EvidenceKind.MORE_BRANCHES:
        # The growth must come from branches that warn, not from conditions grown beside them.
        return _only_deprecates(change, shape, opens_branches=True)
    return False


# How many branches a refactor may add when it takes at least RESTATED_MIN_LOST out of the file's
# existing functions: a moved decision restated as guard clauses.
RESTATED_BRANCHES = 1


RESTATED_MIN_LOST = 3


def _restructured(found: list[Evidence], base: Shapes | None, head: Shapes) -> list[Evidence]:
    """New functions that hold what the file's other functions lost are the same code rearranged
    (a refactor that splits a long function into helpers), not new code: when the file holds no
    more branches than at the merge base (one more when other functions lost at least
    RESTATED_MIN_LOST: decisions restated as guard clauses; as many more as the decisions its changed
functions' expressions lost, `&&`, `&.`, restated as branches), and either the new functions carry decisions the file
    had already, or other functions of the file lost statements and the file's statements grew by
    no more than one (a call) per new function, the evidence is weak (minor)."""
    if base is None or not any(item.strong for item in found):
        return found
    before, after = sum(shape.branches for shape in base.values()), sum(shape.branches for shape in head.values())
    lost_branches = sum(max(0, shape.branches - head[name].branches) if name in head else shape.branches
                        for name, shape in base.items())
    # Decisions moved into a helper are often restated as guard clauses, one more than the nested
    # condition they replace (`if ty is not None: return ty` for `if ty is None and default ...`).
    allowed = before + (RESTATED_BRANCHES if lost_branches >= RESTATED_MIN_LOST else 0)
    if after > allowed and after - _file_restated(base, head) > allowed:
        return found
    # Decisions can be rearranged; a new function without branches (a public one-liner) is new
    # behaviour unless the statements it holds left another function of the file.
    rearranged = any(item.strong and item.name in head and head[item.name].branches for item in found)
    new = sum(1 for name in head if name not in base)  # moved ones too: each is called from somewhere
    written = sum(shape.statements for shape in head.values()) - sum(shape.statements for shape in base.values())
    lost = sum(max(0, shape.statements - head[name].statements if name in head else shape.statements)
               for name, shape in base.items())
    if not rearranged and not (new and lost and written <= new):
        return found
    note = f" (the file's branches overall: {before} → {after}, statements {written:+d}: rearranged rather than added)"
    return [item._replace(strong=False, detail=item.detail + note) if item.strong else item for item in found]


def _file_restated(base: Shapes, head: Shapes) -> int:
    """How many expression decisions the file's changed functions lost overall: as many new branches
    may restate them (`type&.start_with?` become `return yield if type.nil?`)."""
    def changed(shapes: Shapes, other: Shapes) -> Iterator[FunctionShape]:
        return (shape for name, shape in shapes.items() if name not in other or other[name].text != shape.text)

    lost = sum(expression_decisions(shape) for shape in changed(base, head))
    # Normalising every body a change adds is costly (a whole generated module): stop once the
    # head side has made up what the base side lost; the answer is 0 from there.
    for shape in changed(head, base) if lost else ():
        lost -= expression_decisions(shape)
        if lost <= 0:
            return 0
    return max(0, lost)
