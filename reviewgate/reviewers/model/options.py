"""The options of a model reviewer (`[reviewer.NAME]` keys beyond the fixed five), validated once.

config.py hands every extra key over untouched; each provider knows its own. Unknown keys
warn (ConfigWarning), wrong types are a ConfigError naming `file: reviewer.NAME.key`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reviewgate.config import ReviewerSettings, TableReader
from reviewgate.errors import ConfigError
from reviewgate.reviewers.model.http import DEFAULT_MAX_ANSWER_BYTES

ON_MISSING_KEY = ("blocked", "skip")
ON_UNREVIEWED = ("blocked", "report")

# Keys every model reviewer understands; providers add their own (see PROVIDER_KEYS below).
COMMON_KEYS = (
    "temperature",
    "max_output_tokens",
    "retries",
    "retry_base_delay",
    "retry_max_delay",
    "concurrency",
    "max_input_tokens",
    "context_tokens",
    "on_missing_key",
    "on_unreviewed",
    "independent",
    "input_price",
    "output_price",
    "max_answer_bytes",
    "verify_findings",
    "verifier",
)
PROVIDER_KEYS = {
    "openai": ("reasoning_effort", "response_format", "api_version", "extra_headers", "max_tokens_parameter"),
    "anthropic": ("anthropic_version", "extra_headers"),
    "command": ("command",),
}
RESPONSE_FORMATS = ("json_schema", "json_object", "text")


@dataclass(frozen=True)
class ModelOptions:
    temperature: float | None = None
    max_output_tokens: int = 8192
    retries: int = 3
    retry_base_delay: float = 2.0
    retry_max_delay: float = 60.0
    concurrency: int = 4
    # A budget well under today's common 128k-token windows, leaving room for the answer.
    max_input_tokens: int = 100_000
    context_tokens: int = 24_000
    on_missing_key: str = "blocked"
    on_unreviewed: str = "blocked"
    independent: bool = False
    input_price: float | None = None  # per million input tokens, in the team's currency
    output_price: float | None = None
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES  # a longer answer blocks, unread past the cap
    verify_findings: bool = True  # the second look at every finding that could block
    verifier: str | None = None  # another configured model reviewer takes the second look
    reasoning_effort: str | None = None
    response_format: str = "json_schema"
    api_version: str | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    max_tokens_parameter: str = "max_completion_tokens"
    anthropic_version: str = "2023-06-01"
    command: tuple[str, ...] = ()


def _choice(reader: TableReader, key: str, default: str, choices: tuple[str, ...]) -> str:
    value = reader.string(key, default) or default
    if value not in choices:
        raise reader.fail(key, " or ".join(repr(choice) for choice in choices), value)
    return value


def _optional_number(reader: TableReader, key: str) -> float | None:
    return reader.number(key, 0.0) if key in reader.table else None


def _headers(reader: TableReader) -> dict[str, str]:
    table = reader.subtable("extra_headers")
    for name, value in table.items():
        if not isinstance(value, str):
            raise reader.fail(f"extra_headers.{name}", "a string", value)
    return dict(table)


def parse_options(settings: ReviewerSettings) -> ModelOptions:
    """Validate `settings.options` for `settings.provider`, naming `settings.source` in errors."""
    source = settings.source
    reader = TableReader(source, f"reviewer.{settings.name}.", settings.options)
    reader.warn_unknown(COMMON_KEYS + PROVIDER_KEYS.get(settings.provider, ()))
    defaults = ModelOptions()
    options = ModelOptions(
        temperature=_optional_number(reader, "temperature"),
        max_output_tokens=reader.integer("max_output_tokens", defaults.max_output_tokens, minimum=1),
        retries=reader.integer("retries", defaults.retries),
        retry_base_delay=reader.number("retry_base_delay", defaults.retry_base_delay),
        retry_max_delay=reader.number("retry_max_delay", defaults.retry_max_delay),
        concurrency=reader.integer("concurrency", defaults.concurrency, minimum=1),
        max_input_tokens=reader.integer("max_input_tokens", defaults.max_input_tokens, minimum=1000),
        context_tokens=reader.integer("context_tokens", defaults.context_tokens),
        on_missing_key=_choice(reader, "on_missing_key", defaults.on_missing_key, ON_MISSING_KEY),
        on_unreviewed=_choice(reader, "on_unreviewed", defaults.on_unreviewed, ON_UNREVIEWED),
        independent=reader.boolean("independent", False),
        input_price=_optional_number(reader, "input_price"),
        output_price=_optional_number(reader, "output_price"),
        max_answer_bytes=reader.integer("max_answer_bytes", defaults.max_answer_bytes, minimum=1024),
        verify_findings=reader.boolean("verify_findings", defaults.verify_findings),
        verifier=reader.string("verifier", None) or None,
        reasoning_effort=reader.string("reasoning_effort", None),
        response_format=_choice(reader, "response_format", defaults.response_format, RESPONSE_FORMATS),
        api_version=reader.string("api_version", None),
        extra_headers=_headers(reader),
        max_tokens_parameter=_choice(
            reader,
            "max_tokens_parameter",
            defaults.max_tokens_parameter,
            ("max_completion_tokens", "max_tokens"),
        ),
        anthropic_version=reader.string("anthropic_version", defaults.anthropic_version)
        or defaults.anthropic_version,
        command=reader.strings("command", ()),
    )
    if settings.provider == "command" and not options.command:
        raise reader.fail(
            "command", 'the agent\'s command line as a list of strings, e.g. ["claude", "-p"]', None
        )
    if settings.provider in ("openai", "anthropic") and not settings.model:
        raise ConfigError(f"{source}: reviewer.{settings.name}.model: expected the model name, got nothing")
    return options


# Options that change how a review is asked for, paid for or judged, never what the model
# answers: a new price or retry policy must not make every stored chunk answer miss.
OUTSIDE_THE_ANSWER = frozenset({
    "retries", "retry_base_delay", "retry_max_delay", "concurrency", "on_missing_key", "on_unreviewed",
    "independent", "input_price", "output_price", "max_answer_bytes",
})


def settings_identity(settings: ReviewerSettings) -> dict[str, Any]:
    """Everything that shapes a reviewer's answer, for the cache key and the independence check."""
    return {
        "provider": settings.provider,
        "model": settings.model,
        "base_url": settings.base_url,
        "options": {
            key: settings.options[key] for key in sorted(settings.options) if key not in OUTSIDE_THE_ANSWER
        },
    }
