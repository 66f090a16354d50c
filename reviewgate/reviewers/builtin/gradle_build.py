"""What the merge base's Gradle build says of a Java or Kotlin file: test support, or build logic.

Gradle projects a repository builds only for its own tests: a project (a directory with its own
`build.gradle` or `build.gradle.kts`) that the merge base's build scripts depend on, and only for
tests: from a test configuration (`testImplementation(projects.okhttpTestingSupport)`,
`androidTestImplementation(project(":testing"))`) or inside a test source set's block (Kotlin
Multiplatform's `commonTest { dependencies { implementation(...) } }`, `val jvmTest by getting`).
The build scripts of example and documentation projects (path_kinds.py) do not count: they ship
nothing either. A project whose build script publishes it (`maven-publish`, a `...publish...`
plugin) is a library its users get (a mock web server), whatever the build uses it for. Otherwise
its code is test support, like a test source set: its fakes and recording listeners reach no
user, and changing them changes the tests.

So is a file in a project's test source set, `<project>/src/<set>/` with a test set's name: the
Kotlin Multiplatform and Android plugins name a test compilation's sources `<target>Test`
(`commonTest`, `jvmTest`, `androidUnitTest`) or `test<Variant>`, and the test files there need
not be named `*Test.kt` (`ClosedScopeAPI.kt`, `RecordingExecutor.kt`).

Build logic is the code of a build Gradle runs to build the others: an included build
(`includeBuild("build-logic")` in a settings script) or a build's `buildSrc/`. Its plugins and
build actions run on the maintainers' machines and CI; no user gets them (like a build script).

Read at the merge base, like the policy: a branch cannot make its own new code test support.
"""

from __future__ import annotations

import re

from reviewgate.context import ReviewRequest
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.freeze.git import TreeReader
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.language_table import Language, language_of
from reviewgate.reviewers.builtin.path_kinds import by_path
from reviewgate.reviewers.builtin.product_code import PerChange

_BUILD_SCRIPTS = ("build.gradle.kts", "build.gradle")
_SETTINGS = ("settings.gradle.kts", "settings.gradle")
_JVM = frozenset({Language.JAVA, Language.KOTLIN})
# A dependency on a project of the build: Kotlin DSL's type-safe accessor
# (`testImplementation(projects.okhttpTestingSupport)`) or `project(":path")`, in either DSL
# (`testImplementation project(':testing')`). The configuration is the name before it.
_DEPENDENCY = LazyPattern(
    r"(?P<configuration>[\w\"']+)\s*\(?\s*(?:projects\.(?P<accessor>[\w.]+)"
    r"|project\s*\(\s*(?:path\s*[:=]\s*)?[\"'](?P<path>:[^\"']+)[\"'])"
)
_PUBLISHES = LazyPattern(r"publish", re.IGNORECASE)
_INCLUDED_BUILD = LazyPattern(r"includeBuild\s*\(?\s*[\"']([^\"']+)[\"']")
_TEST_CONFIGURATION = LazyPattern(r"test", re.IGNORECASE)
# A name in a block's opening line (`commonTest {`, `val jvmTest by getting {`,
# `getByName("androidUnitTest") {`), not part of a dashed name (`"okhttp-testing-support"`).
_NAME = LazyPattern(r"(?<![\w-])[A-Za-z_]\w*(?![\w-])")
_TEST_NAME = LazyPattern(r"test\w*|\w*Test\w*")
_WORD_BREAK = LazyPattern(r"[-_]+(\w)")


def _accessor(project: str) -> str:
    """Gradle's type-safe accessor of a project (`:okhttp-testing-support` ->
    `okhttpTestingSupport`, `:libs:core` -> `libs.core`)."""
    return ".".join(_WORD_BREAK.sub(lambda match: match.group(1).upper(), part) for part in project.strip(":").split(":"))


def _test_blocks(text: str) -> list[tuple[int, int]]:
    """The spans of the script's blocks whose opening line names a test source set."""
    spans: list[tuple[int, int]] = []
    openers: list[int] = []
    for index, char in enumerate(text):
        if char == "{":
            openers.append(index)
        elif char == "}" and openers:
            start = openers.pop()
            line = text[text.rfind("\n", 0, start) + 1 : start]
            if any(_TEST_NAME.fullmatch(name) for name in _NAME.findall(line)):
                spans.append((start, index))
    return spans


class _Build:
    """The merge base's Gradle build: each project's directory, and the configurations the build
    scripts depend on it from."""

    def __init__(self, base: TreeReader | None) -> None:
        self.base = base
        self.projects: frozenset[str] = frozenset()
        self.configurations: dict[str, set[str]] = {}  # project directory -> configuration names
        self.test_support: dict[str, bool] = {}
        self.built: frozenset[str] = frozenset()
        self.build_logic: frozenset[str] = frozenset()
        if base is None:
            return
        files = base.list_files()
        # Each build's root (the settings script's directory; the repository's or one below it):
        # project paths and accessors are relative to it.
        roots = sorted({path.rpartition("/")[0] for path in files if path.rpartition("/")[2] in _SETTINGS},
                       key=len, reverse=True)
        if not roots:
            return
        base.prefetch([path for path in files if path.rpartition("/")[2] in _SETTINGS])
        included = {
            _joined(root, match.group(1))
            for root in roots
            for name in _SETTINGS
            for match in _INCLUDED_BUILD.finditer(base.read_text(f"{root}/{name}" if root else name) or "")
        }
        self.build_logic = frozenset(included | {_joined(root, "buildSrc") for root in roots})
        scripts = [path for path in files if path.rpartition("/")[2] in _BUILD_SCRIPTS]
        base.prefetch(scripts)
        self.projects = frozenset(
            directory for path in scripts if (directory := path.rpartition("/")[0]) and directory not in roots
        )
        self.built = frozenset(path.rpartition("/")[0] for path in scripts)  # roots with a build script too
        self.published = frozenset(
            path.rpartition("/")[0] for path in scripts if "/" in path and _PUBLISHES.search(base.read_text(path) or "")
        )
        by_root: dict[str, dict[str, str]] = {root: {} for root in roots}  # project path -> directory
        for directory in self.projects:
            root = next((root for root in roots if not root or directory.startswith(f"{root}/")), None)
            if root is not None:
                by_root[root][":" + directory[len(root):].strip("/").replace("/", ":")] = directory
        for script in scripts:
            if by_path(script) is not None:
                continue  # an example's or the documentation's project: it ships nothing either
            root = next((root for root in roots if not root or script.startswith(f"{root}/")), None)
            if root is None:
                continue
            paths = by_root[root]
            accessors = {_accessor(path): directory for path, directory in paths.items()}
            text = base.read_text(script) or ""
            blocks = _test_blocks(text)
            for match in _DEPENDENCY.finditer(text):
                accessor, project = match.group("accessor"), match.group("path")
                depended = accessors.get(accessor) if accessor else paths.get(project or "")
                if depended is not None:
                    inside_test = any(start < match.start() < end for start, end in blocks)
                    configuration = "test" if inside_test else match.group("configuration").strip("\"'")
                    self.configurations.setdefault(depended, set()).add(configuration)

    def project_of(self, path: str) -> str | None:
        directory = path.rpartition("/")[0]
        while directory:
            if directory in self.projects:
                return directory
            directory = directory.rpartition("/")[0]
        return None

    def is_build_logic(self, path: str) -> bool:
        return any(path.startswith(f"{directory}/") for directory in self.build_logic)

    def in_test_source_set(self, path: str) -> bool:
        parts = path.split("/")[:-1]
        return any(
            part == "src" and index + 1 < len(parts) and _TEST_NAME.fullmatch(parts[index + 1]) is not None
            and "/".join(parts[:index]) in self.built
            for index, part in enumerate(parts)
        )

    def is_test_support(self, path: str) -> bool:
        if self.in_test_source_set(path):
            return True
        project = self.project_of(path)
        if project is None or project in self.published:
            return False
        if project not in self.test_support:
            used = self.configurations.get(project, set())
            self.test_support[project] = bool(used) and all(_TEST_CONFIGURATION.search(name) for name in used)
        return self.test_support[project]


def _joined(root: str, relative: str) -> str:
    """`relative` (a settings script's `includeBuild("../x")`) from the build root `root`."""
    parts = root.split("/") if root else []
    for part in relative.strip("/").split("/"):
        if part == "..":
            parts = parts[:-1]
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


# Per change: its build as read at the merge base.
_builds = PerChange(lambda request: _Build(base_reader_for(request.target)))


def _build(request: ReviewRequest) -> _Build:
    return _builds.of(request)


def is_gradle_test_support(request: ReviewRequest, path: str) -> bool:
    """Whether `path` (Java or Kotlin) lies in a Gradle project's test source set, or in a project
    the build uses only for tests."""
    return language_of(path) in _JVM and _build(request).is_test_support(path)


def is_gradle_build_logic(request: ReviewRequest, path: str) -> bool:
    """Whether `path` (Java or Kotlin) lies in an included build or a `buildSrc/`."""
    return language_of(path) in _JVM and _build(request).is_build_logic(path)
