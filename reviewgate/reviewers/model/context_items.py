"""The pieces of context a model reviewer is shown beside a chunk's diff (excerpts, documents,
directory listings, the call sites left out) and how a request's pieces merge into one text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewgate.reviewers.model.redaction import Redaction
from reviewgate.reviewers.model.rendering import numbered_line
from reviewgate.text import printable

# Why a directory's listing is shown: merged_context knows a listing by it.
NEIGHBOURS = "the names of the files beside the changed ones"
NOT_SHOWN = "not shown"  # the path of the item naming the sites left out
_NAMED_LINES = re.compile(r"(?<=: )[0-9, ]+$")  # the line numbers of a `not shown` entry's `  path: 3, 9`
# With the tools: `12 call site(s) of parse in: app/a.py (3), …`; without the count and files.
_NAMED_FILES = re.compile(r"^\d+ (call site\(s\) of .+?) in: .*$")
# An entry's first line, with the tools or without (`12 call site(s) of parse:`): the symbol.
_ENTRY_SYMBOL = re.compile(r"^\d+ call site\(s\) of (.+?)(?: in: .*|:)$")
LISTING_MORE = "… and "  # the start of a listing's last line when it names only some of the names


@dataclass(frozen=True)
class ContextItem:
    path: str
    why: str
    lines: tuple[str, ...]
    first_line: int | None = None  # the lines are numbered from here; None: a document, unnumbered

    def rendered_lines(self) -> list[str]:
        heading = f"=== CONTEXT {printable(self.path)} ({self.why}) ==="
        if self.first_line is None:
            return [heading, *self.lines]
        return [heading, *(numbered_line(self.first_line + index, text) for index, text in enumerate(self.lines))]

    def render(self) -> str:
        return "\n".join(self.rendered_lines())

    def key_text(self) -> str:
        """What the answer depends on: the path, why it is shown and its text, not where it stands
        (nor where the sites a `not shown` entry names stand: with the tools on it names most of
        them, and a push that shifts a caller's lines would make every chunk citing it miss).
        With the tools, the entry's counts and files are left out too: they only point at what
        `callers` returns, and an answer made with `callers`' output is keyed on that output
        (engine.py); a push that changes a caller elsewhere (its site joins the diff, which
        reviews it) would otherwise make every chunk naming the symbol miss."""
        if self.path != NOT_SHOWN:
            return "\n".join((self.path, self.why, *self.lines))
        lines = (_NAMED_FILES.sub(r"\1", _NAMED_LINES.sub("", line)) for line in self.lines)
        return "\n".join((self.path, self.why, *lines))


@dataclass(frozen=True)
class CollectedContext:
    items: tuple[ContextItem, ...]
    redactions: tuple[Redaction, ...]

    def render(self) -> str:
        return "\n\n".join(item.render() for item in self.items)

    def key_texts(self) -> list[str]:
        return [item.key_text() for item in self.items]


def listing_label(directory: str) -> str:
    """The path a directory's listing is shown under: `.` for the top, else `dir/`."""
    return "." if directory == "." else directory + "/"


def _outside(item: ContextItem, spans: tuple[tuple[int, int], ...]) -> Iterator[ContextItem]:
    """The item's runs of lines that no span holds."""
    if item.first_line is None or not spans:
        yield item
        return
    run: list[int] = []
    for index in [*range(len(item.lines)), len(item.lines)]:  # the last index ends the last run
        number = item.first_line + index
        if index < len(item.lines) and not any(first <= number <= last for first, last in spans):
            run.append(index)
            continue
        if run and any(item.lines[index].strip() for index in run):  # blank lines alone tell nothing
            yield ContextItem(item.path, item.why, item.lines[run[0]:run[-1] + 1], item.first_line + run[0])
        run = []


def merged_context(items: Iterable[ContextItem], diff_spans: Mapping[str, tuple[tuple[int, int], ...]]) -> str:
    """The context of chunks asked in one request: each excerpt once, without the lines the
    request's own diff shows (another chunk's excerpt may quote a changed line of a file whose
    block is in the same request: sent twice, it would read as a copy of itself)."""
    items = _merged_not_shown(_merged_listings(list(items), diff_spans))
    kept = (part for item in items for part in _outside(item, diff_spans.get(item.path, ())))
    return _render_by_file(list({part.render(): part for part in kept}.values()))


def _render_by_file(parts: list[ContextItem]) -> str:
    """The parts as sent: the numbered excerpts of one file under one heading, where its first
    stood, in line order, each line once, so the path is said once. A later one is led by `…`
    (lines left out) and its reason when that differs, or by nothing when it goes straight on
    from the one before with the same reason. Documents and listings, unnumbered, stand alone."""
    files: dict[str, list[ContextItem]] = {}
    groups: list[list[ContextItem]] = []
    for part in parts:
        if part.first_line is None:
            groups.append([part])
        elif part.path in files:
            files[part.path].append(part)
        else:
            files[part.path] = [part]
            groups.append(files[part.path])
    return "\n\n".join("\n".join(_rendered_file(sorted(group, key=lambda part: part.first_line or 0)))
                       for group in groups)


def _rendered_file(parts: list[ContextItem]) -> list[str]:
    """One heading, then each part's lines that no part before it showed (the chunks asked
    together quote overlapping lines of a file; in line order, only a part's start can overlap)."""
    lines = parts[0].rendered_lines()[:1]
    why, last = parts[0].why, 0
    for part in parts:
        start = part.first_line or 1
        fresh = [(start + index, line) for index, line in enumerate(part.rendered_lines()[1:]) if start + index > last]
        if not fresh:
            continue
        if part.why != why:
            lines.append(f"… ({part.why})")
        elif last and fresh[0][0] != last + 1:
            lines.append("…")
        lines += [line for _, line in fresh]
        why, last = part.why, fresh[-1][0]
    return lines


def _merged_listings(items: list[ContextItem], diff_spans: Mapping[str, object]) -> list[ContextItem]:
    """One listing per directory, where the first of its listings stood: each chunk's listing
    leaves out only its own files, so the chunks of one directory asked together would each list
    the others' files again. The merged one names every file any of them named, but not the files
    the request's own diff shows."""
    in_diff: dict[str, set[str]] = {}
    for path in diff_spans:
        in_diff.setdefault(listing_label(str(PurePosixPath(path).parent)), set()).add(PurePosixPath(path).name)
    names: dict[str, dict[str, None]] = {}
    more: dict[str, str] = {}
    for item in items:
        if item.why == NEIGHBOURS:
            for line in item.lines:
                if line.startswith(LISTING_MORE):
                    more.setdefault(item.path, line)  # a count, not names: the first one stands
                elif line not in in_diff.get(item.path, ()):
                    names.setdefault(item.path, {})[line] = None
    merged: list[ContextItem] = []
    for item in items:
        if item.why != NEIGHBOURS:
            merged.append(item)
        elif item.path in names or item.path in more:
            lines = (*names.pop(item.path, {}), *([more.pop(item.path)] if item.path in more else []))
            merged.append(ContextItem(item.path, NEIGHBOURS, lines))
    return merged


def _entries(lines: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """A `not shown` item's entries: a line that does not start with a space, and the indented
    lines under it (the places it names, with the tools off)."""
    entry: list[str] = []
    for line in lines:
        if entry and not line.startswith(" "):
            yield tuple(entry)
            entry = []
        entry.append(line)
    if entry:
        yield tuple(entry)


def _merged_not_shown(items: list[ContextItem]) -> list[ContextItem]:
    """One `not shown` item, where the first stood: each chunk of a request names the sites its
    context left out, so chunks touching the same symbol name it again, each under the same
    request to ask `callers`. The merged one holds each line of advice once and each symbol's
    entry once (the first chunk's: another's differs only by the sites its own diff shows)."""
    entries: dict[str, tuple[str, ...]] = {}
    why = ""
    for item in items:
        if item.path == NOT_SHOWN:
            why = why or item.why
            for entry in _entries(item.lines):
                named = _ENTRY_SYMBOL.match(entry[0])
                entries.setdefault(named.group(1) if named else entry[0], entry)
    merged: list[ContextItem] = []
    for item in items:
        if item.path != NOT_SHOWN:
            merged.append(item)
        elif entries:
            merged.append(ContextItem(NOT_SHOWN, why, tuple(line for entry in entries.values() for line in entry)))
            entries = {}
    return merged
