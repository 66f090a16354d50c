"""New functions that restate what the file already computes: an expression a caller computed inline
and now calls the new function for (a regexp memoized out of the one method that built it), or a
sibling's body for many where the sibling does it for one (`RegisterFromAssemblies` beside
`RegisterFromAssembly`). Either is weak evidence of behaviour: the code a test would pin ran
before, in the caller or in the sibling; what is new is its name or its arity. A new function
with a decision, or one whose body is mostly tokens the file did not have, is not one of these."""

from __future__ import annotations

import difflib
import re

from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes

# Only a short straight-line function is read so: a longer one is extracted code that the
# extracted-helper comparison (moved_functions.is_extracted) judges by its lines.
RESTATED_MAX_STATEMENTS = 4


# What the new function's value expression must hold, in tokens, to say where it came from: fewer
# (`x + 1`, `foo(a)`) appear anywhere.
EXPRESSION_MIN_TOKENS = 6


# The stretch of the lost lines the expression's tokens lie in may be longer than the expression by
# at most one token in this many (what the old code had more: a regexp's group that captured
# nothing used): tokens scattered over a rewrite (`max(rows)` here, `[row.size for row in rows]`
# there) are no expression of its.
EXPRESSION_SPREAD = 3


# How alike (difflib's ratio over the normalised bodies, local names unnumbered) a new function
# and its one-element sibling must be.
SIBLING_LIKENESS = 0.8


_TOKEN = re.compile(r"\w+|[^\w\s]")


# Lines that only hold the function's plumbing: a memo's empty table (`@cache ||= {}`), the builder's
# `return this`, a block's end.
_PLUMBING = re.compile(
    r"^(?:[@\w.$]+\s*(?:\|\|=|\?\?=)\s*(?:\{\s*\}|\[\s*\]|Hash\.new|\{\}\.compare_by_identity)"
    r"|(?:return\s+)?(?:this|self)\s*;?|end|[{}()\[\];,\s]*)$"
)


# What leads the value a line computes: a `return`, or the variable, field or memo slot it is
# stored in (`@cache[key] ||= `, `val owner = `, `self.items = `).
_VALUE_LEAD = re.compile(
    r"^(?:return\s+|(?:(?:let|const|var|val)\s+)?[@\w$.:>\-]+(?:\[[^\]]*\])?\s*(?:\|\||\?\?)?=(?![=>~])\s*)"
)


# Names a signature's brackets hold that are no parameter of the body's.
_NOT_PARAMETERS = frozenset({"self", "this", "cls", "mut", "ref", "out", "in", "params", "final", "noinline"})


_PARAMETER = "\x00"


def _tokens(text: str, parameters: frozenset[str]) -> list[str]:
    return [_PARAMETER if token in parameters else token for token in _TOKEN.findall(text)]


def _short_name(shape: FunctionShape) -> str:
    return shape.name.rpartition(".")[2].partition("#")[0]


def _parameters(shape: FunctionShape) -> frozenset[str]:
    """The names in the brackets after the function's name in its signature (types among them:
    a type the body names too then reads as a parameter, which only makes a match less likely)."""
    found = re.search(rf"(?<![\w$]){re.escape(_short_name(shape))}\s*(?:<[^>]*>)?\s*\(([^)]*)\)", shape.text)
    return frozenset() if found is None else frozenset(re.findall(r"[A-Za-z_]\w*", found[1])) - _NOT_PARAMETERS


def _value_lines(shape: FunctionShape) -> list[str]:
    """The new function's body lines less its plumbing, each without its value's lead."""
    lines = [line.strip() for line in shape.text.split("\n")[1:]]
    return [_VALUE_LEAD.sub("", line) for line in lines if line and not _PLUMBING.match(line)]


def _call_of(name: str) -> re.Pattern[str]:
    # A call: its arguments follow, in brackets or (Ruby) after a space.
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?:\s*\(([^()]*)\)?|[ \t]+([\w@:\"'\[][^\n]*))")


def _restated_from_caller(shape: FunctionShape, base: Shapes, head: Shapes) -> str | None:
    """The name of a function of the file that did not call `shape` at the merge base, calls it at
    head, and lost lines holding `shape`'s value expression, its parameters matched with the
    arguments the caller passes: every token of it, in order, within a stretch of the lost lines
    barely longer than it (EXPRESSION_SPREAD). What the old code had more may be dropped; a token
    it did not have (another method called, a value added) is new logic."""
    value = _value_lines(shape)
    expression = _tokens(" ".join(value), _parameters(shape))
    if len(expression) < EXPRESSION_MIN_TOKENS:
        return None
    call = _call_of(_short_name(shape))
    for name, caller in head.items():
        old = base.get(name)
        if old is None or old.text == caller.text or call.search(old.text):
            continue
        arguments = [found for found in call.finditer(caller.text.split("\n", 1)[-1])]
        if not arguments:
            continue
        passed = frozenset(
            word for found in arguments for word in re.findall(r"[A-Za-z_]\w*", found[1] or found[2] or "")
        )
        kept = set(caller.text.split("\n"))
        removed = " ".join(line for line in old.text.split("\n") if line not in kept)
        matcher = difflib.SequenceMatcher(None, expression, _tokens(removed, passed), autojunk=False)
        runs = [block for block in matcher.get_matching_blocks() if block.size]
        if sum(block.size for block in runs) != len(expression):
            continue
        stretch = runs[-1].b + runs[-1].size - runs[0].b
        if stretch <= len(expression) + len(expression) // EXPRESSION_SPREAD:
            return name
    return None


def _words(name: str) -> list[str]:
    return [word.lower() for word in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)]


def _plural_of(many: str, one: str) -> bool:
    return many in (one + "s", one + "es") or (one.endswith("y") and many == one[:-1] + "ies")


def _variant_of(name: str, sibling: str) -> str | None:
    """How `name` varies `sibling`: for many (one word made plural: `register_assemblies` of
    `register_assembly`) or with one word more (`getStateViewModel` of `getViewModel`); None when
    it does neither."""
    new, old = _words(name), _words(sibling)
    if len(new) == len(old):
        differing = [(a, b) for a, b in zip(new, old, strict=True) if a != b]
        return "for many where it does it for one" if len(differing) == 1 and _plural_of(*differing[0]) else None
    if len(new) == len(old) + 1 and any(new[:index] + new[index + 1:] == old for index in range(len(new))):
        return "with one thing more to hand on"
    return None


def _unnumbered(body: str) -> list[str]:
    return re.sub(r"\bv\d+\b", "v", body).split()


def _one_element_sibling(shape: FunctionShape, name: str, base: Shapes, head: Shapes) -> tuple[str, str] | None:
    """The function beside `shape` (same class or file), there at the merge base, of the same size
    and no decision, that `shape`'s name varies (_variant_of) and whose body `shape`'s is
    SIBLING_LIKENESS alike, with how the name varies it."""
    scope = name.rpartition(".")[0]
    own = _short_name(shape)
    for other, sibling in head.items():
        if other == name or other not in base or other.rpartition(".")[0] != scope:
            continue
        if sibling.branches or sibling.statements != shape.statements:
            continue
        how = _variant_of(own, _short_name(sibling))
        if how is None:
            continue
        matcher = difflib.SequenceMatcher(None, _unnumbered(sibling.body), _unnumbered(shape.body), autojunk=False)
        if matcher.ratio() >= SIBLING_LIKENESS:
            return other, how
    return None


def restatement(shape: FunctionShape, name: str, base: Shapes | None, head: Shapes) -> str | None:
    """Why the new function `shape` (named `name` in `head`) restates what the file computed at the
    merge base, as a note for its evidence line; None when it does not or it decides something."""
    if base is None or shape.branches or shape.statements > RESTATED_MAX_STATEMENTS:
        return None
    caller = _restated_from_caller(shape, base, head)
    if caller is not None:
        return f" (its value is what `{caller}` computed inline at the merge base, and now calls it for)"
    found = _one_element_sibling(shape, name, base, head)
    if found is not None:
        return f" (it does what `{found[0]}` beside it does, {found[1]}: the same body, no decision)"
    return None
