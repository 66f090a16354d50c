"""The `[github]` and `[gitlab]` config sections (reserved in config.OPEN_SECTIONS), validated here.

```toml
[github]
check_name = "reviewgate"            # the check run's name, shown on the PR
blocked_conclusion = "failure"       # neutral | failure: how a blocked review concludes
label = "needs-human-review"         # added when the round cap is reached
trusted_authors = ["octocat"]        # besides OWNER / MEMBER / COLLABORATOR
check_run = true                     # publish a check run when the token allows
comment = true                       # keep one summary comment on the PR
review_comments = false              # also comment on the lines of blocking findings
retry_backoff = 1.0                  # seconds before the first retry of a 5xx, doubled each time
max_wait = 60                        # longest rate-limit wait in seconds; over it publishing gives up
publish_timeout = 60                 # seconds all of one run's forge calls may take together
```
`[gitlab]` takes `label`, `trusted_authors`, `comment`, `retry_backoff`, `max_wait`,
`publish_timeout` and `discussions` (the same as GitHub's `review_comments`: a discussion on the
diff per blocking finding).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewgate.config import TableReader
from reviewgate.forge.http import DEFAULT_PUBLISH_TIMEOUT, RetryPolicy

DEFAULT_CHECK_NAME = "reviewgate"
DEFAULT_LABEL = "needs-human-review"
# GitHub counts `neutral` as passing for required checks, so a review that could not be done
# defaults to `failure`: a blocked review is never reported as approval (DESIGN, exit codes).
DEFAULT_BLOCKED_CONCLUSION = "failure"
BLOCKED_CONCLUSIONS = ("neutral", "failure")
# GitHub's label name limit (REST "Create a label": name up to 50 characters).
MAX_LABEL_LENGTH = 50

_GITHUB_KEYS = ("check_name", "blocked_conclusion", "label", "trusted_authors", "check_run", "comment",
                "retry_backoff", "max_wait", "publish_timeout", "review_comments")
_GITLAB_KEYS = ("label", "trusted_authors", "comment", "retry_backoff", "max_wait", "publish_timeout",
                "discussions")
# The key that turns inline comments on, per forge: GitHub calls them review comments, GitLab
# discussions on the diff.
INLINE_KEYS = {"github": "review_comments", "gitlab": "discussions"}


@dataclass(frozen=True)
class ForgeSettings:
    check_name: str = DEFAULT_CHECK_NAME
    blocked_conclusion: str = DEFAULT_BLOCKED_CONCLUSION
    label: str = DEFAULT_LABEL
    trusted_authors: tuple[str, ...] = ()
    check_run: bool = True
    comment: bool = True
    inline_comments: bool = False
    retry: RetryPolicy = RetryPolicy()
    publish_timeout: float = DEFAULT_PUBLISH_TIMEOUT


def _name(reader: TableReader, key: str, default: str, limit: int) -> str:
    value = reader.string(key, default)
    if not value or not value.strip() or len(value) > limit or "\n" in value:
        raise reader.fail(key, f"a non-empty single-line name of at most {limit} characters", value)
    return value


def parse_forge_settings(
    sections: Mapping[str, Mapping[str, Any]], provider: str, source: str | None
) -> ForgeSettings:
    """The section for `provider` (github | gitlab); a wrong type or value is a ConfigError (exit 2)."""
    table = sections.get(provider, {})
    reader = TableReader(source or "config", f"{provider}.", table)
    reader.warn_unknown(_GITHUB_KEYS if provider == "github" else _GITLAB_KEYS)
    blocked = reader.string("blocked_conclusion", DEFAULT_BLOCKED_CONCLUSION)
    if blocked not in BLOCKED_CONCLUSIONS:
        raise reader.fail("blocked_conclusion", " or ".join(BLOCKED_CONCLUSIONS), blocked)
    authors = reader.strings("trusted_authors", ())
    if any(not author.strip() for author in authors):
        raise reader.fail("trusted_authors", "a list of non-empty user names", list(authors))
    return ForgeSettings(
        # GitHub check run names have no documented limit; 100 keeps the PR's checks list readable.
        check_name=_name(reader, "check_name", DEFAULT_CHECK_NAME, 100),
        blocked_conclusion=blocked,
        label=_name(reader, "label", DEFAULT_LABEL, MAX_LABEL_LENGTH),
        trusted_authors=tuple(author.strip().lower() for author in authors),
        check_run=reader.boolean("check_run", True),
        comment=reader.boolean("comment", True),
        inline_comments=reader.boolean(INLINE_KEYS[provider], False),
        retry=RetryPolicy(
            backoff_seconds=reader.number("retry_backoff", 1.0),
            max_wait_seconds=reader.number("max_wait", 60.0),
        ),
        publish_timeout=reader.number("publish_timeout", DEFAULT_PUBLISH_TIMEOUT, minimum=1.0),
    )
