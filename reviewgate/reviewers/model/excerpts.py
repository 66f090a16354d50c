"""The code a finding cites, for the second look: at the head with the function around it, the
callers of that function, and the same code at the merge base.

Python is read with `ast` (the innermost function or class holding the line); other languages,
and Python that does not parse, get a window of lines around it. Every excerpt is bounded and
redacted line by line, the way the review's diff is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import FileChange
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.model.redaction import Redaction, redact_line
from reviewgate.reviewers.model.symbols import UseReader, enclosing_symbol
from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.text import UNPARSABLE, printable

MAX_CALLERS = 12  # call sites shown beside the cited code; the rest are named
CALLER_LINES = 2  # lines either side of a call site
WINDOW_LINES = 20  # either side of the line, where no function is known
MAX_EXCERPT_LINES = 160  # a longer function is cut to this many lines around the finding
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Excerpt:
    text: str
    redactions: tuple[Redaction, ...] = ()


def _is_python(path: str) -> bool:
    return PurePosixPath(path).suffix in (".py", ".pyi")


def _python_scope(source: str, line: int) -> tuple[int, int, str] | None:
    """(first, last, qualified name) of the innermost function or class holding `line`."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return None
    found: tuple[int, int, str] | None = None

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal found
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                first = min([child.lineno, *(item.lineno for item in child.decorator_list)])
                last = child.end_lineno or child.lineno
                name = f"{prefix}{child.name}"
                if first <= line <= last:
                    found = (first, last, name)
                    visit(child, name + ".")
                    return
            else:
                visit(child, prefix)  # a def inside an `if` or `try` block

    visit(tree, "")
    return found


def _python_named(source: str, qualified: str) -> tuple[int, int] | None:
    """The lines of the function or class with this qualified name, when the source has one."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return None
    body: list[ast.stmt] = tree.body
    span: tuple[int, int] | None = None
    for part in qualified.split("."):
        match = next((node for node in body if isinstance(node, _SCOPES) and node.name == part), None)
        if match is None:
            return None
        first = min([match.lineno, *(item.lineno for item in match.decorator_list)])
        span, body = (first, match.end_lineno or match.lineno), match.body
    return span


def _bounded(first: int, last: int, around: int, total: int) -> tuple[int, int]:
    first, last = max(1, first), min(total, last)
    if last - first + 1 <= MAX_EXCERPT_LINES:
        return first, last
    start = max(first, around - MAX_EXCERPT_LINES // 2)
    return start, min(last, start + MAX_EXCERPT_LINES - 1)


def _numbered(path: str, lines: list[str], first: int, last: int, heading: str) -> Excerpt:
    out = [heading]
    redactions: list[Redaction] = []
    for number in range(first, last + 1):
        text, kinds = redact_line(printable(lines[number - 1]))
        redactions += [Redaction(path, number, kind) for kind in kinds]
        out.append(f"{number:>6}| {text}")
    return Excerpt("\n".join(out), tuple(redactions))


def base_line(change: FileChange, head_line: int) -> int:
    """The merge-base line that head line `head_line` stood at (or the hunk's start when it is new)."""
    shift = 0
    for hunk in change.hunks:
        if head_line < hunk.new_start:
            break
        if head_line <= hunk.new_end:
            return max(1, hunk.old_start)
        shift = (hunk.old_start + hunk.old_count) - (hunk.new_start + hunk.new_count)
    return max(1, head_line + shift)


def _span(source: str, path: str, line: int) -> tuple[int, int, str, str | None]:
    """(first, last, heading, qualified name) around `line`: the function, or a window."""
    total = source.count("\n") + 1
    scope = _python_scope(source, line) if _is_python(path) else None
    if scope is not None:
        first, last = _bounded(scope[0], scope[1], line, total)
        return first, last, f"=== {printable(path)} lines {first}-{last} ({scope[2]}) ===", scope[2]
    first, last = max(1, line - WINDOW_LINES), min(total, line + WINDOW_LINES)
    return first, last, f"=== {printable(path)} lines {first}-{last} ===", None


def head_excerpt(head: TreeReader, path: str, line: int | None, end_line: int | None) -> tuple[Excerpt, str | None]:
    """The cited code at the head and the qualified name of the function around it (Python)."""
    source = head.read_text(path)
    if source is None:
        return Excerpt(f"(the head has no file {printable(path)})"), None
    lines = source.split("\n")
    if line is None or line > len(lines):
        first, last = 1, min(len(lines), MAX_EXCERPT_LINES)
        return _numbered(path, lines, first, last, f"=== {printable(path)} lines {first}-{last} ==="), None
    first, last, heading, name = _span(source, path, line)
    if end_line is not None and end_line > last:
        last = min(len(lines), end_line, first + MAX_EXCERPT_LINES - 1)
    return _numbered(path, lines, first, last, heading), name


def base_excerpt(
    base: TreeReader, change: FileChange | None, path: str, line: int | None, scope_name: str | None
) -> Excerpt:
    """The same code at the merge base: the function of the same name (Python), else a window
    around the line the head line stood at; a file new in the change says so."""
    old_path = (change.old_path if change is not None else None) or path
    source = base.read_text(old_path)
    if source is None:
        return Excerpt(f"(the file {printable(path)} does not exist at the merge base: the change adds it)")
    lines = source.split("\n")
    if scope_name is not None and _is_python(old_path):
        span = _python_named(source, scope_name)
        if span is not None:
            first, last = _bounded(span[0], span[1], span[0], len(lines))
            return _numbered(old_path, lines, first, last,
                             f"=== {printable(old_path)} lines {first}-{last} ({scope_name}) ===")
        return Excerpt(f"(the merge base of {printable(old_path)} has no {scope_name}: the change adds it)")
    if line is None:
        first, last = 1, min(len(lines), MAX_EXCERPT_LINES)
    else:
        middle = base_line(change, line) if change is not None else line
        first, last = max(1, middle - WINDOW_LINES), min(len(lines), middle + WINDOW_LINES)
    return _numbered(old_path, lines, first, last, f"=== {printable(old_path)} lines {first}-{last} ===")


def callers_excerpt(request: ReviewRequest, path: str, line: int | None) -> Excerpt:
    """The call sites at the head of the function around `path`:`line` (the lenses' parse finds
    it, symbols.py the uses, imports left out): a few lines around each of the first
    MAX_CALLERS, the rest named; never a withheld file."""
    source = request.head.read_text(path)
    symbol = enclosing_symbol(source, path, line) if source is not None and line is not None else None
    if symbol is None:
        return Excerpt("(no function around the cited line: no callers looked up)")
    branch_paths = {change.path for change in request.target.files}
    uses = UseReader(request.head)
    sites = [site for site in uses.sites(request, symbol)
             if not site.defines(symbol) and not site.is_document and withheld_reason(site.path, branch_paths) is None]
    if not sites:
        return Excerpt(f"(no call site of {printable(symbol)} in the head tree)")
    parts: list[str] = []
    redactions: list[Redaction] = []
    for site in sites[:MAX_CALLERS]:
        text = request.head.read_text(site.path)
        lines = text.split("\n") if text is not None else []
        if site.line > len(lines):
            continue
        first, last = uses.window(site, CALLER_LINES, CALLER_LINES, len(lines))
        excerpt = _numbered(site.path, lines, first, last,
                            f"=== {printable(site.path)} lines {first}-{last} (a call of {printable(symbol)}) ===")
        parts.append(excerpt.text)
        redactions += excerpt.redactions
    if len(sites) > MAX_CALLERS:
        named = ", ".join(f"{printable(site.path)}:{site.line}" for site in sites[MAX_CALLERS:MAX_CALLERS * 3])
        parts.append(f"not shown: {len(sites) - MAX_CALLERS} more call site(s) of {printable(symbol)}: {named}")
    return Excerpt("\n".join(parts), tuple(redactions))
