"""Findings of other analyzers, imported from SARIF 2.1.0 files (the reviewdog idea).

`reviewgate run --import-sarif ruff.sarif --import-sarif eslint.sarif` adds one reviewer per file.
Each result is filtered to the change (`added` lines by default, `diff_context`, `file`,
`nofilter`), mapped to class and severity by the `[import.levels]` table, and keeps the tool's
name as its `source`. SARIF suppressions are honoured: the finding is kept and dismissed.
A malformed file is a ConfigError (exit 2) naming it, checked before any reviewer runs.
"""

from __future__ import annotations

import enum
import json
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from reviewgate.config import Config, ConfigWarning, parse_fail_rule
from reviewgate.context import ReviewRequest
from reviewgate.errors import ConfigError, UsageError
from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from reviewgate.text import truncate

SECTION = "import"


class FilterMode(str, enum.Enum):
    """Which results reach the gate, as reviewdog's `-filter-mode` names them."""

    ADDED = "added"  # only results on lines the change adds
    DIFF_CONTEXT = "diff_context"  # results anywhere in the diff's hunks, context lines included
    FILE = "file"  # results anywhere in files the change touches
    NOFILTER = "nofilter"  # every result


# GitHub check annotations: title at most 255 characters, message at most 64 KB
# (shared/conformance/README.md); a tool's message is cut well below that.
MAX_TITLE_CHARACTERS = 250
MAX_BODY_CHARACTERS = 16_000

# SARIF 2.1.0 §3.27.10 `level`: error | warning | note | none (none is not a problem).
DEFAULT_LEVELS: dict[str, tuple[FindingClass, Severity]] = {
    "error": (FindingClass.CORRECTNESS, Severity.MAJOR),
    "warning": (FindingClass.CORRECTNESS, Severity.MINOR),
    "note": (FindingClass.CORRECTNESS, Severity.NIT),
}
# §3.27.9 `kind`: only "fail" (the default) and "review"/"open" say something needs attention.
_PROBLEM_KINDS = frozenset({"fail", "review", "open"})


@dataclass(frozen=True)
class ImportSettings:
    mode: FilterMode = FilterMode.ADDED
    levels: Mapping[str, tuple[FindingClass, Severity]] = field(default_factory=lambda: dict(DEFAULT_LEVELS))


@dataclass(frozen=True)
class SarifResult:
    tool: str
    rule_id: str
    level: str
    message: str
    path: str | None
    line: int | None
    end_line: int | None
    suppressed: str | None  # the justification when every suppression is accepted


def parse_import_settings(config: Config, mode_flag: str | None) -> ImportSettings:
    section = config.sections.get(SECTION, {})
    source = config.source or "config"
    for key in section:
        if key not in ("filter", "levels"):
            warnings.warn(f"{source}: {SECTION}.{key}: unknown key, ignored", ConfigWarning, stacklevel=2)
    modes = " | ".join(item.value for item in FilterMode)
    mode_text = mode_flag if mode_flag is not None else section.get("filter", FilterMode.ADDED.value)
    where = "--sarif-filter" if mode_flag is not None else f"{source}: {SECTION}.filter"
    if not isinstance(mode_text, str) or mode_text not in {item.value for item in FilterMode}:
        raise ConfigError(f"{where}: expected {modes}, got {mode_text!r}")
    levels = dict(DEFAULT_LEVELS)
    table = section.get("levels", {})
    if not isinstance(table, dict):
        raise ConfigError(
            f'{source}: {SECTION}.levels: expected a table of level = "class:severity", got {table!r}'
        )
    for level, value in table.items():
        key_where = f"{source}: {SECTION}.levels.{level}"
        if level not in DEFAULT_LEVELS:
            raise ConfigError(f"{key_where}: expected a SARIF level (error, warning, note)")
        if not isinstance(value, str):
            raise ConfigError(f'{key_where}: expected "class:severity", got {value!r}')
        rule = parse_fail_rule(value, key_where)
        levels[level] = (rule.finding_class, rule.severity)
    return ImportSettings(FilterMode(mode_text), levels)


def _relative_path(uri: str, base: str | None, repo_root: Path) -> str | None:
    """A repository-relative POSIX path for a SARIF artifact URI, or None when it is outside."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return None
    path = unquote(parsed.path)
    if base:
        base_path = unquote(urlparse(base).path)
        path = str(PurePosixPath(base_path) / path) if not path.startswith("/") else path
    if path.startswith("/"):
        try:
            return PurePosixPath(path).relative_to(PurePosixPath(repo_root.resolve().as_posix())).as_posix()
        except ValueError:
            return None
    normal = PurePosixPath(path.removeprefix("./")).as_posix()
    return None if normal.startswith("../") else normal


def _suppression(result: Mapping[str, Any]) -> str | None:
    """SARIF 2.1.0 §3.27.23/§3.35.3: suppressed when every suppression's status is accepted
    (absent means accepted); one under review or rejected leaves the result active."""
    suppressions = result.get("suppressions")
    if not isinstance(suppressions, list) or not suppressions:
        return None
    if any(
        not isinstance(item, dict) or item.get("status", "accepted") != "accepted" for item in suppressions
    ):
        return None
    reasons = [str(item.get("justification") or item.get("kind") or "") for item in suppressions]
    return "; ".join(reason for reason in reasons if reason) or "suppressed in the SARIF file"


def _require(condition: bool, file: Path, where: str, expected: str) -> None:
    if not condition:
        raise ConfigError(f"{file}: {where}: expected {expected} (not a valid SARIF 2.1.0 log)")


def load_sarif(file: Path, repo_root: Path) -> list[SarifResult]:
    """Every result of every run, or a ConfigError naming the file and what is wrong."""
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--import-sarif: {file}: file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"{file}: not valid JSON SARIF ({error})") from None
    _require(isinstance(document, dict), file, "top level", "an object")
    _require(document.get("version") == "2.1.0", file, "version", '"2.1.0"')
    runs = document.get("runs")
    _require(isinstance(runs, list), file, "runs", "a list")
    results: list[SarifResult] = []
    for run_index, run in enumerate(runs):
        where = f"runs[{run_index}]"
        _require(isinstance(run, dict), file, where, "an object")
        driver = run.get("tool", {}).get("driver") if isinstance(run.get("tool"), dict) else None
        _require(
            isinstance(driver, dict) and isinstance(driver.get("name"), str),
            file,
            f"{where}.tool.driver.name",
            "a string",
        )
        assert isinstance(driver, dict)
        rules = driver.get("rules", [])
        _require(isinstance(rules, list), file, f"{where}.tool.driver.rules", "a list")
        rule_levels = {
            str(rule.get("id")): (rule.get("defaultConfiguration") or {}).get("level")
            for rule in rules
            if isinstance(rule, dict) and isinstance(rule.get("defaultConfiguration") or {}, dict)
        }
        bases = run.get("originalUriBaseIds") or {}
        _require(isinstance(bases, dict), file, f"{where}.originalUriBaseIds", "an object")
        run_results = run.get("results", [])
        _require(isinstance(run_results, list), file, f"{where}.results", "a list")
        for index, result in enumerate(run_results):
            parsed = _parse_result_safely(
                result, file, f"{where}.results[{index}]", driver["name"], rule_levels, bases, repo_root
            )
            if parsed is not None:
                results.append(parsed)
    return results


def _parse_result_safely(
    result: Any, file: Path, where: str, tool: str, rule_levels: Mapping[str, Any], bases: Mapping[str, Any],
    repo_root: Path,
) -> SarifResult | None:
    """A wrongly typed nested field (a list where an object belongs) is a malformed file, never a crash."""
    try:
        return _parse_result(result, file, where, tool, rule_levels, bases, repo_root)
    except (AttributeError, TypeError, KeyError, IndexError) as error:
        detail = f"{type(error).__name__}: {error}"
        raise ConfigError(f"{file}: {where}: not a valid SARIF 2.1.0 result ({detail})") from None


def _parse_result(
    result: Any,
    file: Path,
    where: str,
    tool: str,
    rule_levels: Mapping[str, Any],
    bases: Mapping[str, Any],
    repo_root: Path,
) -> SarifResult | None:
    _require(isinstance(result, dict), file, where, "an object")
    message = result.get("message")
    _require(
        isinstance(message, dict) and isinstance(message.get("text", message.get("id")), str),
        file,
        f"{where}.message.text",
        "a string",
    )
    if result.get("kind", "fail") not in _PROBLEM_KINDS:
        return None
    rule_id = str(result.get("ruleId") or result.get("rule", {}).get("id") or "")
    level = result.get("level") or rule_levels.get(rule_id) or "warning"  # §3.27.10: warning by default
    _require(
        level in ("error", "warning", "note", "none"), file, f"{where}.level", "error, warning, note or none"
    )
    if level == "none":
        return None
    path = line = end_line = None
    locations = result.get("locations") or []
    _require(isinstance(locations, list), file, f"{where}.locations", "a list")
    if locations:
        physical = locations[0].get("physicalLocation", {}) if isinstance(locations[0], dict) else {}
        artifact = physical.get("artifactLocation", {})
        if isinstance(artifact, dict) and isinstance(artifact.get("uri"), str):
            base_entry = bases.get(str(artifact.get("uriBaseId")))
            base = base_entry.get("uri") if isinstance(base_entry, dict) else None
            path = _relative_path(artifact["uri"], base, repo_root)
        region = physical.get("region", {})
        if isinstance(region, dict) and isinstance(region.get("startLine"), int):
            line = region["startLine"]
            end_line = region.get("endLine") if isinstance(region.get("endLine"), int) else None
    text = str(message.get("text") or message.get("id"))
    return SarifResult(tool, rule_id, level, text, path, line, end_line, _suppression(result))


class SarifImportReviewer:
    """One imported SARIF file as a reviewer beside the others."""

    def __init__(self, file: Path, results: list[SarifResult], settings: ImportSettings) -> None:
        self.name = f"sarif:{file.name}"
        self.file = file
        self.results = results
        self.settings = settings

    def _keeps(self, request: ReviewRequest, result: SarifResult) -> bool:
        mode = self.settings.mode
        if mode is FilterMode.NOFILTER:
            return True
        change = request.target.file(result.path) if result.path else None
        if change is None:
            return False
        if mode is FilterMode.FILE:
            return True
        if result.line is None:
            return False
        if mode is FilterMode.DIFF_CONTEXT:
            return change.hunk_containing(result.line) is not None
        lines = range(result.line, (result.end_line or result.line) + 1)
        return any(number in change.added_lines() for number in lines)

    def review(self, request: ReviewRequest) -> ReviewerOutcome:
        started = time.monotonic()
        findings: dict[str, Finding] = {}
        dropped = 0
        for result in self.results:
            if not self._keeps(request, result):
                dropped += 1
                continue
            finding = self._finding(request, result)
            findings.setdefault(finding.id, finding)
        return ReviewerOutcome(
            reviewer=self.name,
            status=ReviewerStatus.OK,
            findings=tuple(findings.values()),
            duration_seconds=time.monotonic() - started,
            notes=(
                f"{dropped} of {len(self.results)} results outside the change ({self.settings.mode.value})",
            )
            if dropped
            else (),
        )

    def _finding(self, request: ReviewRequest, result: SarifResult) -> Finding:
        finding_class, severity = self.settings.levels[result.level]
        code = ""
        if result.path and result.line:
            text = request.head.read_text(result.path)
            lines = text.splitlines() if text else []
            code = lines[result.line - 1] if 0 < result.line <= len(lines) else ""
        title = f"{result.rule_id}: {result.message.splitlines()[0]}" if result.rule_id else result.message
        return Finding(
            id=make_finding_id(result.tool, result.path, "imported", title, code),
            finding_class=finding_class,
            severity=severity,
            category="imported",
            rule=result.rule_id,
            title=truncate(title, MAX_TITLE_CHARACTERS, "…"),
            body=truncate(result.message, MAX_BODY_CHARACTERS),
            source=result.tool,
            path=result.path,
            line=result.line if result.path else None,
            end_line=result.end_line if result.path and result.line else None,
            dismissed=f"suppressed: {result.suppressed}" if result.suppressed else None,
            extra={"sarif_file": self.file.name, "sarif_level": result.level},
        )


def build_sarif_importers(
    config: Config, files: tuple[Path, ...], mode_flag: str | None, repo_root: Path
) -> list[SarifImportReviewer]:
    """One reviewer per `--import-sarif FILE`, every file parsed now so a bad one exits 2 up front."""
    if not files:
        if mode_flag is not None:
            parse_import_settings(config, mode_flag)
        return []
    settings = parse_import_settings(config, mode_flag)
    return [SarifImportReviewer(file, load_sarif(file, repo_root), settings) for file in files]
