"""What the reviewer may read beside the diff, within a character budget per chunk (seed 000,
"What it may read").

In order of weight: the governing docs as they stood before the branch (AGENTS.md, CLAUDE.md,
CONTRIBUTING.md, design docs; at most half the budget), then excerpts around the definitions
and call sites of the symbols the diff touches (a few lines each, never whole files; in Python,
not those of a library's or a builtin's name the change only calls), then the names of the
files beside the changed ones. Never a lock file (exclusions.LOCK_FILES: thousands
of generated lines, once most of what a request cost) or a withheld path (withheld.py). The rendered context never exceeds the budget.

Each excerpt is sent with its line numbers, but its cache key (`key_text`) leaves them out: a
push that only shifts a cited function down does not make the chunk citing it miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.reviewers.model.redaction import Redaction, redact_line
from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.target.diff import FileChange, LineKind
from reviewgate.target.exclusions import LOCK_FILES
from reviewgate.target.git import TreeReader, run_git
from reviewgate.text import printable

GOVERNING_NAMES = frozenset({"AGENTS.md", "CLAUDE.md", "CONTRIBUTING.md", "DESIGN.md", "ARCHITECTURE.md"})
DESIGN_DIRECTORIES = ("docs/design/", "docs/architecture/", "docs/adr/", "docs/decisions/")
MAX_SYMBOLS = 20  # symbols looked up per chunk: the most-touched first, the rest are noise
MAX_SITES_PER_SYMBOL = 6  # a symbol used everywhere tells the reviewer little more at 50 sites
MAX_GREP_HITS = 64  # read per symbol before choosing the sites worth showing
SITE_LINES = 2  # lines either side of a call site
DEFINITION_LINES = 12  # a definition: its signature and the start of its body
MAX_LINE_CHARACTERS = 300  # a longer line is generated or minified: cut
MAX_NEIGHBOUR_NAMES = 40
# Why a directory's listing is shown: merged_context knows a listing by it.
NEIGHBOURS = "the names of the files beside the changed ones"
_MORE = "… and "  # the start of a listing's last line when it names only MAX_NEIGHBOUR_NAMES
_CUT = " …"
_DEFINITION = re.compile(
    r"\b(?:def|class|function|func|fn|interface|struct|enum|trait|type|const|let|var)\s+([A-Za-z_][A-Za-z0-9_]{2,})"
)
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\s*\(")
_NOT_SYMBOLS = frozenset(
    "if for while switch return print self super this new await async elif else catch with not and "
    "def class function len str int list dict set tuple range isinstance typeof sizeof".split()
)
_DOCUMENT_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc"})
# Python defines every name it calls with `def`, `class` or an assignment, so a name no file of
# the tree defines so is a library's or a builtin's. Not so in languages whose methods have no
# keyword (Java, a JavaScript class, a Go method): there every name's uses are kept.
_PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
_NAME_DEFINED = re.compile(r"\b(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=")


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
        return [heading, *(f"{self.first_line + index:>6}| {text}" for index, text in enumerate(self.lines))]

    def render(self) -> str:
        return "\n".join(self.rendered_lines())

    def key_text(self) -> str:
        """What the answer depends on: the path, why it is shown and its text, not where it stands."""
        return "\n".join((self.path, self.why, *self.lines))


@dataclass(frozen=True)
class CollectedContext:
    items: tuple[ContextItem, ...]
    redactions: tuple[Redaction, ...]

    def render(self) -> str:
        return "\n\n".join(item.render() for item in self.items)

    def key_texts(self) -> list[str]:
        return [item.key_text() for item in self.items]


def _changed_texts(files: Iterable[FileChange]) -> Iterator[tuple[str, bool]]:
    """(text, whether added) of every line the change adds or removes."""
    for change in files:
        for hunk in change.hunks:
            for line in hunk.lines:
                if line.kind is not LineKind.CONTEXT:
                    yield line.text, line.kind is LineKind.ADDED


def touched_symbols(files: Iterable[FileChange]) -> list[str]:
    """Names the added lines define or call, and the removed lines define (a removed or renamed
    definition: its callers matter), most frequent first."""
    counts: dict[str, int] = {}

    def count(pattern: re.Pattern[str], text: str, weight: int) -> None:
        for name in pattern.findall(text):
            if name not in _NOT_SYMBOLS:
                counts[name] = counts.get(name, 0) + weight

    for text, added in _changed_texts(files):
        count(_DEFINITION, text, 3)
        if added:
            count(_CALL, text, 1)
    return sorted(counts, key=lambda name: (-counts[name], name))[:MAX_SYMBOLS]


def _defined_by(files: Iterable[FileChange]) -> set[str]:
    """Names the added or removed lines define."""
    return {name for text, _ in _changed_texts(files) for name in _DEFINITION.findall(text)}


def library_names(request: ReviewRequest, files: Iterable[FileChange], symbols: list[str]) -> set[str]:
    """Of `symbols`, those a Python chunk only calls and no Python file of the head tree defines
    (`def`, `class`, a module-level assignment): a library's or a builtin's (`pytest.param`, `shutil.which`,
    `dict.items`). Their uses elsewhere in the repository say nothing about this change, and the
    budget they took goes to the names it does define. One `git grep` for all of them; when it
    fails, none is left out."""
    chunk = list(files)
    if not chunk or any(PurePosixPath(change.path).suffix not in _PYTHON_SUFFIXES for change in chunk):
        return set()
    defined_here = _defined_by(chunk)
    candidates = [name for name in symbols if name not in defined_here]
    if not candidates:
        return set()
    names = "(" + "|".join(candidates) + ")"  # the symbols are words: nothing in them is a pattern
    completed = run_git(
        request.repo_root, "grep", "-h", "-o", "-I", "-E",
        "-e", rf"(def|class)[[:space:]]+{names}([^A-Za-z0-9_]|$)",
        "-e", rf"^{names}[[:space:]]*(:[^=]*)?=",  # at the top level: not a local or a keyword argument
        request.target.head_sha, "--", *(f"*{suffix}" for suffix in sorted(_PYTHON_SUFFIXES)),
        check=False, tree_only=True,
    )
    if completed.returncode not in (0, 1):
        return set()
    defined = {name for line in completed.stdout.decode("utf-8", "replace").splitlines()
               for pair in _NAME_DEFINED.findall(line) for name in pair if name}
    return set(candidates) - defined


def symbol_sites(request: ReviewRequest, symbol: str, limit: int = MAX_GREP_HITS) -> list[tuple[str, int, str]]:
    """(path, line, text) of whole-word uses of `symbol` in the head tree, the first `limit`: in
    code, and in documents (a changelog names every function) only when no code has one."""
    return (_grep(request, symbol, limit, [f":(exclude,glob)**/*{suffix}" for suffix in sorted(_DOCUMENT_SUFFIXES)])
            or _grep(request, symbol, limit, []))


def _grep(request: ReviewRequest, symbol: str, limit: int, pathspecs: list[str]) -> list[tuple[str, int, str]]:
    completed = run_git(
        request.repo_root,
        "grep",
        "-z",
        "-n",
        "-w",
        "-F",
        "-I",
        "-e",
        symbol,
        request.target.head_sha,
        "--",
        *pathspecs,
        check=False,
        tree_only=True,  # `-I` decides binary from the bytes, not from the branch's `-diff`
    )
    sites: list[tuple[str, int, str]] = []
    prefix = request.target.head_sha + ":"
    for record in completed.stdout.split(b"\n"):
        parts = record.split(b"\0", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        path = parts[0].decode("utf-8", "surrogateescape").removeprefix(prefix)
        sites.append((path, int(parts[1]), parts[2].decode("utf-8", "replace")))
        if len(sites) >= limit:
            break
    return sites


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

    def __init__(self, request: ReviewRequest, chunk: list[FileChange]) -> None:
        self.request = request
        self.chunk_directories = {str(PurePosixPath(change.path).parent) for change in chunk}
        # Lines the diff shows (all of the file's hunks, when the chunk holds some of them): an
        # excerpt never repeats them, and never shows another chunk's changed lines.
        self.shown: dict[str, set[int]] = {
            change.path: {number for hunk in (request.target.file(change.path) or change).hunks
                          for number in range(hunk.new_start, hunk.new_end + 1)}
            for change in chunk
        }
        self.files: dict[str, list[str] | None] = {}

    def lines_of(self, path: str) -> list[str] | None:
        if path not in self.files:
            text = self.request.head.read_text(path)
            self.files[path] = None if text is None or "\0" in text else text.split("\n")
        return self.files[path]

    def rank(self, symbol: str, sites: list[tuple[str, int, str]]) -> list[tuple[str, int, bool]]:
        """(path, line, is definition) of the sites worth showing: definitions first, then code
        beside the chunk, then other code, then documents."""
        chosen = []
        for path, line, text in sites:
            if line in self.shown.get(path, ()):
                continue
            definition = symbol in _DEFINITION.findall(text)
            document = PurePosixPath(path).suffix.lower() in _DOCUMENT_SUFFIXES
            near = str(PurePosixPath(path).parent) in self.chunk_directories
            chosen.append(((not definition, document, not near, path, line), (path, line, definition)))
        chosen.sort(key=lambda pair: pair[0])
        return [site for _, site in chosen[:MAX_SITES_PER_SYMBOL]]

    def excerpts(self, symbol: str, path: str, line: int, definition: bool) -> list[tuple[ContextItem, list[Redaction]]]:
        lines = self.lines_of(path)
        if lines is None or line > len(lines):
            return []
        first, last = (line, line + DEFINITION_LINES - 1) if definition else (line - SITE_LINES, line + SITE_LINES)
        first, last = max(1, first), min(len(lines), last)
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
        shown.update(range(first, last + 1))
        return found


def collect_context(
    request: ReviewRequest, files: Iterable[FileChange], budget_characters: int, branch_paths: AbstractSet[str]
) -> CollectedContext:
    """The context for the files of one chunk, at most `budget_characters` rendered;
    `branch_paths` are all the files the branch changes."""
    chunk = list(files)
    budget = _Budget(budget_characters)

    def allowed(path: str) -> bool:
        return withheld_reason(path, branch_paths) is None and PurePosixPath(path).name not in LOCK_FILES

    base = TreeReader(request.repo_root, request.target.merge_base)
    governing_room = budget_characters // 2
    for path in sorted(_governing_paths(base.list_files(), (change.path for change in chunk))):
        text = base.read_text(path)
        if text is None or not allowed(path):
            continue
        lines, found = _redacted(path, text.split("\n"), 1)
        before = budget.remaining
        whole = budget.add(ContextItem(path, "governing doc, as before the branch", lines), found, governing_room)
        governing_room -= before - budget.remaining
        if not whole:
            break
    excerpts = _Excerpts(request, chunk)
    full = False
    symbols = touched_symbols(chunk)
    library = library_names(request, chunk, symbols)
    for symbol in (name for name in symbols if name not in library):
        sites = [site for site in symbol_sites(request, symbol) if allowed(site[0])]
        for path, line, definition in excerpts.rank(symbol, sites):
            for item, found in excerpts.excerpts(symbol, path, line, definition):
                if not budget.add(item, found):
                    full = True
                    break
            if full:
                break
        if full:
            break
    shown = {change.path for change in chunk}
    directories = sorted({str(PurePosixPath(path).parent) for path in shown})
    head_files = request.head.list_files()
    for directory in directories:
        if full:
            break
        names = [PurePosixPath(path).name for path in head_files
                 if path not in shown and str(PurePosixPath(path).parent) == directory and allowed(path)]
        if names:
            listed = names[:MAX_NEIGHBOUR_NAMES] + ([f"{_MORE}{len(names) - MAX_NEIGHBOUR_NAMES} more"]
                                                   if len(names) > MAX_NEIGHBOUR_NAMES else [])
            names_text, found = _redacted(directory, listed, 1)
            full = not budget.add(ContextItem(_listing_label(directory), NEIGHBOURS, names_text), found)
    return CollectedContext(tuple(budget.items), tuple(budget.redactions))


def _listing_label(directory: str) -> str:
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
    items = _merged_listings(list(items), diff_spans)
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
        in_diff.setdefault(_listing_label(str(PurePosixPath(path).parent)), set()).add(PurePosixPath(path).name)
    names: dict[str, dict[str, None]] = {}
    more: dict[str, str] = {}
    for item in items:
        if item.why == NEIGHBOURS:
            for line in item.lines:
                if line.startswith(_MORE):
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
