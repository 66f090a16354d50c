"""One JSON POST to a model API, retried the way the providers ask, never turned into approval.

429 and 5xx are retried with exponential backoff and
jitter, honoring `Retry-After`; connection errors and timeouts are retried (a timeout only when
`retry_timeouts`: a local server keeps generating the answer it was asked for, so a retry would
queue behind it), then blocked; 401/403 (and LiteLLM's 400 for a key it cannot check) block at
once naming the variable that holds the key; an error that names `response_format` is the
server refusing the structured form, not a transient fault: StructuredFormRejected at once, for
the caller to ask with a weaker form; anything else blocks with the server's own message. Each
attempt is bounded (exchange.py): the whole answer within `timeout` seconds, and within the
chunk's deadline (deadline.py), and at most `max_answer_bytes` long; an answer over the cap
blocks at once (asking again would get the same), and a stop request (the gate was cancelled)
blocks with its reason.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import requests

from reviewgate import stopping
from reviewgate.reviewers.model.deadline import DeadlinePassed, bounded, passed_text, remaining
from reviewgate.reviewers.model.exchange import (
    Answer,
    AnswerTooLarge,
    ExchangeStopped,
    ExchangeTimeout,
    post_bounded,
)
from reviewgate.text import printable, truncate

# 408 request timeout, 409 (OpenAI: "conflict", retry), 429 rate limit, 5xx server side,
# 529 Anthropic "overloaded_error" (docs: API errors).
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_ERROR_TEXT = 300  # a server's error body is untrusted text: enough to explain, no more
# A review is a few kB of JSON; 4 MiB leaves room for any honest answer and bounds memory.
DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024


# An error body naming the structured-output parameter: llama-cpp-python's HTTP 500 for
# `json_schema` ("response_format.type: Input should be 'text' or 'json_object'"), or a 400.
_FORM_ERROR = re.compile(rb"response_format|json_schema", re.IGNORECASE)
# LiteLLM's proxy answers a key it cannot look up with HTTP 400 `no_db_connection`.
_KEY_ERROR = re.compile(rb"no_db_connection|invalid[ _]api[ _]key|authentication ?error", re.IGNORECASE)


class TransportBlocked(Exception):
    """The reviewer could not get an answer; the message is the blocked reason."""


class StructuredFormRejected(TransportBlocked):
    """The server refused the request's `response_format`; asking again the same way is futile."""


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0

    def backoff(self, attempt: int) -> float:
        """Exponential with jitter (half to full of the step), so parallel chunks spread out."""
        step: float = self.base_delay * 2.0**attempt
        return min(self.max_delay, step * random.uniform(0.5, 1.0))


def retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds or an HTTP date (RFC 9110, section 10.2.3)."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _decoded(answer: Answer) -> Any:
    """The JSON body, or None when it is not JSON."""
    try:
        return json.loads(answer.content)
    except ValueError:
        return None


def _detail_text(detail: Any) -> str:
    """FastAPI's `{"detail": ...}` (vLLM, llama-cpp-python): a string, or validation errors."""
    if isinstance(detail, list):
        parts = []
        for item in detail[:3]:
            if isinstance(item, dict):
                where = ".".join(str(part) for part in item.get("loc") or [] if part != "body")
                parts.append(f"{where}: {item.get('msg', '')}" if where else str(item.get("msg", "")))
            else:
                parts.append(str(item))
        return "; ".join(parts)
    return str(detail)


def _error_text(answer: Answer) -> str:
    """The server's own message, as plain text (never a Python dict's repr)."""
    data = _decoded(answer)
    if data is None:
        text = answer.content[:MAX_ERROR_TEXT * 4].decode("utf-8", "replace")
        return truncate(printable(text.strip()), MAX_ERROR_TEXT, "…")
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if message is None and isinstance(data, dict) and "detail" in data:
        message = _detail_text(data["detail"])
    if message is None or not isinstance(message, str):
        message = json.dumps(message if message is not None else data, ensure_ascii=False)
    # One line: a validation error spans several, and the reason is read as one.
    return truncate(printable(" ".join(message.split())), MAX_ERROR_TEXT, "…")


@dataclass
class PostResult:
    data: dict[str, Any]
    requests: int


def post_json(
    url: str,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    *,
    timeout: float,
    policy: RetryPolicy,
    key_variable: str | None,
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    sleep: Callable[[float], None] = stopping.pause,
    retry_timeouts: bool = True,
) -> PostResult:
    """The decoded JSON answer; TransportBlocked with the reason when there is none."""
    attempts = 0
    last_problem = ""
    while True:
        attempts += 1
        retry_after: float | None = None
        retryable = True
        try:
            attempt_timeout = bounded(timeout)
            response = post_bounded(url, headers, body, timeout=attempt_timeout, max_bytes=max_answer_bytes)
        except DeadlinePassed as passed:
            raise TransportBlocked(f"{url}: {passed}" + (f" (last: {last_problem})" if last_problem else "")) from None
        except ExchangeStopped as stopped:
            raise TransportBlocked(str(stopped)) from None
        except AnswerTooLarge as large:
            raise TransportBlocked(
                f"{url}: the answer is larger than the cap of {max_answer_bytes:,} bytes "
                f"(max_answer_bytes; {large.args[0]:,} bytes or more); it was not read further"
            ) from None
        except (ExchangeTimeout, requests.Timeout):
            if attempt_timeout < timeout:
                last_problem = f"no whole answer before the chunk's deadline: {passed_text()}"
                retryable = False
            else:
                last_problem = f"no whole answer within {timeout:g}s (timeout)"
                if not retry_timeouts:
                    last_problem += ("; not retried: a local server keeps generating the answer it was "
                                     "asked for, so a retry would wait behind it (retry_timeouts)")
                    retryable = False
        except requests.ConnectionError as error:
            last_problem = f"cannot connect: {type(error).__name__}"
        else:
            status = response.status
            if status in (401, 403) or (status == 400 and _KEY_ERROR.search(response.content[:4096])):
                variable = f"${key_variable}" if key_variable else "the configured key"
                raise TransportBlocked(
                    f"HTTP {status} from {url}: the key in {variable} was refused ({_error_text(response)})"
                )
            if status >= 400 and "response_format" in body and _FORM_ERROR.search(response.content[:16384]):
                raise StructuredFormRejected(f"HTTP {status} from {url}: {_error_text(response)}")
            if status in RETRY_STATUSES:
                last_problem = f"HTTP {status}: {_error_text(response)}"
                retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            elif status >= 400:
                raise TransportBlocked(f"HTTP {status} from {url}: {_error_text(response)}")
            else:
                data = _decoded(response)
                if not isinstance(data, dict):
                    raise TransportBlocked(f"HTTP {status} from {url}: the answer is not a JSON object")
                return PostResult(data, attempts)
        if not retryable or attempts > policy.retries:
            raise TransportBlocked(f"{url}: {last_problem}; gave up after {attempts} attempt(s)")
        delay = policy.backoff(attempts - 1) if retry_after is None else min(retry_after, policy.max_delay)
        left = remaining()
        if left is not None and delay >= left:
            raise TransportBlocked(f"{url}: {last_problem}; no retry: {passed_text()}")
        sleep(delay)
        reason = stopping.stop_reason()
        if reason is not None:
            raise TransportBlocked(reason)


def get_json(url: str, headers: Mapping[str, str], timeout: float) -> tuple[int, Any]:
    """One GET for `doctor`: (status, decoded body or None); connection problems raise TransportBlocked."""
    try:
        response = requests.get(url, headers=dict(headers), timeout=timeout)
    except requests.RequestException as error:
        raise TransportBlocked(f"{url}: cannot connect: {type(error).__name__}") from None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None
