"""The reviewer registry: provider name -> factory. A new reviewer is its module and one line here."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from reviewgate.config import Config, ReviewerSettings
from reviewgate.errors import UsageError
from reviewgate.reviewers.base import Reviewer
from reviewgate.reviewers.builtin import BuiltinReviewer

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
        reviewer = factory(settings)
        attach = getattr(reviewer, "attach_review_policy", None)
        if attach is not None:  # a model reviewer: min_confidence, and another reviewer as its verifier
            attach(config)
        built.append(reviewer)
    return built
