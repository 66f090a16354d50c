"""What every lens shares: languages by extension, test-file conventions, comments, findings."""

from __future__ import annotations

import ast
import bisect
import contextlib
import enum
import functools
import gc
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import chain
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast

from reviewgate.context import ReviewRequest
from reviewgate.findings import DEMOTED, Finding, FindingClass, Severity, make_finding_id
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.text import UNPARSABLE

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.python_statements import TouchedModule

SOURCE = "builtin"

NodeT = TypeVar("NodeT", bound=ast.AST)


class Language(str, enum.Enum):
    PYTHON = "python"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    GO = "go"
    JAVA = "java"
    CSHARP = "csharp"
    KOTLIN = "kotlin"
    RUST = "rust"
    RUBY = "ruby"
    PHP = "php"
    SHELL = "shell"
    CONFIG = "config"  # YAML, TOML, INI, Perl, R, Dockerfile, Makefile: `#` comments
    C_FAMILY = "c-family"  # C, C++, Swift, Scala, Dart, Groovy: `//` comments
    SQL = "sql"  # `--` comments
    OTHER = "other"


EXTENSIONS: dict[str, Language] = {
    ".py": Language.PYTHON,
    ".pyi": Language.PYTHON,
    ".js": Language.JAVASCRIPT,
    ".jsx": Language.JAVASCRIPT,
    ".mjs": Language.JAVASCRIPT,
    ".cjs": Language.JAVASCRIPT,
    ".ts": Language.TYPESCRIPT,
    ".tsx": Language.TYPESCRIPT,
    ".mts": Language.TYPESCRIPT,
    ".cts": Language.TYPESCRIPT,
    ".go": Language.GO,
    ".java": Language.JAVA,
    ".cs": Language.CSHARP,
    ".kt": Language.KOTLIN,
    ".kts": Language.KOTLIN,
    ".rs": Language.RUST,
    ".rb": Language.RUBY,
    ".php": Language.PHP,
    ".sh": Language.SHELL,
    ".bash": Language.SHELL,
    **dict.fromkeys(
        (".yml", ".yaml", ".toml", ".ini", ".cfg", ".conf", ".pl", ".r", ".mk"), Language.CONFIG
    ),
    **dict.fromkeys(
        (".c", ".h", ".cc", ".cpp", ".hpp", ".swift", ".scala", ".dart", ".groovy", ".gradle"),
        Language.C_FAMILY,
    ),
    ".sql": Language.SQL,
}
# Files known by their whole name rather than an extension.
NAMES: dict[str, Language] = {
    **dict.fromkeys(
        ("Dockerfile", "Makefile", "justfile", "Gemfile", "Rakefile", ".gitignore", ".dockerignore"),
        Language.CONFIG,
    ),
    "Jenkinsfile": Language.C_FAMILY,
}

CODE_LANGUAGES = frozenset(
    {
        Language.PYTHON,
        Language.JAVASCRIPT,
        Language.TYPESCRIPT,
        Language.GO,
        Language.JAVA,
        Language.CSHARP,
        Language.KOTLIN,
    }
)
C_LIKE = frozenset(
    {Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO, Language.JAVA, Language.CSHARP, Language.KOTLIN}
)
# Languages the tests lens reads functions of (behaviour.py): the code languages, and Rust, Ruby
# and PHP, which the other lenses read as text by their comment syntax only.
BEHAVIOUR_LANGUAGES = CODE_LANGUAGES | {Language.RUST, Language.RUBY, Language.PHP}
HASH_COMMENT = frozenset({Language.PYTHON, Language.SHELL, Language.CONFIG, Language.RUBY})
SLASH_COMMENT = C_LIKE | {Language.C_FAMILY, Language.RUST, Language.PHP}


# Every lens asks these of every changed file, and the DRY index of every file in the tree: each
# answer computed once (a path object each time was a few percent of a large review).
@functools.lru_cache(maxsize=8192)
def language_of(path: str) -> Language:
    # String operations, not PurePosixPath (the DRY lens asks this of every file in the tree):
    # the suffix as PurePosixPath gives it, from the last dot that neither starts nor ends the name.
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""
    return NAMES.get(name) or EXTENSIONS.get(suffix.lower(), Language.OTHER)


# Test files by each language's convention (pytest, go test, Jest/Vitest, JUnit/Maven, RSpec,
# minitest, PHPUnit; Rust's integration tests live in `tests/`, its unit tests in the file itself).
# Type tests are tests: tsd's `test-d/`, pytest-mypy-plugins' `typesafety/`, `type_tests/`.
_TEST_DIRECTORIES = frozenset(
    {"test", "tests", "spec", "specs", "__tests__", "testing", "testdata", "fixtures", "__fixtures__", "e2e",
     "test-d", "typesafety", "type_tests", "type-tests", "typetests", "typing_tests"}
)
# `*.test-d.ts` / `*.spec-d.ts`: type tests tsd and `vitest --typecheck` check, never run.
# `*.feature`: Gherkin scenarios (Cucumber, Behave), acceptance tests in any language.
_TEST_NAME = LazyPattern(
    r"(?:^test_.*\.py$|.*_test\.py$|^conftest\.py$|.*_test\.go$|.*\.(?:test|spec)(?:-d)?\.[cm]?[jt]sx?$"
    r"|.*(?:Test|Tests|IT|Spec)\.(?:java|kt|cs|php)$|.*_spec\.rb$|^test_.*\.rb$|.*_test\.rb$|.*\.feature$)"
)
FIXTURE_DIRECTORIES = frozenset({"fixtures", "__fixtures__", "testdata", "test-data", "test_data"})


# Translations: one file per language, each the same code around other messages by design. A new
# locale copies its siblings' shape and brings no behaviour of its own (zod's locales/, Django's
# locale/, i18n/ and l10n/ bundles).
TRANSLATION_DIRECTORIES = frozenset({"locales", "locale", "i18n", "l10n", "translations"})


# Files that hold configuration or wiring, not behaviour a unit test would pin down; a copy of
# one (a second vitest config) is a variant by design.
_CONFIGURATION = LazyPattern(r"(?:^setup\.py$|^conftest\.py$|^noxfile\.py$|\.config\.[cm]?[jt]s$|\.d\.ts$)")
# Code that ships to no user: scripts, benchmarks, examples (`docs_src/`: the example programs a
# documentation site includes, one variant per Python version or style on purpose). Tests are
# told by is_test_file.
SUPPORT_DIRECTORIES = frozenset({"scripts", "examples", "example", "bench", "benchmark", "benchmarks", "docs_src"})


def is_configuration_file(path: str) -> bool:
    return bool(_CONFIGURATION.search(PurePosixPath(path).name))


def is_support_code(path: str) -> bool:
    """Tests, scripts, benchmarks and examples: a swallowed failure there hides nothing from users."""
    return is_test_file(path) or any(part in SUPPORT_DIRECTORIES for part in PurePosixPath(path).parts[:-1])


def is_translation_file(path: str) -> bool:
    return any(part in TRANSLATION_DIRECTORIES for part in path.split("/")[:-1])


# A .NET solution names each project's directory after it: `Acme.Tests/`, `Acme.UnitTests/`,
# `Acme.Tests.Benchmarks/` hold test projects (by the last words, `Tests` or `Specs`, of any of
# the name's dotted parts after the first).
_DOTNET_TEST_PROJECT = LazyPattern(r"[^/]+\.(?:[\w.]*\.)?(?:[A-Za-z]*(?:Tests?|Specs?)|tests?|specs?)(?:\.[\w.]+)?")


@functools.lru_cache(maxsize=8192)
def is_test_file(path: str) -> bool:
    parts = path.split("/")  # paths from git: no empty or `.` parts to normalize
    return bool(_TEST_NAME.match(parts[-1])) or any(
        part in _TEST_DIRECTORIES or ("." in part and _DOTNET_TEST_PROJECT.fullmatch(part)) for part in parts[:-1]
    )


# A Rust unit test is written in the file it tests: `#[test]`, `#[tokio::test]`, `#[cfg(test)]`.
_RUST_TEST_ATTRIBUTE = LazyPattern(r"#\[\s*(?:cfg\s*\(\s*test\s*\)|(?:\w+::)*test\s*(?:\(.*\))?\s*)\]")


def adds_inline_tests(change: FileChange) -> bool:
    """A Rust file the change adds a test function or test module to."""
    return language_of(change.path) is Language.RUST and any(
        _RUST_TEST_ATTRIBUTE.search(line) for line in change.added_lines().values()
    )


def is_test_input(request: ReviewRequest, path: str) -> bool:
    """A file outside the usual test places that the repository's own tooling, at the target side,
    runs or type-checks as a test (freeze/tooling.py: pytest's testpaths, a type checker's extra
    directories, the test script's TypeScript project): a test, not product code."""
    patterns = request.target.test_inputs
    if not patterns:
        return False
    plain = _plain_paths(patterns)
    if plain is not None:  # the usual case, asked of every file in the tree: no pattern engine
        return path.startswith(plain[0]) or path in plain[1]
    from reviewgate.freeze.exclusions import matches  # gitignore semantics, loaded only with globs

    return matches(patterns, path)


@functools.lru_cache(maxsize=8)
def _plain_paths(patterns: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """Anchored patterns without wildcards (`/typing_examples`, `/checks/types.py`) as directory
    prefixes and whole paths, as gitignore matches them; None when any pattern is a glob."""
    if any(char in pattern for pattern in patterns for char in "*?[!\\") or not all(
        pattern.startswith("/") for pattern in patterns
    ):
        return None
    return tuple(f"{pattern[1:]}/" for pattern in patterns), frozenset(pattern[1:] for pattern in patterns)


def is_stub_file(path: str) -> bool:
    """A Python type stub (`*.pyi`): signatures for the type checker, no behaviour of its own."""
    return path.endswith(".pyi")


def is_fixture_file(path: str) -> bool:
    return any(part in FIXTURE_DIRECTORIES for part in PurePosixPath(path).parts[:-1])


def is_test_data(path: str) -> bool:
    """A fixture: a file in a fixture directory, or a data file (not code) among the tests.
    Key-shaped strings and suppression markers there are what the tests are about."""
    language = language_of(path)
    return is_fixture_file(path) or (
        is_test_file(path) and language not in CODE_LANGUAGES and language is not Language.SHELL
    )


def is_ci_or_script(path: str) -> bool:
    """Where `|| true` and `set +e` hide a failed step: shell scripts and CI definitions."""
    pure = PurePosixPath(path)
    return (
        language_of(path) is Language.SHELL
        or path.startswith((".github/workflows/", ".ci/", "ci/", "scripts/", ".circleci/"))
        or pure.name in {".gitlab-ci.yml", "Makefile", "Dockerfile", "Jenkinsfile", "justfile"}
    )


def reviewable_changes(request: ReviewRequest) -> Iterator[FileChange]:
    """Text files the change adds lines to."""
    for change in request.target.files:
        if change.status is ChangeStatus.DELETED or change.is_binary or change.is_submodule:
            continue
        if change.added_line_count():
            yield change


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a while: `ast.parse` allocates a node per token, and
    the collector walks them again and again as they pile up (2-5x the parse time on a large
    file). Syntax trees form no cycles worth collecting."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@functools.lru_cache(maxsize=64)
def _parse(source: str, path: str) -> ast.Module | None:
    with collector_paused():
        try:
            tree = ast.parse(source, filename=path)
        except UNPARSABLE:
            return None
        # Out of the collector's sight for good: a tree outlives the parse (the lenses, the tests
        # lens's function shapes), and every full collection after would walk all its nodes again
        # (a fifth of a 100,000-line review on 3.11). A frozen object is still freed when its last
        # reference goes; a tree holds no cycles for the collector to find.
        gc.freeze()
        return tree


def parse_python(source: str, path: str) -> ast.Module | None:
    """A file's syntax tree, parsed once for every lens that reads the same text; None when it
    does not parse."""
    return _parse(source, path)


def only_inserts(change: FileChange) -> bool:
    """A change of an existing file that adds lines and removes none. Told from the counts, not the
    parsed hunks: an object per diff line of every appended file was 47-56 MB at Django +304k."""
    return change.status is not ChangeStatus.ADDED and change.stats.removed_lines == 0 and change.added_line_count() > 0


# The touched statements' trees (python_statements.touched_module) by path, with the text they were
# parsed from, until the file is done (forget_parsed_trees).
_touched: dict[str, tuple[str, TouchedModule | None]] = {}


def touched_python(change: FileChange, source: str) -> TouchedModule | None:
    """The tree of only the top-level statements `change` adds, when it adds whole top-level
    statements to an existing file and edits none (python_statements); None otherwise."""
    if not only_inserts(change):
        return None
    held = _touched.get(change.path)
    if held is not None and held[0] == source:
        return held[1]
    from reviewgate.reviewers.builtin.languages.python_statements import touched_module  # a Python change's

    with collector_paused():
        module = touched_module(source, change.path, change.added_lines())
        gc.freeze()  # as `_parse`'s trees: out of the collector's sight for good
    _touched[change.path] = (source, module)
    return module


def parse_python_touched(change: FileChange, source: str) -> ast.Module | None:
    """The syntax tree of `source` (the file at head) that a lens reads when it reports only what
    spans an added line (and asks `parse_python` for the whole module before it looks anywhere
    else): the touched statements alone where the change adds whole top-level statements to an
    existing file (the rest parsed was half of Django +104k appended's parse), else the whole
    module. None when it does not parse."""
    touched = touched_python(change, source)
    return touched.tree if touched is not None else _parse(source, change.path)


def forget_parsed_trees() -> None:
    """Drop the cached syntax trees: called when a file is done, so a change's trees are not all
    held at once, and their grouped walks (the tests lens's function shapes keep the walks they
    count from)."""
    _parse.cache_clear()
    _touched.clear()
    walk_of.cache_clear()


# The files whose syntax tree went over its budget in this process (syntax_tree.parse) since
# `take_given_up` was last asked: the builtin reviewer's notes name them (a forked worker's are
# sent back with its findings).
_given_up_paths: list[str] = []


def note_given_up(path: str) -> None:
    """A file whose parse was given up here."""
    _given_up_paths.append(path)


def record_given_up(paths: Iterable[str]) -> None:
    """Files given up in another process (a forked worker), to be taken with this one's."""
    _given_up_paths.extend(paths)


def take_given_up() -> list[str]:
    """The files given up since the last call, in order, each once."""
    taken = list(dict.fromkeys(_given_up_paths))
    _given_up_paths.clear()
    return taken


# Fields that hold only operator and context nodes (`Load()`, `Add()`, `Eq()`): a third of a
# tree's nodes, which no lens asks for, so the walk leaves them out.
_UNWALKED_FIELDS = frozenset({"ctx", "op", "ops"})
# The grammar's types whose values are never nodes (`Name(identifier id, expr_context ctx)`).
_SCALAR_TYPES = frozenset({"identifier", "string", "constant", "int"})
_SIGNATURE = LazyPattern(r"\w+\((?P<fields>.*)\)")
# How the walk reads each field of a node class, in field order: a node or None (`expr? returns`),
# a list of nodes, some None (`expr* keys` of `{**rest}`), or unknown (tested value by value).
_NODE, _NODES, _UNKNOWN = 0, 1, 2
_walk_plans: dict[type[ast.AST], tuple[tuple[str, int], ...]] = {}


def _walk_plan(kind: type[ast.AST]) -> tuple[tuple[str, int], ...]:
    """The fields of `kind` that may hold nodes, read from its grammar line (the class's
    docstring, `FunctionDef(identifier name, arguments args, stmt* body, ...)`): the walk then
    neither reads a name's or a constant's fields nor tests each value it reads for a node."""
    fields = [name for name in kind._fields if name not in _UNWALKED_FIELDS]
    signature = _SIGNATURE.fullmatch((kind.__doc__ or "").strip())
    declared: dict[str, str] = {}  # field name -> its type (`stmt*`, `expr?`, `identifier`)
    for part in signature["fields"].split(", ") if signature else ():
        declared_type, _space, field = part.partition(" ")
        declared[field] = declared_type
    plan = []
    for name in fields:
        declared_type = declared.get(name)
        if declared_type is None:
            plan.append((name, _UNKNOWN))
        elif declared_type.rstrip("*?") not in _SCALAR_TYPES:
            plan.append((name, _NODES if declared_type.endswith("*") else _NODE))
    return tuple(plan)


@functools.cache
def compiled_walk() -> Callable[..., dict[type[ast.AST], tuple[ast.AST, ...]] | None] | None:
    """`Walk`'s grouping compiled (_walk.c: 0.2 s where this loop took 0.5 s over Django +304k
    appended's trees), where a C compiler built it; loaded by the first walk (a change with no
    Python file never needs it)."""
    try:
        from reviewgate.reviewers.builtin._walk import grouped_nodes
    except ImportError:
        return None
    return grouped_nodes


@functools.cache
def compiled_walk_plans() -> dict[type[ast.AST], tuple[tuple[str, int], ...]]:
    """The classes the compiled walk reads, each with its plan: those the `ast` module defines
    (what ast.parse makes) whose every field a node lacks reads as None, as the walk reads it from
    the node's own dictionary: no class in their order defines a field's name as anything but None
    (the deprecated `Num.n` and `Str.s` are properties), nor a truth of its own. A tree holding
    any other is walked by the Python path."""
    known: dict[type[ast.AST], tuple[tuple[str, int], ...]] = {}
    pending: list[type[ast.AST]] = [ast.AST]
    while pending:
        kind = pending.pop()
        pending += kind.__subclasses__()
        if kind.__module__ != "ast" or hasattr(kind, "__bool__") or hasattr(kind, "__len__"):
            continue
        plan = _walk_plan(kind)
        if all(vars(base).get(name) is None for name, _reading in plan for base in kind.__mro__):
            known[kind] = plan
    return known


class Walk:
    """A tree's nodes grouped by their exact class, in `ast.walk`'s breadth-first order, operator
    and context nodes left out. Several lenses and the tests lens's function counts look for
    different kinds in the same tree: it is walked once (the walk is most of their time on a
    large change). Grouping by exact class is what `isinstance` means for the concrete node
    classes `ast.parse` makes (none of them subclasses another)."""

    def __init__(self, tree: ast.AST) -> None:
        grouped_nodes = compiled_walk()
        grouped = None if grouped_nodes is None else grouped_nodes(tree, compiled_walk_plans())
        if grouped is not None:  # None: a tree holding what ast.parse never makes, walked here
            self._grouped = grouped
            return
        # Per node class met: how to read its fields, and the list its nodes go to.
        met: dict[type[ast.AST], tuple[tuple[tuple[str, int], ...], list[ast.AST]]] = {}
        queue: list[ast.AST] = [tree]
        append, extend, node_type = queue.append, queue.extend, ast.AST
        for node in queue:  # the list grows while it is read: a queue that is never popped
            kind = type(node)
            entry = met.get(kind)
            if entry is None:
                plan = _walk_plans.get(kind)
                if plan is None:
                    plan = _walk_plans[kind] = _walk_plan(kind)
                entry = met[kind] = (plan, [])
            plan, same = entry
            same.append(node)
            for name, reading in plan:
                value = getattr(node, name, None)
                if reading == _NODES:
                    if value:
                        extend(filter(None, value))  # a node is always true; a list's holes are None
                elif reading == _NODE:
                    if value is not None:
                        append(value)
                elif value.__class__ is list:
                    extend([item for item in value if isinstance(item, node_type)])
                elif isinstance(value, node_type):
                    append(value)
        self._grouped = {kind: tuple(nodes) for kind, (_plan, nodes) in met.items()}

    def of(self, kind: type[NodeT]) -> tuple[NodeT, ...]:
        """The nodes of one kind (not an operator or a context), in `ast.walk` order."""
        return cast("tuple[NodeT, ...]", self._grouped.get(kind, ()))


@functools.lru_cache(maxsize=64)
def walk_of(tree: ast.Module) -> Walk:
    """The tree's grouped walk, made once for all the lenses reading the same tree; whoever keeps
    the tree for later (the tests lens's function counts) keeps its walk too."""
    return Walk(tree)


def nodes_of(tree: ast.Module, kind: type[NodeT]) -> tuple[NodeT, ...]:
    """The nodes of one kind in the tree, in `ast.walk` order (see `Walk`)."""
    return walk_of(tree).of(kind)


class AddedSpans:
    """Whether a span of lines holds an added line, asked of many nodes of one file: a bisection
    of the sorted numbers, not a look-up of every line of the span."""

    def __init__(self, added: Collection[int]) -> None:
        self._numbers = sorted(added)

    def touched(self, first: int, last: int) -> bool:
        """Whether an added line lies in `first..last`."""
        index = bisect.bisect_left(self._numbers, first)
        return index < len(self._numbers) and self._numbers[index] <= last

    def count(self, first: int, last: int) -> int:
        """How many added lines lie in `first..last`."""
        return bisect.bisect_right(self._numbers, last) - bisect.bisect_left(self._numbers, first)


# What may stand for the `*` of a `/*` that cannot open a comment (`defused_comment_openers`): the
# first of these the text lacks, then of the private-use code points, then a lone surrogate, which
# no text read from a file holds (decode_text replaces what is not UTF-8).
_STAND_INS = "\x00\x02\x03"
_PRIVATE_USE = range(0xE000, 0xF900)


def defused_comment_openers(text: str) -> tuple[str, str | None]:
    """`text` with the `*` of every `/*` that begins after the last `*/` replaced by a character
    the text lacks (returned; None when nothing was replaced). No such opener can start a block
    comment, yet the pattern tries each to the end of the text before passing on: a file of them
    cost the square of its length (30 KB of `/*` lines, 4 s; 900 KB, hours). Replaced, a pattern
    whose only use of `*` is its block comments finds the same matches at the same offsets (one
    character for one): the stand-in, like `*`, is plain text inside a string, a line comment or
    an escape, and a `/` before it starts nothing, as before a `*` that no `*/` follows. Read
    what a match holds from the original text, or put `*` back with `str.replace`."""
    last_closer = text.rfind("*/")
    first = text.find("/*", last_closer + 1)
    if first == -1:
        return text, None
    candidates = chain(_STAND_INS, map(chr, _PRIVATE_USE), "\ud800")
    stand_in = next((character for character in candidates if character not in text), None)
    if stand_in is None:
        return text, None  # a text made to hold every stand-in: searched as it is
    return text[:first] + text[first:].replace("/*", "/" + stand_in), stand_in


class Comment(NamedTuple):
    """The text of a comment on one line, without its marker."""

    line: int
    text: str
    whole_line: bool  # nothing but the comment on that line


_QUOTES = LazyPattern(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`")


def _outside_strings(line: str, marker: str) -> int:
    """Where `marker` starts outside a string literal on this line, or -1."""
    if marker not in line:
        return -1  # blanking only puts spaces where strings were: no marker appears (most lines)
    blanked = _QUOTES.sub(lambda match: " " * len(match.group(0)), line)
    index = blanked.find(marker)
    while marker == "//" and index > 0 and blanked[index - 1] == ":":  # a URL, not a comment
        index = blanked.find(marker, index + 2)
    return index


def _line_comment(line_number: int, text: str, marker: str) -> Comment | None:
    """The comment that `marker` opens outside string literals, and whether it is alone on the line."""
    index = _outside_strings(text, marker)
    if index < 0:
        return None
    body = text[index + len(marker) :].strip()
    if marker == "//":
        body = body.removeprefix("/").strip()  # `/// doc comment`
    return Comment(line_number, body, not text[:index].strip())


def comment_on(line_number: int, text: str, language: Language) -> Comment | None:
    """The comment on a source line, for the languages whose comment syntax we know."""
    stripped = text.strip()
    if language in HASH_COMMENT:
        return None if stripped.startswith("#!") else _line_comment(line_number, text, "#")
    if language is Language.SQL:
        return _line_comment(line_number, text, "--")
    if language in SLASH_COMMENT:
        if stripped.startswith(("/*", "*")) and not stripped.startswith("*/"):
            body = stripped.lstrip("/*").removesuffix("*/").strip()
            return Comment(line_number, body, True)
        return _line_comment(line_number, text, "//")
    return None


# The text a line needs for `comment_on` to find a comment in the languages with one line marker:
# tested on every added line first (a C-level `in`), so most lines never reach comment_on.
_COMMENT_MARKERS = {**dict.fromkeys(HASH_COMMENT, "#"), Language.SQL: "--"}


def added_comments(change: FileChange) -> list[Comment]:
    language = language_of(change.path)
    found = []
    marker = _COMMENT_MARKERS.get(language)
    added = change.added_lines()
    numbers = sorted(added if marker is None else [number for number, text in added.items() if marker in text])
    for number in numbers:
        text = added[number]
        comment = comment_on(number, text, language)
        if comment is not None and comment.text:
            found.append(comment)
    return found


def lens_finding(
    *,
    rule: str,
    category: str,
    finding_class: FindingClass,
    severity: Severity,
    title: str,
    body: str,
    path: str | None,
    line: int | None = None,
    end_line: int | None = None,
    code: str = "",
    stable_title: str | None = None,
    demoted: str | None = None,
) -> Finding:
    """A builtin finding; `code` (the line it is about) stands in for the line number in the id.
    `stable_title` replaces a title that names other lines when the id is computed. `demoted` says
    why the lens reports it at minor as intended or written earlier (findings.DEMOTED)."""
    return Finding(
        id=make_finding_id(SOURCE, path, category, f"{rule} {stable_title or title}", code),
        finding_class=finding_class,
        severity=severity,
        category=category,
        rule=rule,
        title=title,
        body=body,
        source=SOURCE,
        path=path,
        line=line,
        end_line=end_line,
        extra={DEMOTED: demoted} if demoted else {},
    )
