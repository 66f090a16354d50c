"""What a change touches, and where the repository uses it: the one reading of symbols that the
context collector, the second look and the reviewer's `callers`/`definition` tools share.

A change touches the names its changed lines define (added, or removed: a removed or renamed
definition's callers matter) and the functions whose bodies it edits (read with the parse the
lenses share, `ast` for Python and tree-sitter for the rest: a changed body changes what every
caller gets). Their call sites are what a reviewer reads beside the diff. A name the change only
calls is touched too, more weakly: its definition says what the call does. An import of a name
is never a use of it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import FileChange, LineKind
from reviewgate.freeze.git import TreeReader, run_git
from reviewgate.reviewers.model.code_names import PythonReading, read_python

MAX_SYMBOLS = 20  # symbols looked up per chunk: the most-touched first, the rest are noise
MAX_GREP_HITS = 200  # read per symbol before choosing the sites worth showing
DOCUMENT_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc"})
PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
DEFINITION = re.compile(
    r"\b(?:def|class|function|func|fn|interface|struct|enum|trait|type|const|let|var)\s+([A-Za-z_][A-Za-z0-9_]{2,})"
)
_PYTHON_DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\s*\(")
_NOT_SYMBOLS = frozenset(
    "if for while switch return print self super this new await async elif else catch with not and "
    "def class function len str int list dict set tuple range isinstance typeof sizeof".split()
)
# Python defines every name it calls with `def`, `class` or an assignment, so a name no file of
# the tree defines so is a library's or a builtin's. Not so in languages whose methods have no
# keyword (Java, a JavaScript class, a Go method): there every name's uses are kept.
_NAME_DEFINED = re.compile(r"\b(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=")
# A line that brings a name in rather than using it, in the languages the lenses read.
_IMPORT_LINE = re.compile(
    r"^\s*(?:from\s+\S+\s+import\b|import\b|export\s+\{[^}]*\}\s+from\b|use\s|using\s|require(?:_once)?\b|"
    r"#\s*include\b|package\s)"
    r"|\brequire\s*\(\s*['\"]"
)


@dataclass(frozen=True)
class Touched:
    """The names a change touches, most-touched first."""

    changed: tuple[str, ...]  # defined, removed or body edited: their call sites are context
    called: tuple[str, ...]  # only called: their definitions are context
    edited: frozenset[str] = frozenset()  # of `changed`, those whose bodies alone changed lines name

    def all(self) -> list[str]:
        return [*self.changed, *self.called]


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    text: str

    def defines(self, symbol: str) -> bool:
        if PurePosixPath(self.path).suffix in PYTHON_SUFFIXES:
            # Python defines with a statement that starts its line: `class object won't` in a
            # docstring defines nothing.
            return symbol in _PYTHON_DEFINITION.findall(self.text)
        return symbol in DEFINITION.findall(self.text)

    @property
    def is_document(self) -> bool:
        return PurePosixPath(self.path).suffix.lower() in DOCUMENT_SUFFIXES


def _changed_texts(files: Iterable[FileChange]) -> Iterator[tuple[str, bool]]:
    """(text, whether added) of every line the change adds or removes."""
    for change in files:
        for hunk in change.hunks:
            for line in hunk.lines:
                if line.kind is not LineKind.CONTEXT:
                    yield line.text, line.kind is LineKind.ADDED


def _symbol_of(qualified: str) -> str | None:
    """The name a caller writes for a function shape's qualified name: `Class.method` is called
    as `method`; a constructor (`Class.__init__`) as `Class`."""
    parts = [part.split("#", 1)[0] for part in qualified.split(".")]
    name = parts[-1]
    if name.startswith("__") and name.endswith("__"):
        name = parts[-2] if len(parts) > 1 else ""
    if len(name) < 3 or name in _NOT_SYMBOLS or not name.isidentifier():
        return None
    return name


@functools.lru_cache(maxsize=16)
def _function_spans(text: str, path: str) -> tuple[tuple[int, int, int, str], ...]:
    """(size, first, last, qualified name) of every function of one side of a file, smallest
    first, by the lenses' shared parse; each of a file's chunks asks, so it is parsed once."""
    # Imported here: the lenses' parsers load only for a review that reads a body.
    from reviewgate.reviewers.builtin.language_table import language_of
    from reviewgate.reviewers.builtin.side_shapes import shapes_of

    shapes = shapes_of(text, path, language_of(path)) or {}
    return tuple(sorted((shape.end_line - shape.line, shape.line, shape.end_line, name)
                        for name, shape in shapes.items()))


def _innermost_names(text: str, path: str, lines: Iterable[int]) -> list[str]:
    """The functions (innermost) whose lines hold any of `lines`."""
    wanted = sorted(set(lines))
    if not wanted:
        return []
    spans = _function_spans(text, path)
    found: list[str] = []
    for number in wanted:
        inner = next((name for _, first, last, name in spans if first <= number <= last), None)
        symbol = _symbol_of(inner) if inner is not None else None
        if symbol is not None and symbol not in found:
            found.append(symbol)
    return found


def enclosing_symbol(text: str, path: str, line: int) -> str | None:
    """The name callers write for the innermost function holding `line`, when there is one."""
    names = _innermost_names(text, path, [line])
    return names[0] if names else None


def edited_functions(request: ReviewRequest, files: Iterable[FileChange]) -> list[str]:
    """Names of the functions whose bodies the change edits: at the head for the lines it adds,
    at the merge base for the lines it removes."""
    base = TreeReader(request.repo_root, request.target.merge_base)
    names: list[str] = []
    for change in files:
        added = [line.new_line for hunk in change.hunks for line in hunk.lines
                 if line.kind is LineKind.ADDED and line.new_line is not None]
        removed = [line.old_line for hunk in change.hunks for line in hunk.lines
                   if line.kind is LineKind.REMOVED and line.old_line is not None]
        for reader, path, lines in ((request.head, change.path, added),
                                    (base, change.old_path or change.path, removed)):
            text = reader.read_text(path) if lines else None
            if text is not None and "\0" not in text:
                names += [name for name in _innermost_names(text, path, lines) if name not in names]
    return names


def touched_symbols(request: ReviewRequest, files: Iterable[FileChange]) -> Touched:
    """Names the changed lines define and the functions whose bodies they edit (`changed`), and
    names the added lines only call (`called`), most frequent first."""
    chunk = list(files)
    defined: dict[str, int] = {}
    calls: dict[str, int] = {}
    for text, added in _changed_texts(chunk):
        for name in DEFINITION.findall(text):
            if name not in _NOT_SYMBOLS:
                defined[name] = defined.get(name, 0) + 3
        if added:
            for name in _CALL.findall(text):
                if name not in _NOT_SYMBOLS:
                    calls[name] = calls.get(name, 0) + 1
    named = set(defined)
    edited = set()
    for name in edited_functions(request, chunk):
        defined[name] = defined.get(name, 0) + 3
        if name not in named:
            edited.add(name)
    for name, count in calls.items():
        if name in defined:
            defined[name] += count
    changed = sorted(defined, key=lambda name: (-defined[name], name))[:MAX_SYMBOLS]
    called = [name for name in sorted(calls, key=lambda name: (-calls[name], name)) if name not in defined]
    called = [name for name in called if name not in library_names(request, chunk, called)]
    return Touched(tuple(changed), tuple(called[:max(0, MAX_SYMBOLS - len(changed))]), frozenset(edited))


def library_names(request: ReviewRequest, files: Iterable[FileChange], symbols: list[str]) -> set[str]:
    """Of `symbols`, those a Python chunk only calls and no Python file of the head tree defines
    (`def`, `class`, a module-level assignment): a library's or a builtin's (`pytest.param`,
    `shutil.which`, `dict.items`). Their uses elsewhere in the repository say nothing about this
    change. One `git grep` for all of them; when it fails, none is left out."""
    chunk = list(files)
    if not chunk or any(PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES for change in chunk):
        return set()
    defined_here = {name for text, _ in _changed_texts(chunk) for name in DEFINITION.findall(text)}
    candidates = [name for name in symbols if name not in defined_here]
    if not candidates:
        return set()
    names = "(" + "|".join(candidates) + ")"  # the symbols are words: nothing in them is a pattern
    completed = run_git(
        request.repo_root, "grep", "-h", "-o", "-I", "-E",
        "-e", rf"^[[:space:]]*(async[[:space:]]+)?(def|class)[[:space:]]+{names}([^A-Za-z0-9_]|$)",
        "-e", rf"^{names}[[:space:]]*(:[^=]*)?=",  # at the top level: not a local or a keyword argument
        request.target.head_sha, "--", *(f"*{suffix}" for suffix in sorted(PYTHON_SUFFIXES)),
        check=False, tree_only=True,
    )
    if completed.returncode not in (0, 1):
        return set()
    defined = {name for line in completed.stdout.decode("utf-8", "replace").splitlines()
               for pair in _NAME_DEFINED.findall(line) for name in pair if name}
    return set(candidates) - defined


def symbol_sites(request: ReviewRequest, symbol: str, limit: int = MAX_GREP_HITS) -> list[tuple[str, int, str]]:
    """(path, line, text) of whole-word occurrences of `symbol` in the head tree, the first
    `limit`: in code, and in documents (a changelog names every function) only when no code has one."""
    excluded = [f":(exclude,glob)**/*{suffix}" for suffix in sorted(DOCUMENT_SUFFIXES)]
    return grep_tree(request, request.target.head_sha, symbol, limit, excluded) or grep_tree(
        request, request.target.head_sha, symbol, limit, [])


def grep_tree(request: ReviewRequest, revision: str, needle: str, limit: int, pathspecs: list[str],
              *, word: bool = True, regex: bool = False) -> list[tuple[str, int, str]]:
    """(path, line, text) of the lines of the tree at `revision` holding `needle` (a whole word,
    or any fixed text, or an extended regex), the first `limit`, read from the git objects."""
    completed = run_git(
        request.repo_root, "grep", "-z", "-n", *(["-w"] if word else []), "-E" if regex else "-F", "-I",
        "-e", needle, revision, "--", *pathspecs,
        check=False,
        tree_only=True,  # `-I` decides binary from the bytes, not from the branch's `-diff`
    )
    sites: list[tuple[str, int, str]] = []
    prefix = revision + ":"
    for record in completed.stdout.split(b"\n"):
        parts = record.split(b"\0", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        path = parts[0].decode("utf-8", "surrogateescape").removeprefix(prefix)
        sites.append((path, int(parts[1]), parts[2].decode("utf-8", "replace")))
        if len(sites) >= limit:
            break
    return sites


@dataclass(frozen=True)
class _PythonTree:
    imports: frozenset[int]  # every line an import statement spans
    ends: dict[int, int]  # the last line of each function and class, by the line of its `def`/`class`


def _python_tree(text: str, path: str) -> _PythonTree:
    """The imports (a parenthesised `from x import (\\n a,\\n b)` spans lines) and the extent
    of every definition, by `ast`."""
    import ast

    from reviewgate.reviewers.builtin.python_parsing import parse_python

    tree = parse_python(text, path)
    if tree is None:
        return _PythonTree(frozenset(), {})
    nodes = list(ast.walk(tree))
    return _PythonTree(
        frozenset(number for node in nodes if isinstance(node, (ast.Import, ast.ImportFrom))
                  for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)),
        {node.lineno: node.end_lineno or node.lineno for node in nodes
         if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))})


class UseReader:
    """Sites of a symbol that use it in code: imports left out, and in Python a mention in a
    comment, a docstring or a string (code_names.py); each file read once for each. The window
    shown around a site stops at the code (`window`)."""

    def __init__(self, head: TreeReader) -> None:
        self.head = head
        self._trees: dict[str, _PythonTree] = {}
        self._readings: dict[str, PythonReading | None] = {}

    def is_import(self, site: Site) -> bool:
        if _IMPORT_LINE.search(site.text):
            return True
        if PurePosixPath(site.path).suffix not in PYTHON_SUFFIXES:
            return False
        return site.line in self._tree(site.path).imports

    def _tree(self, path: str) -> _PythonTree:
        if path not in self._trees:
            text = self.head.read_text(path)
            self._trees[path] = _python_tree(text, path) if text else _PythonTree(frozenset(), {})
        return self._trees[path]

    def _reading(self, path: str) -> PythonReading | None:
        """The Python file's code and prose, None for another language or what does not tokenize."""
        if PurePosixPath(path).suffix not in PYTHON_SUFFIXES:
            return None
        if path not in self._readings:
            text = self.head.read_text(path)
            self._readings[path] = read_python(text) if text is not None and "\0" not in text else None
        return self._readings[path]

    def in_prose(self, site: Site, symbol: str) -> bool:
        """Whether the site's line names `symbol` only in a comment, a docstring or a string."""
        reading = self._reading(site.path)
        return reading is not None and site.line not in reading.names.get(symbol, ())

    def window(self, site: Site, before: int, after: int, total: int) -> tuple[int, int]:
        """First and last line shown around a use: `before` and `after` lines either side within
        the file's `total` lines, less, in Python, a docstring's or a comment's lines at its edges
        (prose beside a call is not its context). Other languages' windows are kept as found: the
        collector reads their uses as text, with no parse to tell a comment."""
        first, last = max(1, site.line - before), min(total, site.line + after)
        reading = self._reading(site.path)
        return (first, last) if reading is None else reading.code_window(first, last, site.line)

    def definition_window(self, site: Site, lines: int, total: int) -> tuple[int, int]:
        """First and last line shown of a definition: its first `lines` within the file's `total`;
        in Python, less the prose at the end past the definition's last line (a comment on what
        follows it). Its own docstring is part of it."""
        first, last = site.line, min(total, site.line + lines - 1)
        reading = self._reading(site.path)
        end = self._tree(site.path).ends.get(site.line) if reading is not None else None
        if reading is None or end is None or end >= last:
            return first, last
        return first, reading.code_window(end, last, end)[1]

    def sites(self, request: ReviewRequest, symbol: str, limit: int = MAX_GREP_HITS) -> list[Site]:
        """The definitions and uses of `symbol` at the head, in code, imports left out; in
        documents (a changelog) only when no code names it."""
        found = [Site(path, line, text) for path, line, text in symbol_sites(request, symbol, limit)]
        kept = [site for site in found if not self.is_import(site) and not self.in_prose(site, symbol)]
        if kept or not found or any(site.is_document for site in found):
            return kept
        # Every line of code that named it was prose: the documents are read as when no code names it.
        documents = [f":(glob)**/*{suffix}" for suffix in sorted(DOCUMENT_SUFFIXES)]
        return [Site(*hit) for hit in grep_tree(request, request.target.head_sha, symbol, limit, documents)]
