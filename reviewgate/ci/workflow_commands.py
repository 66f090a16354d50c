"""GitHub Actions workflow commands, escaped so untrusted text can never start a second command.

Escaping as the runner's ActionCommand does it: data escapes %, \\r, \\n; property values
also escape : and , (docs: "Workflow commands for GitHub Actions", and actions/toolkit's
command.ts escapeData / escapeProperty).
"""

from __future__ import annotations

from collections.abc import Mapping

from reviewgate.escaping import plain


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", properties: Mapping[str, object] | None = None) -> str:
    """One line `::name key=value,...::message` with every part escaped, credentials masked and
    control bytes removed (escaping.plain: the message is shown as text)."""
    rendered = ",".join(
        f"{key}={escape_property(plain(str(value)))}"
        for key, value in (properties or {}).items()
        if value is not None
    )
    return f"::{name}{' ' + rendered if rendered else ''}::{escape_data(plain(message))}"


def stop_commands_token() -> str:
    """A fresh random token for ::stop-commands::, so text being fenced cannot guess it."""
    import secrets  # on GitHub only: a local run's start-up does not load it

    return secrets.token_hex(16)
