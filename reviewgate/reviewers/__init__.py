"""The reviewer registry: provider name -> factory. A new reviewer is its module and one line here."""

from __future__ import annotations

from collections.abc import Callable

from reviewgate.config import Config, ReviewerSettings
from reviewgate.errors import UsageError
from reviewgate.reviewers import anthropic, command, openai
from reviewgate.reviewers.base import Reviewer
from reviewgate.reviewers.builtin import BuiltinReviewer

ReviewerFactory = Callable[[ReviewerSettings], Reviewer]

providers: dict[str, ReviewerFactory] = {
    "builtin": BuiltinReviewer.from_settings,
    "openai": openai.build,
    "anthropic": anthropic.build,
    "command": command.build,
}


def build_reviewers(config: Config) -> list[Reviewer]:
    """One reviewer per name in `review.reviewers`, in order; an unknown name is a usage error."""
    built: list[Reviewer] = []
    for name in config.review.reviewers:
        settings = config.reviewer(name)
        factory = providers.get(settings.provider)
        if factory is None:
            known = ", ".join(sorted(providers))
            where = f"[reviewer.{name}] provider {settings.provider!r}" if name in config.reviewers else f"reviewer {name!r}"
            raise UsageError(
                f"{where}: unknown reviewer; expected one of {known}, or a [reviewer.{name}] table naming a provider"
            )
        built.append(factory(settings))
    return built
