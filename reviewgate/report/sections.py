"""Markdown in sections that are complete on their own, and a size budget that leaves out whole
sections, or whole items of one, from the least important end: a forge's size limit never cuts
a table row, a list entry or a `<details>` block in half, and a line says what was left out.

Every Markdown sink (summary.md, the step summary, the check run's summary, the PR comment or
MR note) is made of the same sections in the same order, most important first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

# Room kept for the line that says what was left out: it names each section left out, a few
# words each, and where to read the rest.
LEFT_OUT_ROOM = 2048


class Section:
    """`head`, then `items`, then `tail`, each a list of lines. A budget may keep the first items
    and leave out the rest (`noun` names one item in the left-out line: "blocking finding"),
    or leave the section out whole (`name`: "the reviewers table"). A `kept` section (the verdict,
    the help) is never left out. `short_items`, when given, are the same items shorter (a finding
    without its body): taken, all of them, when the items do not fit but they do. (A plain class:
    a dataclass costs every start about 0.4 ms compiling its generated methods, and nothing
    compares these.)"""

    def __init__(self, name: str, head: list[str] | None = None, items: list[str] | None = None,
                 tail: list[str] | None = None, noun: str = "", kept: bool = False,
                 short_items: list[str] | None = None) -> None:
        self.name = name
        self.head: list[str] = [] if head is None else head
        self.items: list[str] = [] if items is None else items
        self.tail: list[str] = [] if tail is None else tail
        self.noun = noun
        self.kept = kept
        self.short_items = short_items

    def lines(self, items: int | None = None) -> list[str]:
        return [*self.head, *self.items[:items], *self.tail]

    def shortened(self) -> Section | None:
        if self.short_items is None:
            return None
        return Section(self.name, self.head, self.short_items, self.tail, self.noun)


def _size(lines: Sequence[str]) -> int:
    """UTF-8 bytes of the lines joined by line breaks, with the break after the last one: a
    forge's limit counts characters, never fewer than bytes."""
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class Budget(NamedTuple):
    """A forge's size limit and what to say when it was reached: `left_out` gets the list of
    what was left out ("80 of 118 blocking findings", "the reviewers table") and returns the
    Markdown line(s) saying so and where the rest is."""

    limit_bytes: int
    left_out: Callable[[list[str]], list[str]]


def render_sections(sections: Sequence[Section], budget: Budget | None = None) -> str:
    """The sections' Markdown; within the budget, if one is given, by leaving out items and
    sections from the end. The first section that does not fit whole keeps the items that fit
    and every later one (kept ones aside) is left out: what is shown is a prefix in reading order,
    never a selection with holes."""
    whole = [line for section in sections for line in section.lines()]
    # An empty section (no accepted findings, say) is nothing to leave out.
    if budget is None or _size(whole) <= budget.limit_bytes:
        return "\n".join(whole)
    room = budget.limit_bytes - LEFT_OUT_ROOM - sum(_size(section.lines()) for section in sections if section.kept)
    shown: list[list[str]] = []
    left_out: list[str] = []
    note_at: int | None = None  # where in `shown` the left-out line goes: after the first section cut
    stopped = False  # a section was cut short or left out: every later one is left out too
    for section in sections:
        if not section.lines():
            continue
        if section.kept:
            shown.append(section.lines())
            continue
        if stopped:
            left_out.append(_what(section))
            continue
        size = _size(section.lines())
        if size <= room:
            shown.append(section.lines())
            room -= size
            continue
        shorter = section.shortened()
        if shorter is not None and _size(shorter.lines()) <= room:
            shown.append(shorter.lines())
            room -= _size(shorter.lines())
            left_out.append(f"the details of {_plural(len(section.items), section.noun)}")
        else:
            stopped = True
            count = _items_that_fit(shorter or section, room)
            if count:
                shown.append((shorter or section).lines(count))
                left_out.append(f"{len(section.items) - count} of {_plural(len(section.items), section.noun)}")
            else:
                left_out.append(_what(section))
        note_at = len(shown) if note_at is None else note_at
    shown.insert(len(shown) if note_at is None else note_at, budget.left_out(left_out))
    return "\n".join(line for lines in shown for line in lines)


def _what(section: Section) -> str:
    """A section left out whole, as the left-out line names it: "2 minor findings", "the reviewers table"."""
    return _plural(len(section.items), section.noun) if section.items and section.noun else section.name


def _items_that_fit(section: Section, room: int) -> int:
    """How many of the section's first items fit in `room` bytes with its head and tail; 0 when
    not even one does (the section is then left out whole)."""
    used = _size([*section.head, *section.tail])
    count = 0
    for item in section.items:
        used += _size([item])
        if used > room:
            break
        count += 1
    return count
