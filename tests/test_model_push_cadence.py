"""The push cadence (prompt_cache.py, push_cadence.py): Anthropic's system block is marked for the
prompt cache on a run of one request only when the gate's own store says the reviewer sent the
same prefix within the cache's lifetime; checked through the CLI, push after push, on the
requests a real stand-in Messages API server records."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from reviewgate.cache_trust import KEY_FILE, ReviewCache
from reviewgate.chunk_store import PREFIX_SENT_FILE, ChunkStore
from reviewgate.reviewers.model.prompt_cache import still_cached
from testing.cli import run_cli
from testing.model_repo import BRANCH_CALC, calc_repo, write_config
from testing.model_server import ModelServer, Recorded, Reply, review_document
from testing.repo import commit

KEY = {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key"}
CACHE = ".reviewgate-cache"


class Pushes:
    """A branch pushed again and again, each push reviewed by `reviewgate run` with the kept cache."""

    def __init__(self, root: Path, server: ModelServer, **options: object) -> None:
        self.repo = calc_repo(root).path
        self.server = server
        write_config(self.repo, "claude", {"provider": "anthropic", "model": "claude-sonnet-4-6",
                                           "base_url": server.url, "timeout": 2, "retries": 0,
                                           "verify_findings": False, **options}, cache=True)
        self.pushes = 0

    def push(self) -> list[Recorded]:
        """A new line in the changed file (its chunk is asked again), reviewed; its requests."""
        if self.pushes:
            commit(self.repo, {"app/calc.py": BRANCH_CALC + "".join(f"\n\nLIMIT_{index} = {index}\n"
                                                                     for index in range(self.pushes))})
        self.pushes += 1
        start = len(self.server.posts())
        result = run_cli(self.repo, "run", "--base", "main", env=KEY)
        assert result.returncode == 0, result.stdout + result.stderr
        return self.server.posts()[start:]

    def store(self) -> ChunkStore:
        """The reviewer's store as the gate opens it: the key the first run made in the cache."""
        cache = self.repo / CACHE
        return ChunkStore(cache / "claude", ReviewCache(cache, (cache / KEY_FILE).read_bytes()))

    def recorded(self) -> tuple[str, datetime]:
        """The prefix and time the store holds (the entry's JSON line; its seal follows)."""
        document = json.loads((self.repo / CACHE / "claude" / PREFIX_SENT_FILE).read_text().splitlines()[0])
        return document["prefix"], datetime.fromisoformat(document["sent_at"])


def _marked(posts: list[Recorded]) -> list[object]:
    return [post.body["system"][0].get("cache_control") for post in posts]


@pytest.mark.parametrize("tools", [False, True])
def test_a_push_within_the_cache_lifetime_marks_the_prefix_and_the_first_push_does_not(
        tmp_path: Path, tools: bool) -> None:
    with ModelServer([Reply(review=review_document())]) as server:
        branch = Pushes(tmp_path, server, tools=tools)
        first = branch.push()
        prefix, first_sent = branch.recorded()
        second = branch.push()
        third = branch.push()
    assert [len(first), len(second), len(third)] == [1, 1, 1]  # a run of one request each
    # The first push: nothing says another will read it, so no write at 1.25 ×.
    assert _marked(first) == [None]
    # Seconds later: the second writes (or reads) the prefix, the third reads it.
    assert _marked(second) == _marked(third) == [{"type": "ephemeral"}]
    assert branch.recorded()[0] == prefix and branch.recorded()[1] > first_sent


def test_a_push_after_the_cache_lifetime_does_not_mark_the_prefix(tmp_path: Path) -> None:
    with ModelServer([Reply(review=review_document())]) as server:
        branch = Pushes(tmp_path, server)
        branch.push()
        prefix, sent_at = branch.recorded()
        # The previous review, as if it had been sent six minutes earlier: older than the
        # five-minute lifetime.
        branch.store().record_prefix_sent(prefix, sent_at - timedelta(minutes=6))
        late = branch.push()
        soon = branch.push()
    assert _marked(late) == [None]
    assert _marked(soon) == [{"type": "ephemeral"}]  # the late push was recorded: the next one follows it


def test_a_time_the_gate_did_not_seal_does_not_mark_the_prefix(tmp_path: Path) -> None:
    """A record written by anything but the gate (the branch's files, its verify) with the current
    time, or sealed with another key, is no record: the branch cannot buy itself a breakpoint."""
    with ModelServer([Reply(review=review_document())]) as server:
        branch = Pushes(tmp_path, server)
        branch.push()
        prefix, _ = branch.recorded()
        record = branch.repo / CACHE / "claude" / PREFIX_SENT_FILE
        now = datetime.now(timezone.utc).isoformat()
        record.write_text(json.dumps({"format": 5, "prefix": prefix, "sent_at": now}) + "\n")
        unsealed = branch.push()
        other_key = ReviewCache(branch.repo / CACHE, b"k" * 32)
        ChunkStore(branch.repo / CACHE / "claude", other_key).record_prefix_sent(prefix, datetime.now(timezone.utc))
        foreign = branch.push()
    assert _marked(unsealed) == [None]
    assert _marked(foreign) == [None]


def test_a_record_of_another_prefix_does_not_mark_this_one(tmp_path: Path) -> None:
    with ModelServer([Reply(review=review_document())]) as server:
        branch = Pushes(tmp_path, server)
        branch.push()
        branch.store().record_prefix_sent("another prefix", datetime.now(timezone.utc))
        posts = branch.push()
    assert _marked(posts) == [None]


def test_the_hour_long_cache_is_written_only_on_a_push_within_the_hour_of_the_last(tmp_path: Path) -> None:
    """`cache_ttl = "1h"` follows the cadence as the 5-minute default does, over an hour: a push
    50 minutes after the last marks the prefix (it reads the write, or writes it for the next),
    one 61 minutes after does not, and neither does the first. Pushes more than an hour apart are
    then billed what they cost without the cache (2 × a write nothing reads was the rest)."""
    from benchmarks.prompt_bill import ANTHROPIC_1H, anthropic_asked, billed

    with ModelServer([Reply(review=review_document())]) as server:
        branch = Pushes(tmp_path, server, cache_ttl="1h")
        pushes = [branch.push()]
        for minutes in (61, 50, 61):
            prefix, sent_at = branch.recorded()
            branch.store().record_prefix_sent(prefix, sent_at - timedelta(minutes=minutes))
            pushes.append(branch.push())
    assert [len(posts) for posts in pushes] == [1, 1, 1, 1]
    assert [_marked(posts) for posts in pushes] == [[None], [None], [{"type": "ephemeral", "ttl": "1h"}], [None]]
    apart = [anthropic_asked(number, posts[0].body) for number, posts in enumerate(pushes) if number != 2]
    assert billed(apart, ANTHROPIC_1H, across_pushes=False) == sum(asked.tokens for asked in apart)
    # The push within the hour: its prefix (whole tokens) written at 2 ×, for the push after it to read.
    within = anthropic_asked(0, pushes[2][0].body)
    assert billed([within], ANTHROPIC_1H, across_pushes=False) == within.tokens + within.prefix_tokens // 1


NOW = datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("sent_at", "ttl", "cached"), [
    (None, "5m", False),  # never sent, as far as the store knows
    (NOW - timedelta(minutes=4), "5m", True),
    (NOW - timedelta(minutes=4, seconds=31), "5m", False),  # within 30 s of expiring: the request comes later
    (NOW - timedelta(minutes=50), "1h", True),
    (NOW - timedelta(minutes=59, seconds=31), "1h", False),
    (NOW + timedelta(seconds=20), "5m", True),  # two runners' clocks a little apart
    (NOW + timedelta(minutes=2), "5m", False),  # a time from the future is not trusted
])
def test_still_cached(sent_at: datetime | None, ttl: str, cached: bool) -> None:
    assert still_cached(sent_at, NOW, ttl) is cached
