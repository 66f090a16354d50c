"""The options of a model reviewer (`[reviewer.NAME]` keys beyond the fixed five), validated once.

config.py hands every extra key over untouched; each provider knows its own. Unknown keys
warn (ConfigWarning), wrong types are a ConfigError naming `file: reviewer.NAME.key`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from reviewgate.config import ConfigWarning, ReviewerSettings, TableReader
from reviewgate.errors import ConfigError
from reviewgate.reviewers.model.http import DEFAULT_MAX_ANSWER_BYTES
from reviewgate.reviewers.model.prompt_cache import CACHE_TTL_SECONDS

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
    "context_chars",
    "on_missing_key",
    "on_unreviewed",
    "independent",
    "input_price",
    "output_price",
    "cached_input_price",
    "cache_write_price",
    "max_answer_bytes",
    "retry_timeouts",
    "chunk_timeout",
    "verify_findings",
    "verifier",
)
TOOL_KEYS = ("tools", "tool_turns", "tool_bytes", "tool_seconds")  # the API providers' read-only tool loop
PROVIDER_KEYS = {
    "openai": ("reasoning_effort", "response_format", "api_version", "extra_headers", "max_tokens_parameter",
               "prompt_cache_retention", *TOOL_KEYS),
    "anthropic": ("anthropic_version", "extra_headers", "cache_ttl", *TOOL_KEYS),
    "command": ("command", "environment"),
}
# The structured forms, strongest first: a server that rejects one is asked with the next
# (api_transport.py). `json_object_with_schema` is llama.cpp's: `{"type": "json_object",
# "schema": ...}`, enforced by its grammar; bare `json_object` only promises some JSON object.
STRUCTURED_FORMS = ("json_schema", "json_object_with_schema", "json_object")
SCHEMA_FORMS = STRUCTURED_FORMS[:2]  # the forms whose request carries the answer's schema
RESPONSE_FORMATS = (*STRUCTURED_FORMS, "text")
TOKEN_CAP_FIELDS = ("max_completion_tokens", "max_tokens")
# How long the provider keeps the cached prefix (the system message and the schema, the same
# bytes in every request): OpenAI's `prompt_cache_retention` ("Prompt caching" guide: in memory,
# minutes, or up to 24 hours at the same price, on the models that offer it) and Anthropic's
# `cache_control.ttl` (5 minutes, or an hour at twice the input price to write). The default
# sends neither: a longer lifetime keeps the prompt's cache on the provider's side for longer,
# which a team chooses (see docs/reviewers.md).
PROMPT_CACHE_RETENTIONS = ("in_memory", "24h")
CACHE_TTLS = tuple(CACHE_TTL_SECONDS)  # "5m", "1h"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
OPENAI_HOST = "api.openai.com"
# Anthropic prices a prompt-cache read at 0.1x the input price and a 5-minute cache write at
# 1.25x (pricing page, "Prompt caching"); OpenAI's cached input is 0.1x for the gpt-5 family
# and 0.5x for the gpt-4o generation (pricing page).
CACHE_READ_SHARE = {"anthropic": 0.1, "openai": 0.5, "openai-gpt-5": 0.1, "command": 0.1}
CACHE_WRITE_SHARE = {"anthropic": 1.25, "command": 1.25}
ONE_HOUR_WRITE_SHARE = 2.0  # Anthropic's 1-hour cache write (pricing page, "Prompt caching")


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
    # Characters of context beside each chunk's diff: excerpts around the symbols it touches,
    # never whole files (context_collector.py). About 2,000 tokens.
    context_chars: int = 8_000
    on_missing_key: str = "blocked"
    on_unreviewed: str = "blocked"
    independent: bool = False
    input_price: float | None = None  # per million input tokens, in the team's currency
    output_price: float | None = None
    cached_input_price: float | None = None  # per million input tokens read from the prompt cache
    cache_write_price: float | None = None  # per million input tokens written to it
    retry_timeouts: bool = True  # off for a local server: its timed-out request still runs
    chunk_timeout: float = 240.0  # all the requests of one chunk, retries included
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES  # a longer answer blocks, unread past the cap
    verify_findings: bool = True  # the second look at every finding that could block
    verifier: str | None = None  # another configured model reviewer takes the second look
    reasoning_effort: str | None = None
    response_format: str = "json_schema"
    api_version: str | None = None
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    max_tokens_parameter: str = "max_completion_tokens"  # parse_options: by the server
    anthropic_version: str = "2023-06-01"
    prompt_cache_retention: str | None = None  # openai: sent only when set
    cache_ttl: str = "5m"  # anthropic: "5m" is the API's own default, sent without a ttl
    command: tuple[str, ...] = ()
    # The read-only tool loop (tools.py, tool_loop.py): on for a hosted API, off by default for a
    # server on this machine (many local servers take no `tools`); bounded by rounds of calls,
    # characters returned and seconds.
    tools: bool = False
    tool_turns: int = 4
    tool_bytes: int = 60_000
    tool_seconds: float = 120.0


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


def host_of(base_url: str | None) -> str:
    return (urlsplit(base_url).hostname or "").lower() if base_url else ""


def is_local_server(base_url: str | None) -> bool:
    """A server on this machine: often one model slot, and no cancel for a request given up."""
    return host_of(base_url) in LOCAL_HOSTS


def default_token_cap_field(settings: ReviewerSettings, api_version: str | None) -> str:
    """OpenAI's own API (and Azure's) take `max_completion_tokens` and its reasoning models
    reject `max_tokens`; other Chat Completions servers (llama.cpp, vLLM, Ollama, LiteLLM)
    honour `max_tokens`, and some ignore the newer field, leaving generation unbounded."""
    official = settings.base_url is None or host_of(settings.base_url) == OPENAI_HOST
    azure = api_version is not None or host_of(settings.base_url).endswith(".openai.azure.com")
    return "max_completion_tokens" if official or azure else "max_tokens"


def _cache_prices(
    settings: ReviewerSettings, reader: TableReader, input_price: float | None, cache_ttl: str
) -> tuple[float | None, float | None]:
    """The prompt-cache prices: as configured, else the provider's shares of the input price."""
    family = settings.provider
    if family == "openai" and (settings.model or "").rsplit("/", 1)[-1].startswith("gpt-5"):
        family = "openai-gpt-5"
    read_share, write_share = CACHE_READ_SHARE.get(family, 1.0), CACHE_WRITE_SHARE.get(family, 1.0)
    if family == "anthropic" and cache_ttl == "1h":
        write_share = ONE_HOUR_WRITE_SHARE
    read = _optional_number(reader, "cached_input_price")
    write = _optional_number(reader, "cache_write_price")
    if input_price is not None:
        read = input_price * read_share if read is None else read
        write = input_price * write_share if write is None else write
    return read, write


def parse_options(settings: ReviewerSettings) -> ModelOptions:
    """Validate `settings.options` for `settings.provider`, naming `settings.source` in errors."""
    source = settings.source
    reader = TableReader(source, f"reviewer.{settings.name}.", settings.options)
    if "context_tokens" in settings.options:  # the budget's old name, in tokens
        warnings.warn(f"{reader.where('context_tokens')}: no longer read: the context budget is context_chars "
                      f"(characters per chunk, default {ModelOptions.context_chars})", ConfigWarning, stacklevel=2)
    reader.warn_unknown(COMMON_KEYS + ("context_tokens",) + PROVIDER_KEYS.get(settings.provider, ()))
    defaults = ModelOptions()
    api_version = reader.string("api_version", None)
    input_price = _optional_number(reader, "input_price")
    cache_ttl = (_choice(reader, "cache_ttl", defaults.cache_ttl, CACHE_TTLS)
                 if settings.provider == "anthropic" else defaults.cache_ttl)
    cached_input_price, cache_write_price = _cache_prices(settings, reader, input_price, cache_ttl)
    options = ModelOptions(
        temperature=_optional_number(reader, "temperature"),
        max_output_tokens=reader.integer("max_output_tokens", defaults.max_output_tokens, minimum=1),
        retries=reader.integer("retries", defaults.retries),
        retry_base_delay=reader.number("retry_base_delay", defaults.retry_base_delay),
        retry_max_delay=reader.number("retry_max_delay", defaults.retry_max_delay),
        concurrency=reader.integer("concurrency", defaults.concurrency, minimum=1),
        max_input_tokens=reader.integer("max_input_tokens", defaults.max_input_tokens, minimum=1000),
        context_chars=reader.integer("context_chars", defaults.context_chars),
        on_missing_key=_choice(reader, "on_missing_key", defaults.on_missing_key, ON_MISSING_KEY),
        on_unreviewed=_choice(reader, "on_unreviewed", defaults.on_unreviewed, ON_UNREVIEWED),
        independent=reader.boolean("independent", False),
        input_price=input_price,
        output_price=_optional_number(reader, "output_price"),
        cached_input_price=cached_input_price,
        cache_write_price=cache_write_price,
        retry_timeouts=reader.boolean("retry_timeouts", not is_local_server(settings.base_url)),
        chunk_timeout=reader.number("chunk_timeout", 2 * settings.timeout, minimum=1.0),
        max_answer_bytes=reader.integer("max_answer_bytes", defaults.max_answer_bytes, minimum=1024),
        verify_findings=reader.boolean("verify_findings", defaults.verify_findings),
        verifier=reader.string("verifier", None) or None,
        reasoning_effort=reader.string("reasoning_effort", None),
        response_format=_choice(reader, "response_format", defaults.response_format, RESPONSE_FORMATS),
        api_version=api_version,
        extra_headers=_headers(reader),
        max_tokens_parameter=_choice(
            reader, "max_tokens_parameter", default_token_cap_field(settings, api_version), TOKEN_CAP_FIELDS
        ),
        anthropic_version=reader.string("anthropic_version", defaults.anthropic_version)
        or defaults.anthropic_version,
        prompt_cache_retention=(
            _choice(reader, "prompt_cache_retention", "", PROMPT_CACHE_RETENTIONS)
            if settings.provider == "openai" and "prompt_cache_retention" in reader.table else None
        ),
        cache_ttl=cache_ttl,
        command=reader.strings("command", ()),
        tools=(reader.boolean("tools", not is_local_server(settings.base_url))
               if settings.provider in ("openai", "anthropic") else False),
        tool_turns=reader.integer("tool_turns", defaults.tool_turns, minimum=1),
        tool_bytes=reader.integer("tool_bytes", defaults.tool_bytes, minimum=1000),
        tool_seconds=reader.number("tool_seconds", defaults.tool_seconds, minimum=1.0),
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
    "independent", "input_price", "output_price", "max_answer_bytes", "cached_input_price", "cache_write_price",
    "retry_timeouts", "chunk_timeout",
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
