"""A stored chunk answer carried onto a head where the chunk's hunks stand at other lines.

The chunk cache keys a chunk on its diff without line numbers (chunking.Chunk.key_text), so a
push that only shifts a file's hunks (a change above them) reuses their answer. Its findings
cite the lines the answer was given; each hunk's text is the same, so a line inside a hunk moves
by that hunk's shift. A line outside every hunk of the chunk (context the model cited, an
off-by-a-few) has no known place on the new head: the finding is kept at file level, never
left on whatever line now has its old number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewgate.reviewers.model.placement import InvalidPath, clean_path

Spans = Mapping[str, tuple[tuple[int, int], ...]]  # path -> (first, last) new-file line of each hunk


@dataclass(frozen=True)
class Rebased:
    findings: tuple[dict[str, Any], ...]
    unplaced: int  # findings whose line could not be carried over: now at file level


class _FileShift:
    """Old line -> new line for one file of the chunk, through its hunks."""

    def __init__(self, old: tuple[tuple[int, int], ...], new: tuple[tuple[int, int], ...]) -> None:
        self.pairs = list(zip(old, new, strict=False)) if len(old) == len(new) else []
        self.unmoved = bool(self.pairs) and all(before[0] == after[0] for before, after in self.pairs)

    def hunk_of(self, line: int) -> int | None:
        for index, ((first, last), _) in enumerate(self.pairs):
            if first <= line <= last:
                return index
        return None

    def moved(self, line: int, hunk: int) -> int:
        (old_first, _), (new_first, _) = self.pairs[hunk]
        return line + new_first - old_first


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rebase_one(item: dict[str, Any], shift: _FileShift) -> tuple[dict[str, Any], bool]:
    """The finding on the new lines, and whether its line had to be given up."""
    line = _integer(item.get("line"))
    if shift.unmoved or line is None:
        return item, False
    hunk = shift.hunk_of(line)
    if hunk is None:
        return {**item, "line": None, "end_line": None, "suggestion": None}, True
    end_line = _integer(item.get("end_line"))
    moved: dict[str, Any] = {**item, "line": shift.moved(line, hunk),
                             "end_line": shift.moved(end_line, hunk) if end_line is not None
                             and shift.hunk_of(end_line) == hunk else None}
    suggestion = item.get("suggestion")
    if isinstance(suggestion, dict):
        start, end = _integer(suggestion.get("start_line")), _integer(suggestion.get("end_line"))
        same = start is not None and end is not None and shift.hunk_of(start) == hunk == shift.hunk_of(end)
        moved["suggestion"] = ({**suggestion, "start_line": shift.moved(start, hunk), "end_line": shift.moved(end, hunk)}
                               if same and start is not None and end is not None else None)
    return moved, False


def rebase_findings(findings: tuple[dict[str, Any], ...], answered: Spans, current: Spans) -> Rebased:
    """`findings` (as the contract parsed them) given for hunks at `answered`, on `current`."""
    if dict(answered) == dict(current):
        return Rebased(findings, 0)
    shifts = {path: _FileShift(tuple(answered.get(path, ())), spans) for path, spans in current.items()}
    out: list[dict[str, Any]] = []
    unplaced = 0
    for item in findings:
        try:
            path = clean_path(item.get("path"), set(current))
        except InvalidPath:
            path = None  # placement drops it and says why
        shift = shifts.get(path) if path is not None else None
        if shift is None:  # file level, or another file: no hunk of this chunk to move by
            out.append(item)
            continue
        moved, given_up = _rebase_one(item, shift)
        out.append(moved)
        unplaced += given_up
    return Rebased(tuple(out), unplaced)
