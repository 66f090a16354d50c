"""Findings on the repository's own tooling: scripts under a top-level `tools/`, `scripts/` or
`.github/`, a top-level `bin/` file that package.json's `bin` does not install, and Gradle build
scripts. They build, release, regenerate or run CI for the project; no user runs them, and their inputs are the maintainers'
own (a path the script computes, a version tag). Measured on the development set, every block on
such a file was wrong: `subprocess.run(f"black {path}", shell=True)` in a table generator,
`exec(`echo "tag=${tag}" >> $GITHUB_OUTPUT`)` in a release script, a CI script's new functions
without tests. They are kept at minor, with a note; a committed secret still blocks anywhere.

A Rust package's build script (`build.rs`) is told here too: the tests lens reads it as no product
code (behaviour.py), as it reads no other tooling's code for new behaviour.
"""

from __future__ import annotations

import re

from reviewgate.context import ReviewRequest
from reviewgate.findings import DEMOTED, Finding, Severity
from reviewgate.freeze.freeze import base_reader_for
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.lenses.secrets import RULE_SECRET
from reviewgate.reviewers.builtin.product_code import nearest_cargo_manifest

REPOSITORY_TOOLING = "repository tooling"
_TOOLING_DIRECTORIES = frozenset({"tools", "scripts", ".github"})
_BLOCKING = frozenset({Severity.BLOCKER, Severity.MAJOR})


def is_build_script(path: str) -> bool:
    """A Gradle build script (`build.gradle.kts`, `settings.gradle`, a convention plugin's
    `*.gradle.kts`): Gradle runs it on the maintainers' machines and CI to build the project; no
    user runs it, and one module's script is like its siblings' by design."""
    return path.endswith((".gradle", ".gradle.kts"))


_CARGO_BUILD = LazyPattern(r"^\s*build\s*=\s*(?:\"(?P<path>[^\"]+)\"|(?P<off>false))", re.MULTILINE)


def is_cargo_build_script(request: ReviewRequest, path: str) -> bool:
    """A Rust package's build script, by its Cargo.toml at the merge base: the manifest's `build =
    "..."`, or `build.rs` beside it (Cargo's default, unless `build = false`). Cargo runs it to
    configure the compilation (`cargo:rustc-cfg=...` from the compiler's version); a mistake there
    fails the build on the CI matrix, where such scripts are checked, not a unit test."""
    if not path.endswith(".rs"):
        return False
    base = base_reader_for(request.target)
    if base is None:
        return False
    found = nearest_cargo_manifest(base, path)
    if found is None:
        return False
    directory, manifest = found
    named = _CARGO_BUILD.search(manifest)
    script = "build.rs" if named is None else named.group("path")
    if script is None:
        return False  # `build = false`
    return path == (f"{directory}/{script.removeprefix('./')}" if directory else script.removeprefix("./"))


def is_repository_tooling(request: ReviewRequest, path: str) -> bool:
    if is_build_script(path):
        return True
    top, slash, _ = path.partition("/")
    if not slash:
        return False
    if top in _TOOLING_DIRECTORIES:
        return True
    return top == "bin" and path not in request.target.shipped_programs


def mark_repository_tooling(request: ReviewRequest, findings: list[Finding]) -> list[Finding]:
    """The findings, those that would block on the repository's own tooling made minor with a note."""
    return [
        finding.with_changes(
            severity=Severity.MINOR,
            body=finding.body + f"\n\nReported at minor: `{finding.path}` is the repository's own tooling "
            "(a Gradle build script, a top-level tools/, scripts/, .github/ or uninstalled bin/ file), "
            "not code its users run.",
            extra={**finding.extra, DEMOTED: REPOSITORY_TOOLING},
        )
        if finding.severity in _BLOCKING
        and finding.rule != RULE_SECRET
        and finding.path is not None
        and is_repository_tooling(request, finding.path)
        else finding
        for finding in findings
    ]
