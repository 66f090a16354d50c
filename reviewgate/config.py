"""Configuration: `.reviewgate.toml` or `[tool.reviewgate]` in pyproject.toml, into typed objects.

Flags and action inputs arrive as `Overrides` and win over the file. Unknown keys warn;
a wrong type or value is a ConfigError naming the file and key (exit 2).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from reviewgate.errors import ConfigError
from reviewgate.findings import FindingClass, Severity
from reviewgate.policy.instructions import PathInstruction, parse_instructions
from reviewgate.text import did_you_mean
from reviewgate.tomlfile import may_name_key, parse_toml, read_toml, read_toml_bytes

CONFIG_FILE = ".reviewgate.toml"
PYPROJECT_FILE = "pyproject.toml"
DEFAULT_MANIFEST = ".prepcook/scripts.toml"
DEFAULT_LOG_LIMIT = 2 * 1024 * 1024  # 1 MiB head + 1 MiB tail per step


# Field metadata read by policy/changes.py, which lists every setting a branch changes by walking
# these dataclasses: NOT_POLICY marks where a value came from (not a setting), TOML_KEY gives the
# table's name in the file when it differs from the field's ("" = its keys sit in the parent table).
NOT_POLICY = {"policy": False}


def toml_key(name: str) -> dict[str, str]:
    return {"toml_key": name}


class ConfigWarning(UserWarning):
    """An unknown key: printed, never fatal, so newer configs still run on older gates."""


class FailRule(NamedTuple):
    """Findings of `finding_class` at `severity` or worse block."""

    finding_class: FindingClass
    severity: Severity

    def __str__(self) -> str:
        return f"{self.finding_class.value}:{self.severity.value}"


BRANCH_SUPPRESSION_MODES = ("allow", "list", "refuse")

# A model finding that gives a confidence below this does not block (it is reported, marked).
DEFAULT_MIN_CONFIDENCE = 0.7

DEFAULT_FAIL_ON = (
    FailRule(FindingClass.SYSTEMATIC, Severity.MAJOR),
    FailRule(FindingClass.CORRECTNESS, Severity.MAJOR),
)


@dataclass(frozen=True)
class ReviewSettings:
    """The `[review]` table: which reviewers run, what blocks, what is reviewed."""

    reviewers: tuple[str, ...] = ("builtin",)
    fail_on: tuple[FailRule, ...] = DEFAULT_FAIL_ON
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    max_rounds: int = 3
    # Suppression comments the branch adds on blocking findings: allow | list | refuse.
    branch_suppressions: str = "list"
    # Who named the reviewers, for messages: the flag, or None for the file's review.reviewers.
    reviewers_flag: str | None = field(default=None, metadata=NOT_POLICY)
    # `[[review.instructions]]`: the repository's rules for some paths, given to model reviewers.
    instructions: tuple[PathInstruction, ...] = ()
    min_confidence: float = DEFAULT_MIN_CONFIDENCE


@dataclass(frozen=True)
class ReviewerSettings:
    """One `[reviewer.NAME]` table. Keys beyond the fixed ones go to the provider in `options`,
    which validates them (each provider knows its own)."""

    name: str = field(metadata=NOT_POLICY)  # the table's name, already in its key
    provider: str
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 120.0
    options: Mapping[str, Any] = field(default_factory=dict, metadata=toml_key(""))
    # The config file it came from, for messages naming file and key.
    source: str = field(default=CONFIG_FILE, metadata=NOT_POLICY)


@dataclass(frozen=True)
class VerifySettings:
    """The `[verify]` table: where the manifest is, whether the verify runs, what it may pass on."""

    manifest: str = DEFAULT_MANIFEST
    enabled: bool = True
    # Variables the verify may pass to the app besides the target branch's manifest `secrets`.
    secrets: tuple[str, ...] = ()
    # Bytes of each step's output kept on disk and on the console: the first half and the last half.
    log_limit: int = DEFAULT_LOG_LIMIT


@dataclass(frozen=True)
class Config:
    """The whole config in force: the typed tables, and the sections other modules validate."""

    review: ReviewSettings = ReviewSettings()
    reviewers: Mapping[str, ReviewerSettings] = field(default_factory=dict, metadata=toml_key("reviewer"))
    verify: VerifySettings = VerifySettings()
    # Sections owned by other modules (lenses, forges, ...), validated where they are used.
    sections: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, metadata=toml_key(""))
    source: str | None = field(default=None, metadata=NOT_POLICY)

    def reviewer(self, name: str) -> ReviewerSettings:
        """The settings for a reviewer named in `reviewers`; a bare provider name needs no table."""
        if name in self.reviewers:
            return self.reviewers[name]
        return ReviewerSettings(name=name, provider=name)


class Overrides(NamedTuple):
    """What flags or action inputs set; None means "not given, keep the file's value"."""

    reviewers: tuple[str, ...] | None = None
    fail_on: tuple[str, ...] | None = None
    max_rounds: int | None = None
    no_verify: bool = False
    cache_dir: str | None = None  # --cache-dir: where reviews are reused from ([cache] dir)
    on_missing_key: str | None = None  # --on-missing-key: blocked | skip, for every model reviewer
    import_sarif: tuple[Path, ...] = ()  # --import-sarif FILE (repeatable): other analyzers' results
    sarif_filter: str | None = None  # --sarif-filter MODE: added | diff_context | file | nofilter


# Sections other modules own; listed here only so they are not warned about as unknown.
OPEN_SECTIONS = ("lenses", "github", "gitlab", "cache", "import", "implementer")


class TableReader:
    """Type checks for one table, with the file and dotted key in every message."""

    def __init__(self, source: str, prefix: str, table: Mapping[str, Any]) -> None:
        self.source, self.prefix, self.table = source, prefix, table

    def where(self, key: str) -> str:
        return f"{self.source}: {self.prefix}{key}"

    def fail(self, key: str, expected: str, value: Any) -> ConfigError:
        return ConfigError(f"{self.where(key)}: expected {expected}, got {value!r}")

    def warn_unknown(self, known: tuple[str, ...]) -> None:
        for key in self.table:
            if key not in known:
                warnings.warn(f"{self.where(key)}: unknown key, ignored{did_you_mean(key, known)}", ConfigWarning,
                              stacklevel=2)

    def string(self, key: str, default: str | None) -> str | None:
        value = self.table.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(key, "a string", value)
        return value

    def strings(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = self.table.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(key, "a list of strings", value)
        return tuple(value)

    def number(self, key: str, default: float, minimum: float = 0.0) -> float:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
            raise self.fail(key, f"a number of at least {minimum:g}", value)
        return float(value)

    def integer(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"a whole number of at least {minimum}", value)
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def subtable(self, key: str) -> Mapping[str, Any]:
        value = self.table.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "a table", value)
        return value


def parse_fail_rule(text: str, where: str) -> FailRule:
    """`class:severity`, e.g. `correctness:major`; the severity is the lowest that blocks."""
    class_name, _, severity_name = text.partition(":")
    try:
        return FailRule(FindingClass(class_name.strip()), Severity((severity_name or "major").strip()))
    except ValueError:
        classes = "|".join(item.value for item in FindingClass)
        severities = "|".join(item.value for item in Severity)
        raise ConfigError(f"{where}: expected CLASS:SEVERITY with CLASS {classes} and SEVERITY {severities}, got {text!r}") from None


# `none` alone turns blocking off: report-only mode, for rolling the gate out before it gates.
REPORT_ONLY = "none"


def parse_fail_rules(texts: Sequence[str], where: str) -> tuple[FailRule, ...]:
    """Every `class:severity` rule, or none at all for `none` (report-only)."""
    if any(text.strip().lower() == REPORT_ONLY for text in texts):
        if len(texts) > 1:
            raise ConfigError(f"{where}: {REPORT_ONLY!r} turns blocking off and cannot be combined with rules, "
                              f"got {list(texts)!r}")
        return ()
    return tuple(parse_fail_rule(text, where) for text in texts)


def _parse_review(reader: TableReader) -> ReviewSettings:
    reader.warn_unknown(("reviewers", "fail_on", "exclude", "include", "max_rounds", "branch_suppressions",
                         "instructions", "min_confidence"))
    reviewers = reader.strings("reviewers", ReviewSettings.reviewers)
    if not reviewers:
        raise reader.fail("reviewers", "at least one reviewer name", [])
    fail_on = parse_fail_rules(
        reader.strings("fail_on", tuple(str(rule) for rule in DEFAULT_FAIL_ON)), reader.where("fail_on")
    )
    return ReviewSettings(
        reviewers=reviewers,
        fail_on=fail_on,
        exclude=reader.strings("exclude", ()),
        include=reader.strings("include", ()),
        max_rounds=reader.integer("max_rounds", 3, minimum=1),
        branch_suppressions=_branch_suppressions(reader),
        instructions=parse_instructions(reader.table.get("instructions", []), f"{reader.source}: {reader.prefix}"),
        min_confidence=_min_confidence(reader),
    )


def _min_confidence(reader: TableReader) -> float:
    value = reader.table.get("min_confidence", DEFAULT_MIN_CONFIDENCE)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise reader.fail("min_confidence", "a number from 0 to 1", value)
    return float(value)


def _branch_suppressions(reader: TableReader) -> str:
    value = reader.string("branch_suppressions", ReviewSettings.branch_suppressions)
    if value not in BRANCH_SUPPRESSION_MODES:
        raise reader.fail("branch_suppressions", " | ".join(BRANCH_SUPPRESSION_MODES), value)
    return value


_REVIEWER_FIXED_KEYS = ("provider", "model", "base_url", "api_key_env", "timeout")


def _parse_reviewer(name: str, reader: TableReader) -> ReviewerSettings:
    provider = reader.string("provider", name)
    assert provider is not None
    options = {key: value for key, value in reader.table.items() if key not in _REVIEWER_FIXED_KEYS}
    return ReviewerSettings(
        name=name,
        provider=provider,
        model=reader.string("model", None),
        base_url=reader.string("base_url", None),
        api_key_env=reader.string("api_key_env", None),
        timeout=reader.number("timeout", 120.0, minimum=1.0),
        options=options,
        source=reader.source,
    )


def parse_config(table: Mapping[str, Any], source: str) -> Config:
    """A config from the already-read top-level table (the file, or [tool.reviewgate])."""
    top = TableReader(source, "", table)
    top.warn_unknown(("review", "reviewer", "verify", *OPEN_SECTIONS))
    review = _parse_review(TableReader(source, "review.", top.subtable("review")))
    reviewers: dict[str, ReviewerSettings] = {}
    for name, settings in top.subtable("reviewer").items():
        if not isinstance(settings, dict):
            raise top.fail(f"reviewer.{name}", "a table", settings)
        reviewers[name] = _parse_reviewer(name, TableReader(source, f"reviewer.{name}.", settings))
    verify_reader = TableReader(source, "verify.", top.subtable("verify"))
    verify_reader.warn_unknown(("manifest", "enabled", "secrets", "log_limit"))
    verify = VerifySettings(
        manifest=verify_reader.string("manifest", DEFAULT_MANIFEST) or DEFAULT_MANIFEST,
        enabled=verify_reader.boolean("enabled", True),
        secrets=verify_reader.strings("secrets", ()),
        log_limit=verify_reader.integer("log_limit", DEFAULT_LOG_LIMIT, minimum=1024),
    )
    sections = {name: top.subtable(name) for name in OPEN_SECTIONS if name in table}
    return Config(review=review, reviewers=reviewers, verify=verify, sections=sections, source=source)


def _holds_reviewgate_table(pyproject: Path) -> bool:
    data = read_toml_bytes(pyproject)
    # A file that cannot name the table is left unparsed (see may_name_key).
    return may_name_key(data, (b"reviewgate",)) and "reviewgate" in parse_toml(data, str(pyproject)).get("tool", {})


def find_config_file(repo_root: Path) -> Path | None:
    for candidate in (repo_root / CONFIG_FILE, repo_root / PYPROJECT_FILE):
        if candidate.is_file():
            if candidate.name == PYPROJECT_FILE and not _holds_reviewgate_table(candidate):
                continue
            return candidate
    return None


def config_from_document(data: Mapping[str, Any], name: str, where: str) -> Config:
    """A config from a whole TOML document: the file itself, or its [tool.reviewgate] table
    when it is a pyproject.toml. `where` names it in messages."""
    if Path(name).name == PYPROJECT_FILE:
        tool = data.get("tool", {}).get("reviewgate", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{where}: tool.reviewgate: expected a table, got {tool!r}")
        return parse_config(tool, f"{name} [tool.reviewgate]")
    return parse_config(data, name)


def load_config(repo_root: Path, explicit: Path | None = None) -> Config:
    """The repository's config in the working tree, or the defaults when it has none. An
    explicit path must exist. A review reads its policy at the target side instead
    (policy/source.py); this is for a bundle and a file the workflow names outside the tree."""
    path = explicit if explicit is not None else find_config_file(repo_root)
    if path is None:
        return Config()
    if explicit is not None and not explicit.is_file():
        raise ConfigError(f"--config: {explicit}: config file not found")
    name = str(path.name if path.parent == repo_root else path)
    return config_from_document(read_toml(path), name, str(path))


def apply_overrides(config: Config, overrides: Overrides) -> Config:
    review = config.review
    if overrides.reviewers is not None:
        if not overrides.reviewers:
            raise ConfigError("--reviewer: expected at least one reviewer name")
        review = replace(review, reviewers=overrides.reviewers, reviewers_flag="--reviewer")
    if overrides.fail_on is not None:
        review = replace(review, fail_on=parse_fail_rules(overrides.fail_on, "--fail-on"))
    if overrides.max_rounds is not None:
        if overrides.max_rounds < 1:
            raise ConfigError(f"--max-rounds: expected a whole number of at least 1, got {overrides.max_rounds}")
        review = replace(review, max_rounds=overrides.max_rounds)
    verify = replace(config.verify, enabled=False) if overrides.no_verify else config.verify
    config = replace(config, review=review, verify=verify)
    if overrides.cache_dir is not None:
        cache = {**config.sections.get("cache", {}), "dir": overrides.cache_dir}
        config = replace(config, sections={**config.sections, "cache": cache})
    if overrides.on_missing_key is not None:
        config = replace(config, reviewers={
            name: replace(settings, options={**settings.options, "on_missing_key": overrides.on_missing_key})
            for name, settings in config.reviewers.items()
        })
    return config
