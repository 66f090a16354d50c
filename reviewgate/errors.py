"""The one family of user-facing errors, each carrying the exit code it ends the run with."""

from __future__ import annotations

EXIT_APPROVED = 0
EXIT_CHANGES_REQUESTED = 1
EXIT_USAGE = 2
EXIT_BLOCKED = 3


class ReviewgateError(Exception):
    """An error the user can act on: printed as one line, never as a traceback."""

    exit_code = EXIT_USAGE


class UsageError(ReviewgateError):
    """A bad flag, input or reference: exit 2."""


class ConfigError(ReviewgateError):
    """A malformed configuration or manifest file: exit 2, message names file and key."""


class BlockedError(ReviewgateError):
    """The review could not be done (reviewer unreachable, setup-side failure): exit 3."""

    exit_code = EXIT_BLOCKED
