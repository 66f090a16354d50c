"""A small REST client on `requests` shared by the GitHub and GitLab clients.

It knows the forge etiquette both APIs document, and nothing about either API's paths:
- pagination through the `Link: <...>; rel="next"` header (GitHub "Using pagination in the
  REST API"; GitLab "REST API: pagination", which sends the same header);
- `Retry-After` on 429 and on GitHub's secondary rate limits (a 403 or 429 carrying it);
- `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset` (epoch seconds) on the primary limit;
- a 403 that says "secondary rate limit" without a header: GitHub asks to wait at least a
  minute ("Best practices for using the REST API");
- `Retry-After` on any other status that carries it (a 503 in maintenance), too;
- 5xx and connection failures retried with exponential backoff.
Every call of one run draws on one `Budget` (`publish_timeout`, 60 s by default): each request's
timeout and each wait is cut to what is left, a wait that does not fit is not waited for, and
once it is spent calls fail at once, so a forge that never answers holds the verdict back for
the budget, not for minutes. Only the call that completes a check run the gate started gets one
short try past it (`essential`), so the run does not hang `in_progress`. Waits longer than
`RetryPolicy.max_wait_seconds` are not waited for either: the call fails and the sink lists what
was not published.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import requests

# GitHub: "If you receive a secondary rate limit error ... wait for at least one minute".
SECONDARY_LIMIT_WAIT_SECONDS = 60.0
# Attempts per request, the first included: enough to ride out one 429 and a 5xx or two.
MAX_ATTEMPTS = 4
REQUEST_TIMEOUT_SECONDS = 30.0
DEFAULT_PUBLISH_TIMEOUT = 60.0
# The one try an essential call (completing a started check run) gets once the budget is spent.
ESSENTIAL_TIMEOUT_SECONDS = 5.0


class ForgeError(Exception):
    """A forge call that failed after retries; the message names the method, path and status."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ForgeDenied(ForgeError):
    """401 or 403 (not a rate limit): the token may not do this (a fork PR's read-only
    token, CI_JOB_TOKEN on notes). Publishing falls back; it is never retried."""


class ForgeNotFound(ForgeError):
    """404: the thing is not there (a comment deleted meanwhile, a label already removed). Not a
    permission problem: the caller makes it again or lets it be."""


class Budget:
    """The time one run may spend on forge calls (requests and the waits between them), shared
    by every client of the run. Time spent elsewhere (the verify, the review) does not count."""

    def __init__(self, seconds: float = DEFAULT_PUBLISH_TIMEOUT) -> None:
        self.seconds = seconds
        self._spent = 0.0  # by calls that ended
        self._since: float | None = None  # when the call in progress began

    @property
    def spent(self) -> float:
        running = time.monotonic() - self._since if self._since is not None else 0.0
        return self._spent + running

    def remaining(self) -> float:
        return self.seconds - self.spent

    def limit(self, seconds: float) -> None:
        """At most `seconds` more from now (a cancelled gate publishes in a hurry)."""
        self.seconds = min(self.seconds, self.spent + seconds)

    @contextmanager
    def spending(self) -> Iterator[None]:
        if self._since is not None:  # nested (a page of a listing): the outer call counts
            yield
            return
        self._since = time.monotonic()
        try:
            yield
        finally:
            self._spent += time.monotonic() - self._since
            self._since = None


@dataclass(frozen=True)
class RetryPolicy:
    backoff_seconds: float = 1.0  # first 5xx wait, doubled per attempt
    max_wait_seconds: float = 60.0  # longest single wait we accept before giving up


DEFAULT_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Response:
    status: int
    data: Any
    headers: Mapping[str, str]


def _retry_after(headers: Mapping[str, str], now: float) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # the email package is a fifth of start-up: on use

    try:  # RFC 9110 also allows an HTTP date
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None


def rate_limit_wait(status: int, headers: Mapping[str, str], body: str, now: float) -> float | None:
    """How long the forge asks us to wait before retrying, or None when it does not ask."""
    after = _retry_after(headers, now)
    if after is not None:
        return after
    if status not in (403, 429):
        return None
    if headers.get("X-RateLimit-Remaining") == "0" and (headers.get("X-RateLimit-Reset") or "").isdigit():
        return max(0.0, float(headers["X-RateLimit-Reset"]) - now)
    if status == 429 or "secondary rate limit" in body.lower():
        return SECONDARY_LIMIT_WAIT_SECONDS
    return None


class RestClient:
    """JSON over HTTPS to one API root with one set of auth headers. The token lives only in the
    session's headers: it is never part of a message or an exception."""

    def __init__(
        self,
        api_url: str,
        headers: Mapping[str, str],
        policy: RetryPolicy = DEFAULT_POLICY,
        sleep: Callable[[float], None] = time.sleep,
        budget: Budget | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.policy = policy
        self.sleep = sleep
        self.budget = budget or Budget()
        # Imported when a forge is reached, not at start-up: requests costs about 0.1 s to import,
        # and local runs and fork PRs publish nowhere.
        import requests

        self._requests = requests
        self.session: requests.Session = requests.Session()
        self.session.headers.update({"User-Agent": "reviewgate", **headers})

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.api_url}/{path.lstrip('/')}"

    def request(self, method: str, path: str, body: Any = None,
                params: Mapping[str, Any] | None = None, essential: bool = False) -> Response:
        with self.budget.spending():
            return self._request(method, path, body, params, essential)

    def _timeout(self, where: str, essential: bool, attempt: int) -> float:
        remaining = self.budget.remaining()
        if essential and attempt == 1:
            return min(REQUEST_TIMEOUT_SECONDS, max(remaining, ESSENTIAL_TIMEOUT_SECONDS))
        if remaining > 0:
            return min(REQUEST_TIMEOUT_SECONDS, remaining)
        raise ForgeError(f"{where}: not sent, the publishing budget of {self.budget.seconds:g}s "
                         "(publish_timeout) is spent")

    def _request(self, method: str, path: str, body: Any, params: Mapping[str, Any] | None,
                 essential: bool) -> Response:
        url = self.url(path)
        where = f"{method} {path.split('?')[0]}"
        backoff = self.policy.backoff_seconds
        for attempt in range(1, MAX_ATTEMPTS + 1):
            last = attempt == MAX_ATTEMPTS
            timeout = self._timeout(where, essential, attempt)
            try:
                response = self.session.request(method, url, json=body, params=params, timeout=timeout)
            except self._requests.RequestException as error:
                if last:
                    raise ForgeError(f"{where}: {type(error).__name__}") from None
                self._wait(backoff, where, cause=type(error).__name__)
                backoff *= 2
                continue
            if response.status_code < 300:
                try:
                    data = response.json() if response.content else None
                except ValueError:  # a proxy's HTML page, a truncated answer
                    raise ForgeError(f"{where}: HTTP {response.status_code} with a body that is not JSON") from None
                return Response(response.status_code, data, response.headers)
            wait = rate_limit_wait(response.status_code, response.headers, response.text[:2000],
                                   time.time())
            if wait is not None and not last:
                self._wait(wait, where, asked=f"HTTP {response.status_code} with Retry-After")
                continue
            if response.status_code >= 500 and not last:
                self._wait(backoff, where, cause=f"HTTP {response.status_code}")
                backoff *= 2
                continue
            message = f"{where}: HTTP {response.status_code}"
            if response.status_code == 404:
                raise ForgeNotFound(message, 404)
            if response.status_code in (401, 403) and wait is None:
                raise ForgeDenied(message, response.status_code)
            raise ForgeError(message, response.status_code)
        raise ForgeError(f"{where}: gave up after {MAX_ATTEMPTS} attempts")

    def _wait(self, seconds: float, where: str, asked: str = "", cause: str = "") -> None:
        """`asked`: the forge's own request to wait (Retry-After); `cause`: what a backoff retries."""
        if seconds > self.policy.max_wait_seconds:
            raise ForgeError(
                f"{where}: the forge asked to wait {seconds:.0f}s, "
                f"over the {self.policy.max_wait_seconds:g}s limit"
            )
        remaining = self.budget.remaining()
        if seconds > remaining:
            budget = f"the publishing budget ({self.budget.seconds:g}s, publish_timeout)"
            if asked:
                raise ForgeError(f"{where}: the forge asked to wait {seconds:.0f}s ({asked}), more than the "
                                 f"{max(0.0, remaining):.0f}s left of {budget}; gave up at once")
            raise ForgeError(f"{where}: {cause}, and no time is left to retry within {budget}")
        self.sleep(seconds)

    def paginate(self, path: str, params: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """Every item of a list endpoint, following `Link: rel="next"` until the last page."""
        next_url: str | None = path
        next_params: Mapping[str, Any] | None = {"per_page": 100, **(params or {})}
        while next_url is not None:
            items, next_url = self._get_page(self.url(next_url), next_params)
            next_params = None  # the next link carries the whole query
            yield from items

    def _get_page(self, url: str, params: Mapping[str, Any] | None) -> tuple[list[Any], str | None]:
        response = self.request("GET", url, params=params)
        items = response.data if isinstance(response.data, list) else []
        link = self._requests.utils.parse_header_links(response.headers.get("Link", ""))
        following = next((item.get("url") for item in link if item.get("rel") == "next"), None)
        return items, following
