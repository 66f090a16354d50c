"""An API newer than the oldest runtime the project declares (Node from `package.json`'s
`engines.node`, Python from `pyproject.toml`'s `requires-python` or setup.cfg's or setup.py's
`python_requires`, Go from `go.mod`'s `go` line),
read on the target side (target_manifest.py): global `fetch` under `"node": ">=16"`,
`str.removeprefix` under `requires-python = ">=3.8"`, the `slices` package under `go 1.19`. On that
oldest runtime the line fails (a `ReferenceError`, an `ImportError`, an `AttributeError`, a build
error) where the tests, run on a newer one, passed.

A small table of well-known APIs with the release that brought them, per language. Not reported:
a use guarded by a version check (`if sys.version_info >= ...`) or an import fallback (`try:
import tomllib` / `except ImportError`), a `fetch` the file imports (`node-fetch`, `undici`) or
defines, browser code (a `.jsx`/`.tsx` file, or one that reads `window` or `document`), where
`engines.node` does not say what runs it.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import bug_finding, changed_sources, code_line, matched, mentions
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.runtime_apis import (
    ATTRIBUTE_LEAVES,
    CALL_LEAVES,
    GO_CALLS,
    GO_NEEDLES,
    GO_PACKAGES,
    JS_REGEX_LITERAL,
    NODE_APIS,
    NODE_NEEDLES,
    PYTHON_NEEDLES,
)
from reviewgate.reviewers.builtin.lenses.runtime_python_uses import (
    MATCH_AND_TRY_STAR,
    builtin_names,
    python_use_or_try_star,
    python_uses,
)
from reviewgate.reviewers.builtin.python_parsing import parse_python, parse_python_touched
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

API_NEWER_THAN_RUNTIME = Rule(
    id="correctness/api-newer-than-runtime",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="API newer than the oldest runtime the project declares",
    full=(
        "An API that arrived in a later release than the oldest one the project declares it supports "
        "(`engines.node` in package.json, `requires-python` in pyproject.toml or `python_requires` in setup.cfg "
        "or setup.py, read on the target branch): "
        "on that release the line fails while tests on a newer one pass. Raise the declared minimum in its "
        "own change, guard the use, or use what the oldest release has."
    ),
    tags=("correctness", "reliability", "compatibility"),
    precision="medium",
    fires_on=(
        "JS/TS (not `.jsx`/`.tsx` or code that reads `window`/`document`): the global `fetch` (18), "
        "`structuredClone` (17), `AbortSignal.timeout` (17.3), `AbortSignal.any` (20.3, and 18.17 on Node 18), `Object.hasOwn` "
        "(16.9), `.at(-n)` (16.6), `findLast` (18), `toSorted`/`toReversed`/`toSpliced` (20), "
        "`Object.groupBy` (21), `Promise.withResolvers` and `Array.fromAsync` (22), `replaceAll` and "
        "`Promise.any` and logical assignment (15), `crypto.randomUUID` (14.17), `import.meta.dirname` "
        "(20.11), `process.loadEnvFile` (20.12), `node:test` (18), under an older `engines.node` of the "
        "nearest package.json; Python: `tomllib`, `datetime.UTC`, `asyncio.TaskGroup`/`timeout`, "
        "`enum.StrEnum`, `typing.Self`, `ExceptionGroup`, `except*` (3.11), `itertools.batched`, "
        "`typing.override` (3.12), `itertools.pairwise`, `zip(strict=)`, `dataclass(slots=)`, `match` "
        "(3.10), `str.removeprefix`, `functools.cache`, `zoneinfo`, `graphlib` (3.9) … under an older "
        "`requires-python` (or Poetry's `python`) of the nearest pyproject.toml, else the `python_requires` of "
        "setup.cfg or setup.py. Both read at the merge "
        "base: the branch's own manifest is not trusted"
    ),
    not_on=(
        "no manifest or no lower bound on the target side; a use inside `if sys.version_info >= …`, in a "
        "function or class whose decorator tests the version (`@pytest.mark.skipif(sys.version_info < …)`) or in a "
        "`try` whose handler catches `ImportError`/`AttributeError`; a `fetch` the file imports "
        "(`node-fetch`, `undici` …), defines or takes as a destructured parameter; a class's own `fetch` method where "
        "it is defined; declaration files (`.d.ts`); a regular expression literal's text; browser code; a Python file that ruff's "
        "`[tool.ruff.per-file-target-version]` declares newer"
    ),
    fires=(
        Example(
            file=File("src/client.js", "javascript", """\
export async function load(url) {
  const response = await fetch(url);
  return response.json();
}
"""),
            caption="The target branch's package.json declares Node 16, which has no global `fetch`.",
            base=(File("package.json", "json", '{"engines": {"node": ">=16.0.0"}}\n'),),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/settings.py", "python", """\
try:
    import tomllib
except ImportError:
    import tomli as tomllib
"""),
            caption="An import fallback: Python 3.8 takes the second branch.",
            base=(File("pyproject.toml", "toml", '[project]\nname = "shop"\nrequires-python = ">=3.8"\n'),),
        ),
    ),
    by_record=True,
    record=Record(
        findings=3,
        holding=2,
        where=(
            "the whole trees of the tuning half's 26 projects and of 153 PyPI and npm packages: 25, 30 more where "
            "JWTs are decoded, cookies written or a runtime floor declared (2026-12-06), and 98 more that wrap "
            "errors, compile regular expressions or declare a floor (2026-12-07: kafkajs, bullmq, tedious, "
            "mongodb, typeorm, @nestjs/core, openai, postgres, anyio, attrs, starlette …); each tree's "
            "package.json, pyproject.toml, setup.cfg, setup.py and go.mod at the base: 3, 2 **hold**: celery "
            "`examples/quorum-queues/myapp.py:26`, `from datetime import UTC` under setup.py's `>=3.10` (the "
            "example fails on 3.10); hono `utils/jwt/jwt.js:95`, the global `fetch` under `engines.node` "
            "`>=16.9.0` (verifying with a JWKS URL throws on Node 16). Does not: webpack "
            "`ImportScriptsChunkLoadingRuntimeModule.js:240`, a `fetch` in browser code a template string "
            "generates (a template nested in an interpolation ends the string early for the JS reader). Not one "
            "since: a use in a test under `@pytest.mark.skipif(sys.version_info < (3, 11))` (celery), a `fetch` "
            "destructured in a for-of (webpack `HttpUriPlugin.js:953`), a class's own `fetch` method where it is "
            "defined (kafkajs `runner.js:341`, `consumerGroup.js:446`, bullmq `async-fifo-queue.js:149`), a "
            "`fetch` parameter (kafkajs `fetcher.js:55`, `fetchManager.js:57`), declaration files (kafkajs "
            "`types/index.d.ts:673`, bullmq `async-fifo-queue.d.ts:79`), `AbortSignal.any` under `>=18.17`, which "
            "has it by a backport (tedious `connection.js:1095`, `instance-lookup.js:49`), files ruff's "
            "per-file-target-version declares newer (anyio's `docs/snippets/**` 13, attrs' "
            "`tests/test_pattern_matching.py` 6), `||=`, `??=` and `fetch(` inside a regular expression literal "
            "(Prism `prism-javascript.js:49`, `prism-bicep.js:73`, `prism-nix.js:31` and three more)"
        ),
    ),
)

RULES = (API_NEWER_THAN_RUNTIME,)
RULE_API_NEWER_THAN_RUNTIME = API_NEWER_THAN_RUNTIME.id

if TYPE_CHECKING:
    from reviewgate.freeze.diff import FileChange
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource
    from reviewgate.reviewers.builtin.lenses.target_manifest import Version

_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO})

_GO_IMPORT = LazyPattern(r'"(?P<package>[a-z0-9/]+)"')
# Imports that bring their own `fetch`, a `fetch` the file binds itself (declared, destructured,
# `for (const { fetch } of clients)`, a destructured parameter `({ nodeId, fetch }) =>`), and code
# that runs in a browser.
_FETCH_IMPORTED = LazyPattern(
    r"""['"](?:node-fetch|undici|cross-fetch|isomorphic-fetch|whatwg-fetch|make-fetch-happen)['"]"""
    r"|(?:function|const|let|var)\s+fetch\b|\{[^}]*\bfetch\b[^}]*\}\s*(?:=|of\b|\)\s*(?:=>|\{))"
    r"|import\s*\{[^}]*\bfetch\b"
)
# A method of that name defined, not called: `async fetch(nodeId) {`, `fetch(): Promise<T> {`.
_METHOD_DEFINED = LazyPattern(r"(?:^|[;{}])\s*(?:(?:async|static|public|private|protected|override)\s+|\*\s*)*$")
_BROWSER = LazyPattern(r"(?<![\w$.])(?:window|document|navigator|localStorage)\s*\.|['\"]use client['\"]")


@functools.cache
def _node_patterns() -> tuple[tuple[str, re.Pattern[str], Version], ...]:
    return tuple((what, re.compile(pattern), version) for what, pattern, version in NODE_APIS)


def _finding(path: str, text: str, line: int, what: str, arrived: str, manifest: str, declared: str,
             lowest: Version, runtime: str, failure: str) -> Finding:
    from reviewgate.reviewers.builtin.lenses.target_manifest import shown

    code = code_line(text, line)
    return bug_finding(
        rule=RULE_API_NEWER_THAN_RUNTIME,
        category="compatibility",
        title=f"{what[0].upper()}{what[1:]} needs {runtime} {arrived}, newer than the declared minimum",
        body=(
            f"{matched(code)}: {what} arrived in {runtime} {arrived}, but `{manifest}` on the target branch declares "
            f"`{declared}`, which allows {runtime} {shown(lowest)}: there this line fails ({failure}), while tests "
            f"run on a newer {runtime} pass. Raise the declared minimum in its own change, guard the use with a "
            "version check or a fallback, or use what the oldest supported release has."
        ),
        path=path,
        line=line,
        code=code,
    )


class RuntimeMinimumLens:
    rule = RULE_API_NEWER_THAN_RUNTIME

    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        needles = (*NODE_NEEDLES, *PYTHON_NEEDLES, *GO_NEEDLES)
        # A Python file is asked first for the newest use on an added line (its touched statements,
        # whose grouped walk the other lenses share): most have none, and searching their text for
        # each needle they lack cost more. The manifest reader loads for a file that gets that far.
        for change, language, text in changed_sources(request, _LANGUAGES, None):
            added = change.added_lines()
            if language is Language.PYTHON:
                newest = _newest_python_use(change, text, added)
                if newest is not None and mentions(text, needles):
                    from reviewgate.reviewers.builtin.lenses.target_manifest import python_minimum

                    declared = python_minimum(request, change.path)
                    if declared is not None and declared[2] < newest:
                        yield from _python(text, change.path, added, *declared)
            elif mentions(text, needles):
                yield from _other_language(request, change.path, language, text, added)


def _other_language(
    request: ReviewRequest, path: str, language: Language, text: str, added: dict[int, str]
) -> Iterator[Finding]:
    """Go against its `go.mod`, JavaScript and TypeScript (not browser code) against `engines.node`."""
    from reviewgate.reviewers.builtin.lenses.target_manifest import go_minimum, node_minimum

    if language is Language.GO:
        found = go_minimum(request, path)
        if found is not None:
            yield from _go(text, path, added, *found)
    elif not path.endswith((".jsx", ".tsx", ".d.ts", ".d.mts", ".d.cts")) and not _BROWSER.search(text):
        declared = node_minimum(request, path)
        if declared is not None:
            yield from _node(text, path, added, *declared)


def _node(text: str, path: str, added: dict[int, str], manifest: str, declared: str,
          lowest: Version) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    source = read_js(text)
    masked = source.masked
    if "/" in masked:  # a regular expression literal's text is what it matches, not code
        masked = re.sub(JS_REGEX_LITERAL, lambda found: " " * len(found.group(0)), masked, flags=re.MULTILINE)
    uses: list[tuple[int, str, Version]] = []
    for what, pattern, arrived in _node_patterns():
        if "fetch" in what and _FETCH_IMPORTED.search(text):
            continue
        uses += [(match.start(), what, arrived)
                 for match in pattern.finditer(masked if "node:test" not in what else text)
                 if masked[match.start()] == text[match.start()] and not _defined(source, match, what)]
    yield from _report(source, path, added, uses, (manifest, declared, lowest), "Node",
                       "a `TypeError` or `ReferenceError`, or a syntax error")


def _defined(source: JsSource, match: re.Match[str], what: str) -> bool:
    """A class's own `fetch` method where it is defined (kafkajs `runner.js`): a definition starts its
    statement, after modifiers only, and its parameters are followed by its body or return type."""
    if "fetch" not in what:
        return False
    closer = source.pairs.get(match.end() - 1)
    line_start = source.masked.rfind("\n", 0, match.start()) + 1
    return (closer is not None and source.masked[closer + 1 :].lstrip()[:1] in ("{", ":")
            and _METHOD_DEFINED.search(source.masked[line_start : match.start()]) is not None)


def _go(text: str, path: str, added: dict[int, str], manifest: str, declared: str,
        lowest: Version) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    source = read_js(text)
    masked = source.masked
    uses: list[tuple[int, str, Version]] = []
    for match in _GO_IMPORT.finditer(text):
        version = GO_PACKAGES.get(match.group("package"))
        if version is not None and _in_imports(masked, match.start()):
            uses.append((match.start(), f"the `{match.group('package')}` package", version))
    for what, pattern, version in GO_CALLS:
        uses += [(match.start(), what, version) for match in re.finditer(pattern, masked)]
    yield from _report(source, path, added, uses, (manifest, declared, lowest), "Go",
                       "the build fails with an undefined name or a missing package")


def _report(source: JsSource, path: str, added: dict[int, str], uses: list[tuple[int, str, Version]],
            declared: tuple[str, str, Version], runtime: str, failure: str) -> Iterator[Finding]:
    """A finding for the first use on each added line of an API newer than the declared oldest release."""
    from reviewgate.reviewers.builtin.lenses.target_manifest import shown

    manifest, declared_range, lowest = declared
    reported: set[int] = set()
    for offset, what, arrived in sorted(uses):
        line = source.line_of(offset)
        if lowest >= arrived or line not in added or line in reported:
            continue
        reported.add(line)
        yield _finding(path, source.text, line, what, shown(arrived), manifest, declared_range, lowest, runtime, failure)


def _in_imports(masked: str, offset: int) -> bool:
    """A string at `offset` in the file's `import` declaration(s), not any string that looks like a package."""
    before = masked[:offset]
    last = before.rfind("import")
    return last >= 0 and (
        "\n" not in before[last:].strip() or (before[last:].count("(") > before[last:].count(")"))
    )


# Python ------------------------------------------------------------------------------------------


def _newest_python_use(change: FileChange, text: str, added: dict[int, str]) -> Version | None:
    """The newest release a use on an added line needs, guards aside (None: no use there), asked
    of the statements the change touches (python_parsing.parse_python_touched), which hold every
    use on an added line: the lens parses and walks the whole module, for what it binds and what
    guards each use, only when that release is newer than the declared minimum. The nodes are
    taken by kind from the tree's grouped walk, which the other lenses share, where walking the
    whole module node by node was two fifths of a large change's per-file stage."""
    tree = parse_python_touched(change, text)
    if tree is None:
        return None
    calls = nodes_of(tree, ast.Call)
    if calls:  # the data-flow module loads for a tree that has a call to look at
        from reviewgate.reviewers.builtin.languages.python_flow import leaf_name

        calls = tuple(node for node in calls if leaf_name(node) in CALL_LEAVES)
    possible = chain(
        nodes_of(tree, ast.Import),
        nodes_of(tree, ast.ImportFrom),
        [node for node in nodes_of(tree, ast.Attribute) if node.attr in ATTRIBUTE_LEAVES],
        builtin_names(tree, text),
        calls,
        *(nodes_of(tree, kind) for kind in MATCH_AND_TRY_STAR),
    )
    return max(
        (
            arrived
            for node in possible
            if getattr(node, "lineno", 0) in added
            for _node, _what, arrived in python_use_or_try_star(node)
        ),
        default=None,
    )


def _python(text: str, path: str, added: dict[int, str], manifest: str, declared: str,
            lowest: Version) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.lenses.target_manifest import shown

    tree = parse_python(text, path)
    if tree is None:
        return
    reported: set[int] = set()
    from reviewgate.reviewers.builtin.languages.python_flow import dotted

    # A built-in name the module binds itself is its backport (`from exceptiongroup import
    # BaseExceptionGroup` under a version check), not the built-in.
    bound = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    } | {dotted(target) for node in ast.walk(tree) if isinstance(node, ast.Assign)
         for target in node.targets if isinstance(target, (ast.Name, ast.Attribute))}
    for node, what, arrived in python_uses(tree):
        line = getattr(node, "lineno", 0)
        if lowest >= arrived or line not in added or line in reported:
            continue
        if isinstance(node, (ast.Name, ast.Attribute)) and dotted(node) in bound:
            continue  # or one it sets itself: `enum.StrEnum = enum.Enum` under a version check
        reported.add(line)
        yield _finding(path, text, line, what, shown(arrived), manifest, declared, lowest, "Python",
                       "an `ImportError`, `AttributeError`, `TypeError` or `SyntaxError`")


# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (RuntimeMinimumLens(),)
