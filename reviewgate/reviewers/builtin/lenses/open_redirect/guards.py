"""What the open-redirect readers of every language share: the names of a check that a URL stays
on this site (`isSafeRedirect`, `url_has_allowed_host_and_scheme`), and the `Referer`, which is not
input worth following."""

from __future__ import annotations

import functools
import re


@functools.cache
def guard_patterns() -> dict[str, re.Pattern[str]]:
    safe_words = r"(?:safe|allow|valid|trust|whitelist|permit)"
    url_words = r"(?:url|uri|redirect|next|return|target|host|origin|location|destination)"
    return {
        "guard_name": re.compile(
            rf"(?i)^[\w$.]*(?:{safe_words}[\w$]*{url_words}|{url_words}[\w$]*{safe_words})[\w$]*$"
            r"|^(?:url_has_allowed_host_and_scheme|is_safe_url)$"
        ),
        "guard_call": re.compile(
            rf"(?i)[\w$]*(?:{safe_words}[\w$]*{url_words}|{url_words}[\w$]*{safe_words})[\w$]*\s*\("
        ),
    }


def is_referrer(source: str) -> bool:
    """"Back to where you came from": the browser sets the Referer to the page that linked here,
    so a link from another site sends its visitor back there, which it could do itself."""
    return "referer" in source.lower() or "referrer" in source.lower()

