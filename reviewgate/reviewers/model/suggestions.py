"""A model's suggested change, checked before anyone is offered it in one click.

A suggestion replaces head lines `start_line`..`end_line` of the finding's file. It is shown only
when those lines are lines the change added or modified, near the finding, when its `original`
text is still what the head holds there, and, for Python, when the file still parses with it
applied. One that fails is dropped, and the finding says why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from reviewgate.findings import Finding
from reviewgate.freeze.freeze import FrozenTarget
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.model.placement import NEARBY_LINES

MAX_SUGGESTION_LINES = 50  # a one-click change is a few lines; a rewrite belongs in the finding's text
_ALLOWED_CONTROLS = frozenset("\t\n")


class Unusable(Exception):
    """Why a suggestion is not shown."""


def _lines_of(text: str) -> list[str]:
    """A block of lines as the model wrote it: one trailing newline is not an extra empty line."""
    text = text[:-1] if text.endswith("\n") else text
    return [] if text == "" else text.split("\n")


def _same_text(first: list[str], second: list[str]) -> bool:
    return [line.rstrip() for line in first] == [line.rstrip() for line in second]


def _parses(lines: list[str]) -> SyntaxError | None:
    try:
        ast.parse("\n".join(lines))
    except SyntaxError as error:
        return error
    except ValueError as error:  # a NUL byte
        return SyntaxError(str(error))
    except (RecursionError, MemoryError) as error:  # nested deeper than CPython parses
        return SyntaxError(f"nested too deeply to parse ({type(error).__name__})")
    return None


def checked_suggestion(
    finding: Finding, raw: Mapping[str, Any], target: FrozenTarget, head: TreeReader
) -> dict[str, Any]:
    """The suggestion as it will be shown; Unusable with the reason otherwise."""
    if "problem" in raw:  # the contract check already found its shape wrong
        raise Unusable(str(raw["problem"]))
    start, end = raw.get("start_line"), raw.get("end_line")
    original, replacement = raw.get("original"), raw.get("replacement")
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (start, end)):
        raise Unusable("its lines are not line numbers")
    if not isinstance(original, str) or not isinstance(replacement, str):
        raise Unusable("its original or replacement text is missing")
    assert isinstance(start, int) and isinstance(end, int)
    if finding.path is None:
        raise Unusable("the finding names no file")
    change = target.file(finding.path)
    source = head.read_text(finding.path) if change is not None else None
    if change is None or source is None:
        raise Unusable(f"{finding.path} is not a file of the change")
    if not 1 <= start <= end or end - start + 1 > MAX_SUGGESTION_LINES:
        raise Unusable(f"lines {start}-{end} are not a range of at most {MAX_SUGGESTION_LINES} lines")
    changed = change.changed_line_numbers()
    if any(number not in changed for number in range(start, end + 1)):
        raise Unusable(f"lines {start}-{end} are not all lines this change adds or modifies")
    if finding.line is not None and (
        end < finding.line - NEARBY_LINES or start > (finding.end_line or finding.line) + NEARBY_LINES
    ):
        raise Unusable(f"lines {start}-{end} are not the lines the finding is about ({finding.location})")
    lines = source.split("\n")
    if not _same_text(lines[start - 1 : end], _lines_of(original)):
        raise Unusable(f"its original text no longer matches lines {start}-{end} of the head")
    replacement_lines = _lines_of(replacement)
    if len(replacement_lines) > MAX_SUGGESTION_LINES:
        raise Unusable(f"its replacement is longer than {MAX_SUGGESTION_LINES} lines")
    if any(ord(character) < 32 and character not in _ALLOWED_CONTROLS or character == "\x7f"
           for character in replacement):
        raise Unusable("its replacement holds control characters")
    if _same_text(replacement_lines, lines[start - 1 : end]):
        raise Unusable("it changes nothing")
    if PurePosixPath(finding.path).suffix in (".py", ".pyi") and _parses(lines) is None:
        problem = _parses([*lines[: start - 1], *replacement_lines, *lines[end:]])
        if problem is not None:
            raise Unusable(f"{finding.path} would no longer parse with it applied "
                           f"(line {problem.lineno}: {problem.msg})")
    return {"start_line": start, "end_line": end, "replacement": "\n".join(replacement_lines)}


def check_suggestions(findings: Iterable[Finding], target: FrozenTarget, head: TreeReader) -> list[Finding]:
    """Every finding, with its suggestion checked: kept in the shown form, or dropped with a note."""
    result: list[Finding] = []
    for finding in findings:
        raw = finding.extra.get("suggestion")
        if raw is None:
            result.append(finding)
            continue
        extra = dict(finding.extra)
        try:
            if not isinstance(raw, Mapping):
                raise Unusable("it is not an object")
            extra["suggestion"] = checked_suggestion(finding, raw, target, head)
            result.append(finding.with_changes(extra=extra))
        except Unusable as problem:
            del extra["suggestion"]
            extra["suggestion_dropped"] = str(problem)
            body = f"{finding.body}\n\n(A suggested change was dropped: {problem}.)"
            result.append(finding.with_changes(body=body, extra=extra))
    return result
