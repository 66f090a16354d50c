"""A Gradle build script is the repository's own tooling: a finding that would block on it (a new
module's script like its sibling's) is kept at minor, while the same finding on product code blocks."""

from __future__ import annotations

from pathlib import Path

from reviewgate.findings import FindingClass, Severity
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.repository_tooling import mark_repository_tooling
from testing.lenses import review_request
from testing.repo import make_repo

_BUILD = "plugins {\n    kotlin(\"multiplatform\")\n}\n"


def test_a_finding_on_a_gradle_build_script_does_not_block(tmp_path: Path) -> None:
    paths = [
        "core/viewmodel-navigation/build.gradle.kts", "settings.gradle", "build-logic/src/main/kotlin/kmp.gradle.kts",
        "core/viewmodel-navigation/src/commonMain/kotlin/Dsl.kt", "core/viewmodel-navigation/gradle.properties.kt",
    ]
    base = {"core/viewmodel/build.gradle.kts": _BUILD}
    repo = make_repo(tmp_path, base, {**base, **dict.fromkeys(paths, _BUILD)})
    request = review_request(repo.path)
    findings = [
        lens_finding(rule="reuse/near-copy-file", category="reuse", finding_class=FindingClass.SYSTEMATIC,
                     severity=Severity.MAJOR, title="New file is a near copy", body="copied", path=path)
        for path in paths
    ]
    severities = {finding.path: finding.severity for finding in mark_repository_tooling(request, findings)}
    assert severities == {
        "core/viewmodel-navigation/build.gradle.kts": Severity.MINOR,
        "settings.gradle": Severity.MINOR,
        "build-logic/src/main/kotlin/kmp.gradle.kts": Severity.MINOR,
        # Product code, and a name that only contains the word, still block.
        "core/viewmodel-navigation/src/commonMain/kotlin/Dsl.kt": Severity.MAJOR,
        "core/viewmodel-navigation/gradle.properties.kt": Severity.MAJOR,
    }
