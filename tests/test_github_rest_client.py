"""The REST client's forge etiquette, over real HTTP: pagination, rate limits, backoff, denial."""

from __future__ import annotations

import time

import pytest

from reviewgate.forge.http import (
    MAX_ATTEMPTS,
    ForgeDenied,
    ForgeError,
    RestClient,
    RetryPolicy,
    rate_limit_wait,
)
from testing.forge_server import ForgeServer

COMMENTS = r"/issues/7/comments$"


def _client(server: ForgeServer, waits: list[float], max_wait: float = 5.0) -> RestClient:
    policy = RetryPolicy(0.01, max_wait)
    return RestClient(server.url, {"Authorization": "Bearer t"}, policy, sleep=waits.append)


def test_pagination_follows_link_headers_to_the_last_page() -> None:
    with ForgeServer() as server:
        for index in range(5):
            server.state.add_comment(f"c{index}", "someone", "NONE")
        items = list(_client(server, []).paginate("repos/o/r/issues/7/comments"))
    assert [item["body"] for item in items] == ["c0", "c1", "c2", "c3", "c4"]
    assert [item.query.get("page") for item in server.state.posts("GET", COMMENTS)] == [None, ["2"], ["3"]]


def test_retry_after_is_honored_then_the_request_succeeds() -> None:
    waits: list[float] = []
    with ForgeServer() as server:
        server.state.scripted.append(("GET", COMMENTS, 429, {"Retry-After": "2"}, {"message": "slow down"}))
        server.state.scripted.append(("GET", COMMENTS, 403, {"Retry-After": "3"},
                                      {"message": "You have exceeded a secondary rate limit"}))
        response = _client(server, waits).request("GET", "repos/o/r/issues/7/comments")
    assert response.status == 200
    assert waits == [2.0, 3.0]


def test_a_secondary_limit_without_header_waits_a_minute_and_over_max_wait_gives_up() -> None:
    with ForgeServer() as server:
        server.state.scripted.append(("GET", COMMENTS, 403, {}, {"message": "secondary rate limit"}))
        with pytest.raises(ForgeError, match="asked to wait 60s, over the 5s limit"):
            _client(server, []).request("GET", "repos/o/r/issues/7/comments")


def test_an_exhausted_primary_limit_waits_until_reset() -> None:
    reset = str(int(time.time()) + 2)
    waits: list[float] = []
    with ForgeServer() as server:
        headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}
        server.state.scripted.append(("GET", COMMENTS, 403, headers, {"message": "limit"}))
        _client(server, waits).request("GET", "repos/o/r/issues/7/comments")
    assert len(waits) == 1 and 0 < waits[0] <= 2


def test_5xx_is_retried_with_doubling_backoff_then_fails_with_the_status() -> None:
    waits: list[float] = []
    with ForgeServer() as server:
        for _ in range(MAX_ATTEMPTS):
            server.state.scripted.append(("GET", COMMENTS, 503, {}, {"message": "unavailable"}))
        with pytest.raises(ForgeError, match=r"GET repos/o/r/issues/7/comments: HTTP 503") as raised:
            _client(server, waits).request("GET", "repos/o/r/issues/7/comments")
    assert raised.value.status == 503
    assert waits == [0.01, 0.02, 0.04]


def test_a_plain_403_is_a_denial_and_is_not_retried() -> None:
    with ForgeServer() as server:
        server.state.read_only_tokens.add("t")
        with pytest.raises(ForgeDenied, match="HTTP 403"):
            _client(server, []).request("POST", "repos/o/r/issues/7/comments", body={"body": "x"})
    assert len(server.state.requests) == 1


def test_rate_limit_wait_reads_http_dates_and_honours_retry_after_on_any_status() -> None:
    now = 1_700_000_000.0
    assert rate_limit_wait(429, {"Retry-After": "Tue, 14 Nov 2023 22:13:30 GMT"}, "", now) == 10.0
    assert rate_limit_wait(503, {"Retry-After": "5"}, "", now) == 5.0  # a forge in maintenance
    assert rate_limit_wait(500, {}, "", now) is None
    assert rate_limit_wait(403, {}, "Resource not accessible by integration", now) is None


def test_a_2xx_answer_that_is_not_json_is_a_forge_error() -> None:
    with ForgeServer() as server:
        server.state.scripted.append(("GET", COMMENTS, 200, {}, b"<html>proxy</html>"))
        with pytest.raises(ForgeError, match="HTTP 200 with a body that is not JSON"):
            _client(server, []).request("GET", "repos/o/r/issues/7/comments")
