"""The reviewer registry: provider name -> factory. A new reviewer is its module and one line here."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from reviewgate.config import Config, ReviewerSettings
from reviewgate.errors import ConfigError, UsageError
from reviewgate.reviewers.base import Reviewer
from reviewgate.reviewers.builtin import BuiltinReviewer
from reviewgate.text import did_you_mean

ReviewerFactory = Callable[[ReviewerSettings], Reviewer]


def _on_use(module: str) -> ReviewerFactory:
    """The model providers bring HTTP clients and JSON Schema validation with them: import a
    provider's module only when a configured reviewer uses it, so builtin-only runs start fast."""

    def build(settings: ReviewerSettings) -> Reviewer:
        factory: ReviewerFactory = importlib.import_module(module).build
        return factory(settings)

    return build


providers: dict[str, ReviewerFactory] = {
    "builtin": BuiltinReviewer.from_settings,
    "openai": _on_use("reviewgate.reviewers.openai"),
    "anthropic": _on_use("reviewgate.reviewers.anthropic"),
    "command": _on_use("reviewgate.reviewers.command"),
}
# What a provider cannot run without, said when a reviewer of it has no [reviewer.NAME] table.
REQUIRED_SETTINGS = {
    "openai": 'model = "…" (and base_url, api_key_env unless OpenAI\'s defaults fit)',
    "anthropic": 'model = "…" (and api_key_env unless ANTHROPIC_API_KEY fits)',
    "command": 'command = ["your-agent", "--print"]',
}


def _named_by(config: Config, name: str) -> str:
    """Where the user typed a reviewer's name: the flag (`--reviewer openai`) or the file's key."""
    if config.review.reviewers_flag:
        return f"{config.review.reviewers_flag} {name}"
    return f"{config.source}: review.reviewers: {name!r}" if config.source else f"reviewer {name!r}"


def missing_settings(config: Config, name: str) -> ConfigError | None:
    """A reviewer named without the [reviewer.NAME] table its provider cannot run without: say
    who named it and what is missing, and name the config file only when there is one."""
    provider = config.reviewer(name).provider
    if name in config.reviewers or provider not in REQUIRED_SETTINGS:
        return None
    settings = REQUIRED_SETTINGS[provider]
    if config.source:
        where = f"{config.source} has no [reviewer.{name}] table; add one with {settings}"
    else:
        where = (f"there is no config file; create .reviewgate.toml (or [tool.reviewgate] in pyproject.toml) "
                 f"with a [reviewer.{name}] table: {settings}")
    return ConfigError(f"{_named_by(config, name)}: this reviewer needs settings and {where}; "
                       "see docs/reviewers.md")


def build_reviewers(config: Config) -> list[Reviewer]:
    """One reviewer per name in `review.reviewers`, in order; an unknown name is a usage error."""
    built: list[Reviewer] = []
    for name in config.review.reviewers:
        settings = config.reviewer(name)
        factory = providers.get(settings.provider)
        if factory is None:
            known = ", ".join(sorted(providers))
            where = (f"{settings.source}: reviewer.{name}.provider: {settings.provider!r}" if name in config.reviewers
                     else _named_by(config, name))
            typed, names = (settings.provider, providers) if name in config.reviewers else (name, [*providers, *config.reviewers])
            raise UsageError(f"{where}: unknown reviewer; expected one of {known}, or a [reviewer.{name}] table naming "
                             f"a provider{did_you_mean(typed, names)}")
        missing = missing_settings(config, name)
        if missing is not None:
            raise missing
        reviewer = factory(settings)
        attach = getattr(reviewer, "attach_review_policy", None)
        if attach is not None:  # a model reviewer: min_confidence, and another reviewer as its verifier
            attach(config)
        built.append(reviewer)
    return built
