"""Why a `reuse/duplicate-code` finding reports at minor, which does not block: weak evidence, a
repetition kept on purpose (by design), or one too small to send work back for (sizes.py)."""

from __future__ import annotations

from typing import NamedTuple

from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.lenses.duplication.duplicates import Candidate
from reviewgate.reviewers.builtin.lenses.duplication.rules import (
    FAMILY_MIN_MEMBERS,
    Families,
    module_system_twins,
    sibling_classes,
    sibling_implementations,
    starts_a_definition,
    weak_evidence,
)
from reviewgate.reviewers.builtin.lenses.duplication.sizes import EXISTING_MAJOR_LINES, IN_BRANCH_MAJOR_LINES


class Demotion(NamedTuple):
    """Why a duplicate reports at minor: the paragraph its body ends with, and whether the
    repetition is kept on purpose (not for its size or its evidence)."""

    reason: str
    by_design: bool = False


def demotion(
    candidate: Candidate,
    mine_lines: list[str],
    other_lines: list[str],
    mirrored: tuple[str, str, int] | None,
    families: dict[str, Families],
) -> Demotion | None:
    """Why the duplicate reports at minor, the first reason that holds; None when it is major.
    `families` is filled by changed file: found once for all its copies."""
    query, mine, theirs = candidate.query, candidate.mine, candidate.theirs
    if weak_evidence(query.normalized, mine):
        return Demotion("Reported at minor: the repeated run is short or mostly boilerplate.")
    if module_system_twins(mine.path, theirs.path):
        return Demotion(f"Reported at minor: `{mine.path}` and `{theirs.path}` are one module for two module "
                        "systems (ESM and CommonJS), which repeat each other by design.", by_design=True)
    # The file's families only past the reasons that need none: a file whose copies are all weak
    # evidence is not read for them (a pass over each changed file, 229 at +304k lines appended).
    language = language_of(mine.path)
    file_families = families.get(mine.path)
    if file_families is None:
        file_families = families[mine.path] = Families(mine_lines, query.normalized.lines, query.added, language)
    # Sizes are judged in lines of code the change adds: a docstring, a comment block or an
    # `@overload` stub repeats no logic, and an unchanged neighbour in the window is not new.
    code_lines = file_families.sized_lines(mine.first, mine.last)
    family = file_families.family_of(mine.first, mine.last)
    siblings = sibling_implementations(mine_lines, mine.first, other_lines, theirs.first)
    classes = sibling_classes(mine_lines, mine.first, other_lines, theirs.first)
    if family:
        shown = ", ".join(f"`{name}`" for name in family[:4]) + (" …" if len(family) > 4 else "")
        return Demotion(f"Reported at minor: the repeated lines are short members ({shown}) of a family of "
                        f"{FAMILY_MIN_MEMBERS} or more of one shape in this file, which the change extends: parallel "
                        "boilerplate (a property and its setter per field, one wrapper per method) that repeats by "
                        "design.", by_design=True)
    if mirrored:
        mine_directory, theirs_directory, shared = mirrored
        return Demotion(f"Reported at minor: `{mine_directory}/` and `{theirs_directory}/` mirror each other "
                        f"({shared} other files of the same names): variants of one module kept side by side, "
                        "which repeat each other by design.", by_design=True)
    if siblings:
        return Demotion(f"Reported at minor: both runs are in subclasses of `{siblings}`, two "
                        "implementations of one interface, which look alike by design.", by_design=True)
    if classes and code_lines < EXISTING_MAJOR_LINES:
        return Demotion(f"Reported at minor: both runs open a class (`{classes[0]}`, `{classes[1]}`) with "
                        f"the same bases and under {EXISTING_MAJOR_LINES} lines of code alike: two implementations of "
                        "one protocol, whose headers look alike by design.", by_design=True)
    if not candidate.in_branch and code_lines < EXISTING_MAJOR_LINES and not (
        starts_a_definition(mine_lines, mine.first, language)
        and starts_a_definition(other_lines, theirs.first, language_of(theirs.path))
    ):
        return Demotion(f"Reported at minor: a fragment under {EXISTING_MAJOR_LINES} lines of code; a copied "
                        "definition or a longer copy of existing code blocks.")
    if candidate.in_branch and code_lines < IN_BRANCH_MAJOR_LINES:
        # Both copies are in front of the author and the reviewer at once (parallel variants
        # such as parse/safeParse, one switch arm beside another): worth a look, not a block.
        return Demotion(f"Reported at minor: both copies are new in this change and the run is under "
                        f"{IN_BRANCH_MAJOR_LINES} lines of code.")
    return None
