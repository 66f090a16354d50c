"""Whether a Rails application refuses a redirect to another host by itself: from 7.0 on
(`config.load_defaults 7.0` or later, or `raise_on_open_redirects = true`; `action_on_open_redirect
= :raise` in 8.1), `redirect_to` raises `UnsafeRedirectError` for another host unless the call says
`allow_other_host: true`, so a target the sender chooses is an error page, not a redirect. The
setting is read from the application's own config files, as Rails reads them."""

from __future__ import annotations

import re
from collections.abc import Callable

_LOAD_DEFAULTS = re.compile(r"^\s*config\.load_defaults\s*\(?\s*['\"]?(\d+)\.(\d+)", re.MULTILINE)
_SETTING = re.compile(
    r"^\s*(?:Rails\.application\.)?config\.action_controller\.(?:raise_on_open_redirects\s*=\s*(?P<raises>true|false)\b"
    r"|action_on_open_redirect\s*=\s*:(?P<action>raise|log|notify)\b)",
    re.MULTILINE,
)
# Read in this order, the last that sets it deciding (production's environment file loads after).
_SETTING_FILES = ("config/initializers/new_framework_defaults_7_0.rb", "config/application.rb",
                  "config/environments/production.rb")
ALLOWS_OTHER_HOSTS = re.compile(r"\ballow_other_host:\s*true\b")


def application_root(path: str) -> str | None:
    """The folder of the Rails application (or engine) a file under its `app/` belongs to."""
    if path.startswith("app/"):
        return ""
    head, found, _ = path.partition("/app/")
    return head + "/" if found else None


def refuses_other_hosts(read: Callable[[str], str | None], root: str) -> bool:
    """Whether the application at `root` raises on a redirect to another host."""
    application = read(root + "config/application.rb")
    if application is None:
        return False
    defaults = _LOAD_DEFAULTS.search(application)
    refuses = defaults is not None and (int(defaults.group(1)), int(defaults.group(2))) >= (7, 0)
    for name in _SETTING_FILES:
        text = read(root + name)
        for setting in _SETTING.finditer(text or ""):
            refuses = setting.group("raises") == "true" if setting.group("raises") else setting.group("action") == "raise"
    return refuses
