"""What the reviewer may read beside the diff, within a character budget per chunk.

In order of weight: the governing docs as they stood before the branch (AGENTS.md, CLAUDE.md,
CONTRIBUTING.md, design docs), then the call sites of every symbol the change touches
(symbols.py: the names it defines or removes and the functions whose bodies it edits; a few
lines around each, in Python the code of them and not a docstring or a comment at the window's
edge (UseReader.window), never whole files, never an import, never a line the diff already shows),
then the definitions of the names it only calls (not those of a library or a builtin), then the
names of the files beside the changed ones. The call sites may take up to `cap` (context_chars):
what a change touches sets their room, so a one-line change to a helper with twelve callers gets
its callers. The rest follows the size of the diff (`budget_characters`, governing docs at most
half of it). The call sites that do not fit are named, so the reviewer knows what it was not
shown. When the reviewer has the read-only tools (`inline_sites`), only the first few sites of
each symbol are shown and the rest are named by file, with the instruction to ask `callers` for
them, each with SITE_LINES_WITH_TOOLS lines either side; of a name the change only calls, only its
definition, and only when the tree defines the name once; each definition's first
DEFINITION_LINES_WITH_TOOLS lines; no listing (`read` lists a directory); and the docs and
definitions take half the room:
most of a request was call sites, uses and bodies the model may never need, and a tool call
costs only when it is made. Never a lock file (exclusions.LOCK_FILES: thousands of generated
lines, once most of what a request cost) or a withheld path (withheld.py). The rendered context
never exceeds `cap`.

Each excerpt is sent with its line numbers, but its cache key (`key_text`) leaves them out: a
push that only shifts a cited function down does not make the chunk citing it miss.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import FileChange
from reviewgate.freeze.exclusions import LOCK_FILES
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.model.chunking import DIFF_CONTEXT_LINES_WITH_TOOLS, sent_blocks
from reviewgate.reviewers.model.context_items import (
    LISTING_MORE,
    NEIGHBOURS,
    NOT_SHOWN,
    CollectedContext,
    ContextItem,
    listing_label,
    merged_context,
)
from reviewgate.reviewers.model.redaction import Redaction, redact_line
from reviewgate.reviewers.model.symbols import Site, UseReader, symbol_sites, touched_symbols
from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.text import printable

__all__ = ["CollectedContext", "ContextItem", "collect_context", "merged_context", "symbol_sites"]

GOVERNING_NAMES = frozenset({"AGENTS.md", "CLAUDE.md", "CONTRIBUTING.md", "DESIGN.md", "ARCHITECTURE.md"})
DESIGN_DIRECTORIES = ("docs/design/", "docs/architecture/", "docs/adr/", "docs/decisions/")
MAX_SITES_PER_CALLED = 6  # a name the change only calls: its definition, and a few uses
# With the tools, only its definition: `definition` and `callers` return the rest when asked.
MAX_SITES_PER_CALLED_WITH_TOOLS = 1
MAX_CALL_SITES = 60  # of one touched symbol: past this the reviewer is told the rest by name
SITE_LINES = 2  # lines either side of a call site
SITE_LINES_WITH_TOOLS = 1  # `callers` returns each site with SITE_LINES, `read` the rest
DEFINITION_LINES = 12  # a definition: its signature and the start of its body
DEFINITION_LINES_WITH_TOOLS = 6  # the model asks `definition` or `read` for more of it
MAX_LINE_CHARACTERS = 300  # a longer line is generated or minified: cut
MAX_NEIGHBOUR_NAMES = 40
MAX_NAMED_SITES = 30  # sites named, not shown, per symbol
# With the tools: the files holding the most of them, per symbol. `callers` returns them all; a
# long list of files in every request was a sixth of the context.
MAX_NAMED_FILES = 3
INLINE_SITES_WITH_TOOLS = 2  # sites of a touched symbol shown when the reviewer can ask for the rest
NOT_SHOWN_ROOM = 600  # kept back from the call sites for the line naming those left out
LEFT_FOR_ROOM = "call sites left out for room: the context is partial"
LEFT_FOR_TOOLS = "call sites not shown inline: the context is partial"
ASK_WITH_TOOLS = "Ask `callers` for the ones that matter before you judge."
_CUT = " …"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARACTERS else text[:MAX_LINE_CHARACTERS] + _CUT


class _Budget:
    """Items added while their rendering fits what is left of `characters`; an item that does not
    fit whole is cut to the lines that do."""

    def __init__(self, characters: int) -> None:
        self.remaining = characters
        self.items: list[ContextItem] = []
        self.redactions: list[Redaction] = []

    def add(self, item: ContextItem, redactions: Iterable[Redaction] = (), limit: int | None = None) -> bool:
        """False once nothing more fits (or `limit`, a smaller cap for this item, is spent)."""
        room = self.remaining - (2 if self.items else 0)  # the blank line between items
        if limit is not None:
            room = min(room, limit)
        rendered = item.rendered_lines()
        size = len(rendered[0])
        count = 0
        for line in rendered[1:]:
            if size + 1 + len(line) > room:
                break
            size += 1 + len(line)
            count += 1
        if not count:
            return False
        kept = ContextItem(item.path, item.why, item.lines[:count], item.first_line)
        last = count - 1 + (item.first_line or 1)
        self.redactions += [found for found in redactions if found.line is None or found.line <= last]
        self.remaining -= size + (2 if self.items else 0)
        self.items.append(kept)
        return count == len(item.lines)


def _governing_paths(base_files: list[str], changed: Iterable[str]) -> Iterator[str]:
    directories = {""}
    for path in changed:
        parents = PurePosixPath(path).parents
        directories.update("" if str(parent) == "." else f"{parent}/" for parent in parents)
    for path in base_files:
        name = PurePosixPath(path).name
        directory = path[: len(path) - len(name)]
        if (name in GOVERNING_NAMES and directory in directories) or (
            path.startswith(DESIGN_DIRECTORIES) and path.endswith(".md")
        ):
            yield path


def _redacted(path: str, lines: list[str], first: int) -> tuple[tuple[str, ...], list[Redaction]]:
    out: list[str] = []
    found: list[Redaction] = []
    for index, text in enumerate(lines):
        clean, kinds = redact_line(printable(_clip(text)))
        out.append(clean)
        found += [Redaction(path, first + index, kind) for kind in kinds]
    return tuple(out), found


class _Excerpts:
    """The excerpts around one chunk's symbols, each line of a file shown once."""

    def __init__(self, request: ReviewRequest, chunk: list[FileChange], uses: UseReader,
                 definition_lines: int = DEFINITION_LINES, site_lines: int = SITE_LINES,
                 diff_lines: int | None = None) -> None:
        self.request = request
        self.uses = uses
        self.definition_lines = definition_lines
        self.site_lines = site_lines
        self.files_of_chunk = {change.path for change in chunk}
        self.chunk_directories = {str(PurePosixPath(change.path).parent) for change in chunk}
        # Lines the diff shows (all of the file's hunks, when the chunk holds some of them; with
        # `diff_lines`, the blocks as the chunks hold them): an excerpt never repeats them, and
        # never shows another chunk's changed lines.
        self.shown: dict[str, set[int]] = {
            change.path: {number for hunk in (request.target.file(change.path) or change).hunks
                          for block in ([hunk] if diff_lines is None else sent_blocks(hunk, diff_lines))
                          for number in range(block.new_start, block.new_end + 1)}
            for change in chunk
        }
        self.files: dict[str, list[str] | None] = {}

    def lines_of(self, path: str) -> list[str] | None:
        if path not in self.files:
            text = self.request.head.read_text(path)
            self.files[path] = None if text is None or "\0" in text else text.split("\n")
        return self.files[path]

    def in_diff(self, site: Site) -> bool:
        """Whether the diff already shows the site's line: the chunk's hunks, or a line the branch
        changes in another file (its own diff block shows it)."""
        if site.line in self.shown.get(site.path, ()):
            return True
        change = self.request.target.file(site.path)
        return change is not None and site.line in change.changed_line_numbers()

    def rank(self, symbol: str, sites: list[Site]) -> list[Site]:
        """The sites worth showing, the ones the diff shows left out: definitions first, then
        code beside the chunk, then other code, then documents."""
        chosen = []
        for site in sites:
            if site.line in self.shown.get(site.path, ()):
                continue
            near = str(PurePosixPath(site.path).parent) in self.chunk_directories
            chosen.append(((not site.defines(symbol), site.is_document, not near, site.path, site.line), site))
        chosen.sort(key=lambda pair: pair[0])
        return [site for _, site in chosen]

    def excerpts(self, symbol: str, site: Site, keep: bool = True) -> list[tuple[ContextItem, list[Redaction]]]:
        """The site's lines the context does not show yet; `keep`: they are shown from now on."""
        path, line, definition = site.path, site.line, site.defines(symbol)
        lines = self.lines_of(path)
        if lines is None or line > len(lines):
            return []
        first, last = (self.uses.definition_window(site, self.definition_lines, len(lines)) if definition
                       else self.uses.window(site, self.site_lines, self.site_lines, len(lines)))
        shown = self.shown.setdefault(path, set())
        why = f"{'definition' if definition else 'a use'} of {symbol}"
        found: list[tuple[ContextItem, list[Redaction]]] = []
        run: list[int] = []
        for number in [*range(first, last + 1), 0]:  # 0 ends the last run
            if number and number not in shown:
                run.append(number)
                continue
            if run:
                text, redactions = _redacted(path, [lines[index - 1] for index in run], run[0])
                found.append((ContextItem(path, why, text, run[0]), redactions))
                run = []
        if keep:
            shown.update(range(first, last + 1))
        return found


class _Room:
    """What one kind of context may still take of a shared _Budget: `left` characters."""

    def __init__(self, budget: _Budget, characters: int) -> None:
        self.budget, self.left = budget, characters

    def add(self, item: ContextItem, redactions: Iterable[Redaction] = ()) -> bool:
        """As _Budget.add, within this room too."""
        before = self.budget.remaining
        whole = self.budget.add(item, redactions, max(0, self.left))
        self.left -= before - self.budget.remaining
        return whole

    def fits(self, items: list[tuple[ContextItem, list[Redaction]]]) -> bool:
        size = sum(len(item.render()) + 2 for item, _ in items)
        return size <= min(self.left, self.budget.remaining)


def _call_sites(
    request: ReviewRequest, excerpts: _Excerpts, uses: UseReader, symbols: tuple[str, ...],
    edited: frozenset[str], allowed: Callable[[str], bool], room: _Room, inline_sites: int = MAX_CALL_SITES,
) -> dict[str, list[Site]]:
    """The call sites of `symbols` added to `room`, a site of each symbol in turn (one much-used
    symbol does not crowd out the rest), at most `inline_sites` of each; the sites left out, by
    symbol."""
    # The definition of a function whose body the chunk edits, in the chunk's own file, is the
    # code under review: the diff shows its change, and an excerpt would repeat the file around
    # the hunk. (A sibling definition of a name the chunk defines anew is shown: it may be the
    # existing equivalent.)
    queues = {symbol: [site for site in excerpts.rank(symbol, uses.sites(request, symbol))
                       if allowed(site.path) and not (symbol in edited and site.path in excerpts.files_of_chunk
                                                      and site.defines(symbol))]
              for symbol in symbols}
    left_out: dict[str, list[Site]] = {symbol: [] for symbol in symbols}
    shown = dict.fromkeys(symbols, 0)
    full = False
    for turn in range(max((len(queue) for queue in queues.values()), default=0)):
        for symbol, queue in queues.items():
            if turn >= len(queue):
                continue
            site = queue[turn]
            if excerpts.in_diff(site):
                continue  # the diff shows it
            items = excerpts.excerpts(symbol, site, keep=False)
            full = full or turn >= MAX_CALL_SITES or not room.fits(items)
            if full or shown[symbol] >= inline_sites:
                left_out[symbol].append(site)
                continue
            shown[symbol] += 1
            excerpts.excerpts(symbol, site)
            for item, found in items:
                room.add(item, found)
    return {symbol: sites for symbol, sites in left_out.items() if sites}


def _not_shown(left_out: dict[str, list[Site]], tools: bool = False) -> ContextItem | None:
    """The item naming the call sites left out, so the reviewer knows what it did not read; with
    `tools`, it tells the reviewer to ask for them, and names only their files (`callers` returns
    each site with its lines: the line numbers cost more than the files' names)."""
    if not left_out:
        return None
    lines = [ASK_WITH_TOOLS] if tools else []
    for symbol, sites in left_out.items():
        if tools:
            files = Counter(site.path for site in sites)
            named = [f"{path} ({count})" if count > 1 else path for path, count in files.most_common(MAX_NAMED_FILES)]
            more = f", … {len(files) - MAX_NAMED_FILES} more files" if len(files) > MAX_NAMED_FILES else ""
            lines.append(f"{len(sites)} call site(s) of {symbol} in: {', '.join(named)}{more}")
            continue
        lines.append(f"{len(sites)} call site(s) of {symbol}:")
        by_file: dict[str, list[str]] = {}
        for site in sites[:MAX_NAMED_SITES]:
            by_file.setdefault(site.path, []).append(str(site.line))
        lines += [f"  {path}: {', '.join(numbers)}" for path, numbers in by_file.items()]
        if len(sites) > MAX_NAMED_SITES:
            lines.append(f"  … and {len(sites) - MAX_NAMED_SITES} more")
    text, _ = _redacted(NOT_SHOWN, lines, 1)
    return ContextItem(NOT_SHOWN, LEFT_FOR_TOOLS if tools else LEFT_FOR_ROOM, text)


def collect_context(
    request: ReviewRequest, files: Iterable[FileChange], budget_characters: int, branch_paths: AbstractSet[str],
    cap: int | None = None, inline_sites: int | None = None,
) -> CollectedContext:
    """The context for the files of one chunk, at most `cap` (default `budget_characters`)
    rendered: the call sites of the symbols it touches up to `cap`, everything else within
    `budget_characters`; `branch_paths` are all the files the branch changes. `inline_sites`
    (the reviewer has the tools): at most that many sites of each symbol are shown, the rest
    named for the reviewer to ask for."""
    chunk = list(files)
    total = max(budget_characters, cap or 0)
    budget = _Budget(total)
    # Docs, the called names' definitions, listings; with the tools, half of that room: the model
    # asks `definition` for a name whose definition did not fit.
    small = _Room(budget, budget_characters if inline_sites is None else budget_characters // 2)

    def allowed(path: str) -> bool:
        return withheld_reason(path, branch_paths) is None and PurePosixPath(path).name not in LOCK_FILES

    base = TreeReader(request.repo_root, request.target.merge_base)
    governing = _Room(budget, budget_characters // 2)
    for path in sorted(_governing_paths(base.list_files(), (change.path for change in chunk))):
        text = base.read_text(path)
        if text is None or not allowed(path):
            continue
        lines, found = _redacted(path, text.split("\n"), 1)
        before = budget.remaining
        whole = governing.add(ContextItem(path, "governing doc, as before the branch", lines), found)
        small.left -= before - budget.remaining
        if not whole:
            break
    uses = UseReader(request.head)
    excerpts = (_Excerpts(request, chunk, uses) if inline_sites is None
                else _Excerpts(request, chunk, uses, DEFINITION_LINES_WITH_TOOLS, SITE_LINES_WITH_TOOLS,
                               DIFF_CONTEXT_LINES_WITH_TOOLS))
    touched = touched_symbols(request, chunk)
    # The call sites may take all but what the rest's room still holds, and the line naming
    # the sites left out.
    held_back = min(max(0, small.left), budget.remaining // 2) + min(NOT_SHOWN_ROOM, budget.remaining // 4)
    callers = _Room(budget, budget.remaining - held_back)
    left_out = _call_sites(request, excerpts, uses, touched.changed, touched.edited, allowed, callers,
                           MAX_CALL_SITES if inline_sites is None else inline_sites)
    named = _not_shown(left_out, tools=inline_sites is not None)
    if named is not None:
        budget.add(named)
    full = False
    for symbol in touched.called:
        sites = [site for site in uses.sites(request, symbol) if allowed(site.path)]
        ranked = excerpts.rank(symbol, sites)
        if inline_sites is not None:
            # Only a definition the name has alone: of a name defined in several places (`write`,
            # `__init__`, `flush`) the first found is a guess at what the call reaches, and
            # `definition` lists them all.
            defining = [site for site in ranked if site.defines(symbol)]
            alone = sum(site.defines(symbol) for site in sites) == 1
            ranked = defining[:MAX_SITES_PER_CALLED_WITH_TOOLS] if alone else []
        for site in ranked[:MAX_SITES_PER_CALLED]:
            for item, found in excerpts.excerpts(symbol, site):
                if not small.add(item, found):
                    full = True
                    break
            if full:
                break
        if full:
            break
    shown = {change.path for change in chunk}
    # With the tools, `read` of a directory lists it: a listing in every request was a name list
    # the model may never need.
    directories = sorted({str(PurePosixPath(path).parent) for path in shown}) if inline_sites is None else []
    head_files = request.head.list_files() if directories else []
    for directory in directories:
        if full:
            break
        names = [PurePosixPath(path).name for path in head_files
                 if path not in shown and str(PurePosixPath(path).parent) == directory and allowed(path)]
        if names:
            listed = names[:MAX_NEIGHBOUR_NAMES] + ([f"{LISTING_MORE}{len(names) - MAX_NEIGHBOUR_NAMES} more"]
                                                   if len(names) > MAX_NEIGHBOUR_NAMES else [])
            names_text, found = _redacted(directory, listed, 1)
            full = not small.add(ContextItem(listing_label(directory), NEIGHBOURS, names_text), found)
    return CollectedContext(tuple(budget.items), tuple(budget.redactions))
