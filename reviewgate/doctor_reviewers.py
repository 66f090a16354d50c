"""`reviewgate doctor`'s checks of each configured reviewer: the key variable is set, the endpoint
answers, the model is known, what a Chat Completions server other than OpenAI's own takes (one
request capped at 16 tokens), options the model will refuse, and, with `independent = true`,
that the reviewer is not configured like the `[implementer]` that wrote the code."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewgate.config import (
    CONFIG_FILE,
    Config,
    ReviewerSettings,
    TableReader,
)
from reviewgate.doctor_report import DoctorReport
from reviewgate.errors import ReviewgateError
from reviewgate.reviewers import anthropic, missing_settings, openai, providers
from reviewgate.reviewers.model.http import (
    RetryPolicy,
    StructuredFormRejected,
    TransportBlocked,
    get_json,
    post_json,
)
from reviewgate.reviewers.model.options import OPENAI_HOST, TOKEN_CAP_FIELDS, ModelOptions, host_of, parse_options
from reviewgate.reviewers.model.verification import verifier_settings
from reviewgate.text import printable

IMPLEMENTER_KEYS = ("provider", "model", "base_url")
MODEL_PROVIDERS = ("openai", "anthropic", "command")
PROBE_CAP = 16  # tokens: the probe's answer, past which a server that ignores the cap goes on
PROBE_TIMEOUT = 30.0  # seconds at most: a probe capped at 16 tokens answers fast or not at all
PROBE_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
                "additionalProperties": False}
PROBE_PROMPT = 'Count from 1 to 100 in words, then answer with the JSON object {"ok": true}.'
# OpenAI's reasoning models (o-series, gpt-5) reject `temperature`; older chat models reject
# `reasoning_effort` (API reference, "Reasoning models"); Azure takes `reasoning_effort` from
# api-version 2024-12-01-preview on.
_REASONING_MODEL = re.compile(r"^(o[1-9](-|$)|gpt-5)")
_NON_REASONING_MODEL = re.compile(r"^(gpt-4|gpt-3\.5|chatgpt-4o)")
AZURE_REASONING_API_VERSION = "2024-12-01"


def _key(
    settings: ReviewerSettings, variable: str | None, options: ModelOptions, report: DoctorReport
) -> str | None | bool:
    """The key, None when none is needed, False when it is missing (reported)."""
    if variable is None:
        return None
    key = os.environ.get(variable)
    if key:
        report.ok(f"reviewer {settings.name}: ${variable} is set")
        return key
    if options.on_missing_key == "skip":
        report.ok(
            f"reviewer {settings.name}: ${variable} is not set; it will be skipped (on_missing_key = skip)"
        )
    else:
        report.unreachable(f"reviewer {settings.name}: the key variable ${variable} is not set")
    return False


def _model_ids(data: Any) -> list[str]:
    items = data.get("data") if isinstance(data, dict) else None
    return [str(item.get("id")) for item in items or [] if isinstance(item, dict)]


def _check_openai(
    settings: ReviewerSettings, options: ModelOptions, key: str | None, report: DoctorReport
) -> None:
    # OpenAI's own API takes the defaults; any other server is asked what it takes.
    if _check_openai_model(settings, options, key, report) and settings.base_url is not None \
            and host_of(settings.base_url) != OPENAI_HOST:
        _probe_openai(settings, options, key, report)
    _check_openai_parameters(settings, options, report)


def _check_openai_parameters(settings: ReviewerSettings, options: ModelOptions, report: DoctorReport) -> None:
    """Options the model is known to refuse: on OpenAI's or Azure's API the request fails (a
    problem); through another server it may drop them (a note)."""
    model = (settings.model or "").rsplit("/", 1)[-1].lower()
    official = settings.base_url is None or host_of(settings.base_url) == OPENAI_HOST or options.api_version
    say = report.config if official else report.note
    where = f"reviewer {settings.name}"
    if options.temperature is not None and _REASONING_MODEL.match(model):
        say(f"{where}: temperature = {options.temperature:g} is refused by reasoning model {settings.model!r} "
            "(o-series and gpt-5 models take no temperature); remove reviewer."
            f"{settings.name}.temperature")
    if options.reasoning_effort is not None and _NON_REASONING_MODEL.match(model):
        say(f"{where}: reasoning_effort = {options.reasoning_effort!r} is refused by {settings.model!r}, which "
            f"does not reason; remove reviewer.{settings.name}.reasoning_effort")
    if options.reasoning_effort is not None and options.api_version and \
            options.api_version[:10] < AZURE_REASONING_API_VERSION:
        say(f"{where}: reasoning_effort needs Azure api_version {AZURE_REASONING_API_VERSION}-preview or later; "
            f"api_version {options.api_version!r} refuses it")


def _probe_body(settings: ReviewerSettings, options: ModelOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": settings.model, "messages": [{"role": "user", "content": PROBE_PROMPT}],
                            options.max_tokens_parameter: PROBE_CAP}
    form = openai.response_format(options.response_format, "probe", PROBE_SCHEMA)
    if form is not None:
        body["response_format"] = form
    if options.prompt_cache_retention is not None:  # a server that refuses it says so here, not in a review
        body["prompt_cache_retention"] = options.prompt_cache_retention
    return body


def _probe_openai(settings: ReviewerSettings, options: ModelOptions, key: str | None, report: DoctorReport) -> None:
    """One request capped at PROBE_CAP tokens with the configured structured form (and, when the
    server refuses it, each weaker one): which form the server takes, and whether it honours
    the cap field (llama-cpp-python refuses json_schema and ignores max_completion_tokens)."""
    where, field = f"reviewer {settings.name}", options.max_tokens_parameter
    other = next(name for name in TOKEN_CAP_FIELDS if name != field)
    chat = openai.endpoint(settings, options, "/chat/completions")
    timeout = min(settings.timeout, PROBE_TIMEOUT)
    asked, refused = options, []
    while True:
        try:
            result = post_json(chat, openai.headers(asked, key), _probe_body(settings, asked), timeout=timeout,
                               policy=RetryPolicy(0), key_variable=openai.key_variable(settings),
                               retry_timeouts=False)
            break
        except StructuredFormRejected as error:
            refused.append(f"response_format {asked.response_format} ({error})")
            weaker = openai.next_form(asked)
            if weaker is None:
                report.unreachable(f"{where}: the server refuses every structured form: {'; '.join(refused)}; "
                                   'set response_format = "text"')
                return
            asked = weaker
        except TransportBlocked as error:
            hint = (f": a request capped at {PROBE_CAP} tokens in {field} got no answer, so the server may ignore "
                    f'{field}; try max_tokens_parameter = "{other}"') if "timeout" in str(error) else ""
            if asked.prompt_cache_retention is not None and "prompt_cache_retention" in str(error):
                hint = f"; remove reviewer.{settings.name}.prompt_cache_retention"
            report.unreachable(f"{where}: {error}{hint}")
            return
    usage = result.data.get("usage")
    written = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if isinstance(written, int) and written > PROBE_CAP:
        report.config(f"{where}: the server ignores {field} ({written:,} tokens written to a cap of {PROBE_CAP}), so "
                      f'a review\'s length is unbounded; set max_tokens_parameter = "{other}"')
    else:
        report.ok(f"{where}: the server honours the token cap in {field}")
    if refused:
        report.note(f"{where}: the server refuses {refused[0]}; it takes {asked.response_format}: set "
                    f'response_format = "{asked.response_format}" (the review falls back by itself, at the cost of '
                    "one refused request per run)")
    else:
        report.ok(f"{where}: the server takes response_format {asked.response_format}")


def _check_openai_model(
    settings: ReviewerSettings, options: ModelOptions, key: str | None, report: DoctorReport
) -> bool:
    """The model is listed, or answers one token where no list is served; False when reported."""
    headers = openai.headers(options, key)
    url = openai.endpoint(settings, options, "/models")
    status, data = get_json(url, headers, settings.timeout)
    if status in (401, 403):
        report.unreachable(f"reviewer {settings.name}: HTTP {status} from {url}: the key was refused")
        return False
    if status == 200 and settings.model in _model_ids(data):
        report.ok(f"reviewer {settings.name}: {url} lists model {settings.model}")
        return True
    if status == 200 and _model_ids(data):
        report.unreachable(f"reviewer {settings.name}: {url} does not list model {settings.model!r}")
        return False
    # No model list here (Azure deployments, some proxies): one token of generation instead.
    body = {
        "model": settings.model,
        "messages": [{"role": "user", "content": "ping"}],
        options.max_tokens_parameter: 1,
    }
    chat = openai.endpoint(settings, options, "/chat/completions")
    try:
        post_json(
            chat,
            headers,
            body,
            timeout=settings.timeout,
            policy=RetryPolicy(0),
            key_variable=openai.key_variable(settings),
        )
    except TransportBlocked as error:
        report.unreachable(f"reviewer {settings.name}: {error}")
        return False
    report.ok(f"reviewer {settings.name}: {chat} answers for model {settings.model}")
    return True


def _check_anthropic(
    settings: ReviewerSettings, options: ModelOptions, key: str | None, report: DoctorReport
) -> None:
    url = anthropic.endpoint(settings, f"/v1/models/{settings.model}")
    status, _ = get_json(url, anthropic.headers(options, key), settings.timeout)
    if status == 200:
        report.ok(f"reviewer {settings.name}: model {settings.model} is known at {url}")
    elif status == 404:
        report.unreachable(
            f"reviewer {settings.name}: model {settings.model!r} is unknown (HTTP 404 from {url})"
        )
    else:
        report.unreachable(f"reviewer {settings.name}: HTTP {status} from {url}")


def _check_command(settings: ReviewerSettings, options: ModelOptions, report: DoctorReport) -> None:
    program = options.command[0]
    if shutil.which(program) is None:
        report.unreachable(f"reviewer {settings.name}: command {program!r} is not found or not executable")
    else:
        report.ok(f"reviewer {settings.name}: command {program!r} found")
    # The agent runs in a copy of the tree without .git, where `codex exec` refuses to start.
    if Path(program).name == "codex" and "exec" in options.command and "--skip-git-repo-check" not in options.command:
        report.config(f"reviewer {settings.name}: `codex exec` refuses to start outside a git repository, and the "
                      "agent runs in a copy of the tree without .git: add \"--skip-git-repo-check\" to "
                      f"reviewer.{settings.name}.command")
    if Path(program).name == "claude" and not ignores_project_settings(options.command):
        report.note(f"reviewer {settings.name}: `claude` reads the project's .claude/settings.json (hooks, env, "
                    "permissions) and .mcp.json; the snapshot holds the merge base's, but add \"--setting-sources\", "
                    f"\"user\", \"--strict-mcp-config\" (or \"--bare\") to reviewer.{settings.name}.command so "
                    "none runs")


def ignores_project_settings(command: Sequence[str]) -> bool:
    """A Claude Code command line that loads neither project/local settings nor the project's MCP servers."""
    if "--bare" in command:
        return True
    sources = {value for flag, value in zip(command, command[1:], strict=False) if flag == "--setting-sources"}
    sources |= {part.partition("=")[2] for part in command if part.startswith("--setting-sources=")}
    named = {name.strip() for value in sources for name in value.split(",")}
    return bool(sources) and not named & {"project", "local"} and "--strict-mcp-config" in command


def _check_independence(config: Config, settings: ReviewerSettings, report: DoctorReport) -> None:
    table: Mapping[str, Any] = config.sections.get("implementer", {})
    reader = TableReader(config.source or CONFIG_FILE, "implementer.", table)
    reader.warn_unknown(IMPLEMENTER_KEYS)
    implementer = {key: reader.string(key, None) for key in IMPLEMENTER_KEYS}
    if not implementer["model"]:
        report.config(
            f"reviewer {settings.name}: independent = true, but no [implementer] table names the "
            "implementer's provider and model to compare with"
        )
        return
    mine = {"provider": settings.provider, "model": settings.model, "base_url": settings.base_url}
    if all(implementer[key] in (None, mine[key]) for key in IMPLEMENTER_KEYS):
        report.config(
            f"reviewer {settings.name}: configured like the implementer ({settings.provider} "
            f"{settings.model}); an independent reviewer must differ from what wrote the code"
        )
    else:
        report.ok(f"reviewer {settings.name}: differs from the implementer ({implementer['model']})")


def check_reviewer(config: Config, name: str, report: DoctorReport) -> None:
    settings = config.reviewer(name)
    factory = providers.get(settings.provider)
    if factory is None:
        report.config(
            f"reviewer {name}: unknown provider {settings.provider!r}; "
            f"expected one of {', '.join(sorted(providers))}"
        )
        return
    missing = missing_settings(config, name)
    if missing is not None:
        report.config(str(missing))
        return
    try:
        options = parse_options(settings) if settings.provider in MODEL_PROVIDERS else None
        if options is None:
            factory(settings)
    except ReviewgateError as error:
        report.config(str(error))
        return
    if options is None:
        report.ok(f"reviewer {name}: {settings.provider}, needs no key and no network")
        return
    if options.independent:
        _check_independence(config, settings, report)
    if options.verify_findings and options.verifier not in (None, name):
        assert options.verifier is not None
        try:  # the reviewer that takes the second look must exist and be reachable too
            verifier_settings(config, settings, options.verifier)
        except ReviewgateError as error:
            report.config(str(error))
            return
        if options.verifier not in config.review.reviewers:
            check_reviewer(config, options.verifier, report)
    variable = {"openai": openai.key_variable, "anthropic": anthropic.key_variable}.get(
        settings.provider, lambda item: item.api_key_env or None
    )(settings)
    key = _key(settings, variable, options, report)
    if key is False:
        return
    assert key is None or isinstance(key, str)
    try:
        if settings.provider == "openai":
            _check_openai(settings, options, key, report)
        elif settings.provider == "anthropic":
            _check_anthropic(settings, options, key, report)
        else:
            _check_command(settings, options, report)
    except TransportBlocked as error:
        report.unreachable(f"reviewer {name}: {printable(str(error))}")
