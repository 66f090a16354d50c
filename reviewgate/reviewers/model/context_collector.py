"""What the reviewer may read beside the diff, within a token budget (seed 000, "What it may read").

In order of weight: the governing docs as they stood before the branch (AGENTS.md, CLAUDE.md,
CONTRIBUTING.md, design docs), the definitions and call sites of the symbols the diff touches,
then the files beside the changed ones. Withheld paths (withheld.py) never come in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.reviewers.model.redaction import Redaction, redact_line, redact_text
from reviewgate.reviewers.model.rendering import CHARACTERS_PER_TOKEN, estimate_tokens
from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.target.diff import FileChange
from reviewgate.target.git import TreeReader, run_git
from reviewgate.text import printable, truncate

GOVERNING_NAMES = frozenset({"AGENTS.md", "CLAUDE.md", "CONTRIBUTING.md", "DESIGN.md", "ARCHITECTURE.md"})
DESIGN_DIRECTORIES = ("docs/design/", "docs/architecture/", "docs/adr/", "docs/decisions/")
MAX_SYMBOLS = 20  # symbols looked up per chunk: the most-touched first, the rest are noise
MAX_SITES_PER_SYMBOL = 8  # a symbol used everywhere tells the reviewer little more at 50 sites
NEIGHBOUR_LINES = 200  # a neighbour shows its pattern in its first lines; the budget goes further
_DEFINITION = re.compile(
    r"\b(?:def|class|function|func|fn|interface|struct|enum|trait|type|const|let|var)\s+([A-Za-z_][A-Za-z0-9_]{2,})"
)
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\s*\(")
_NOT_SYMBOLS = frozenset(
    "if for while switch return print self super this new await async elif else catch with not and "
    "def class function len str int list dict set tuple range isinstance typeof sizeof".split()
)


@dataclass(frozen=True)
class ContextItem:
    path: str
    why: str
    text: str

    def render(self) -> str:
        return f"=== CONTEXT {printable(self.path)} ({self.why}) ===\n{self.text}"


@dataclass(frozen=True)
class CollectedContext:
    items: tuple[ContextItem, ...]
    redactions: tuple[Redaction, ...]

    def render(self) -> str:
        return "\n\n".join(item.render() for item in self.items)


def touched_symbols(files: Iterable[FileChange]) -> list[str]:
    """Names the added lines define or call, most frequent first."""
    counts: dict[str, int] = {}
    for change in files:
        for text in change.added_lines().values():
            for pattern, weight in ((_DEFINITION, 3), (_CALL, 1)):
                for name in pattern.findall(text):
                    if name not in _NOT_SYMBOLS:
                        counts[name] = counts.get(name, 0) + weight
    return sorted(counts, key=lambda name: (-counts[name], name))[:MAX_SYMBOLS]


def symbol_sites(request: ReviewRequest, symbol: str) -> list[tuple[str, int, str]]:
    """(path, line, text) of every whole-word use of `symbol` in the head tree, capped."""
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
        if len(sites) >= MAX_SITES_PER_SYMBOL:
            break
    return sites


class _Budget:
    def __init__(self, tokens: int) -> None:
        self.remaining = tokens
        self.items: list[ContextItem] = []
        self.redactions: list[Redaction] = []

    def add(self, path: str, why: str, text: str, redacted: tuple[Redaction, ...] | None = None) -> bool:
        """Add the item, cut to what is left; False once the budget is spent. Text the caller
        has already redacted comes with its `redacted` list; anything else is redacted here."""
        if self.remaining <= 0:
            return False
        clean, found = (text, list(redacted)) if redacted is not None else redact_text(text, path)
        clean = truncate(clean, self.remaining * CHARACTERS_PER_TOKEN, "\n… (cut to fit the context budget)")
        self.items.append(ContextItem(path, why, clean))
        self.redactions += found
        self.remaining -= estimate_tokens(clean) + 20
        return True


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


def collect_context(
    request: ReviewRequest, files: Iterable[FileChange], budget_tokens: int, branch_paths: AbstractSet[str]
) -> CollectedContext:
    """The context for the files of one chunk; `branch_paths` are all the files the branch changes."""
    chunk = list(files)
    budget = _Budget(budget_tokens)

    def allowed(path: str) -> bool:
        return withheld_reason(path, branch_paths) is None

    base = TreeReader(request.repo_root, request.target.merge_base)
    base_files = base.list_files()
    for path in sorted(_governing_paths(base_files, (change.path for change in chunk))):
        text = base.read_text(path)
        if (
            text is not None
            and allowed(path)
            and not budget.add(path, "governing doc, as before the branch", text)
        ):
            break
    shown = {change.path for change in chunk}
    for symbol in touched_symbols(chunk):
        sites = [site for site in symbol_sites(request, symbol) if allowed(site[0])]
        if sites:
            lines, found = [], []
            for path, line, text in sites:
                clean, kinds = redact_line(text)
                lines.append(f"{printable(path)}:{line}: {clean}")
                found += [Redaction(path, line, kind) for kind in kinds]
            why = "definitions and call sites in the head tree"
            if not budget.add(f"symbol {symbol}", why, "\n".join(lines), tuple(found)):
                break
    head_files = request.head.list_files()
    directories = {str(PurePosixPath(path).parent) for path in shown}
    for path in head_files:
        if path in shown or str(PurePosixPath(path).parent) not in directories or not allowed(path):
            continue
        text = request.head.read_text(path)
        if text is None or "\0" in text:
            continue
        head = "\n".join(text.split("\n")[:NEIGHBOUR_LINES])
        if not budget.add(path, "a file beside the changed ones", head):
            break
    return CollectedContext(tuple(budget.items), tuple(budget.redactions))
