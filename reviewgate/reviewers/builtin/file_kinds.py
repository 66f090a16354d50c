"""What a path is by convention: a test, test data, a fixture, a stub, configuration, support code,
a translation, CI."""

from __future__ import annotations

import functools
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import CODE_LANGUAGES, Language, language_of

# Test files by each language's convention (pytest, go test, Jest/Vitest, JUnit/Maven, RSpec,
# minitest, PHPUnit; Rust's integration tests live in `tests/`, its unit tests in the file itself).
# Type tests are tests: tsd's `test-d/`, pytest-mypy-plugins' `typesafety/`, `type_tests/`.
_TEST_DIRECTORIES = frozenset(
    {"test", "tests", "spec", "specs", "__tests__", "testing", "testdata", "fixtures", "__fixtures__", "e2e",
     "test-d", "typesafety", "type_tests", "type-tests", "typetests", "typing_tests",
     "testsuite", "test_suite", "test-suite"}
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


# Gherkin's step definitions and hooks: Cucumber's `features/step_definitions/` and
# `features/support/`, Behave's `features/steps/`. Only at the top: an application's
# `src/features/` holds its feature modules.
_GHERKIN_STEPS = frozenset({"step_definitions", "steps", "support"})


@functools.lru_cache(maxsize=8192)
def is_test_file(path: str) -> bool:
    parts = path.split("/")  # paths from git: no empty or `.` parts to normalize
    if len(parts) > 2 and parts[0] == "features" and parts[1] in _GHERKIN_STEPS:
        return True
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
