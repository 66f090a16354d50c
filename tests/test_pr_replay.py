"""benchmarks/pr_replay.py end to end: a merged PR of three commits in a real repository,
replayed as three pushes against the stand-in model server, with and without the chunk cache;
and its bill (benchmarks/prompt_bill.py) on requests counted by hand."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.pr_replay import diff_blocks
from benchmarks.prompt_bill import ANTHROPIC_1H, ANTHROPIC_5M, OPENAI, Asked, billed
from testing.cli import clean_environment
from testing.model_server import Recorded
from testing.repo import commit, git, make_repo

REPO_ROOT = Path(__file__).resolve().parent.parent


def _module(name: str, functions: int) -> str:
    return "".join(f"def {name}_{index}(value):\n    return value * {index}\n\n\n" for index in range(functions))


def _replayed(tmp_path: Path, *flags: str) -> tuple[str, str]:
    """A merged PR of three pushes replayed: its merge commit and the replay's output."""
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"api/orders.py": _module("orders", 40),
                                                          "web/pages.py": _module("pages", 40)})
    commit(repo.path, {"web/pages.py": _module("pages", 41)}, "second push")
    commit(repo.path, {"web/pages.py": _module("pages", 42)}, "third push")
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "--no-ff", "-m", "Merge the feature (#7)", "feature")
    merge = git(repo.path, "rev-parse", "HEAD")
    completed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "pr_replay.py"), "--repo", str(repo.path), "--merge", merge,
         *flags], cwd=tmp_path, env=clean_environment(), capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    print(completed.stdout)
    return merge, completed.stdout


def _bills(output: str) -> dict[str, list[str]]:
    """Each pricing's row: within the lifetime, further apart, no caching."""
    return {parts[0].strip(): parts[1:] for line in output.splitlines()
            if line.startswith(("  openai", "  anthropic")) for parts in [line.rsplit(None, 3)]}


def test_a_replayed_pr_prints_each_push_and_what_the_cache_saved(tmp_path: Path) -> None:
    merge, output = _replayed(tmp_path)
    assert f"PR {merge[:10]} Merge the feature (#7): 3 push(es)" in output
    rows = [line.split() for line in output.splitlines() if re.match(r"  [0-9a-f]{10} ", line)]
    # push, lines, requests, characters, tokens per line, and the same without the cache, saved
    assert [row[2] for row in rows] == ["1", "1", "1"]  # one request a push: both files, then web/'s new function
    assert [row[5] for row in rows] == ["1", "1", "1"]  # without it: every chunk on every push, in one request
    assert [row[1] for row in rows] == ["320", "4", "4"]  # changed lines: from the merge base, then per push
    total = next(line for line in output.splitlines() if line.startswith("  PR total")).split()
    assert total[2:4] == ["328", "3"] and total[6] == "3"
    assert "all PRs: 328 changed lines; with the cache 3 requests" in output
    assert re.search(r"the cache saved \d+% of the characters and 0% of the requests", output)
    # One request a push. Seconds apart, the gate marks the prefix from the second push on (it
    # writes it, the third reads it); with each push long after the last, it marks none and the
    # 5-minute bill is the uncached one. OpenAI's automatic cache reads the later pushes' prefix.
    assert ("anthropic: 2 of 3 requests sent a cache breakpoint within the lifetime, 0 of 3 further apart"
            in output)
    bills = _bills(output)
    assert len(bills) == 3
    within, apart, whole = (float(value) for value in bills["openai, cached input 0.5x"])
    assert within < apart == whole
    five_minutes = [float(value) for name, values in bills.items() if "5-minute" in name for value in values]
    # Further apart no request is marked: its bill is at most the first run's billed whole, whose
    # marked requests also carry the breakpoint's own characters.
    assert five_minutes[0] < five_minutes[1] <= five_minutes[2]
    hour = next(values for name, values in bills.items() if "1h" in name)
    # The hour's breakpoints follow the same cadence: further apart none is sent (the uncached bill).
    assert float(hour[1]) == five_minutes[1] <= float(hour[2])
    parts = re.search(r"where the 3 openai requests' tokens per changed line go: the stable prefix ([\d.]+), "
                      r"the diff ([\d.]+), the context ([\d.]+), the tools' calls and answers ([\d.]+), "
                      r"the rest ([\d.]+)", output)
    assert parts is not None and float(parts.group(2)) > 0 and float(parts.group(4)) == 0
    assert sum(float(part) for part in parts.groups()) == pytest.approx(whole, abs=0.3)


def test_with_the_tools_pushes_further_apart_are_billed_no_more_than_without_caching(tmp_path: Path) -> None:
    """The stand-in calls no tool, so every push is one request: further apart none carries a
    breakpoint whose write nothing reads; within the lifetime the later pushes read it."""
    _, output = _replayed(tmp_path, "--tools")
    assert "tools on" in output
    assert ("anthropic: 2 of 3 requests sent a cache breakpoint within the lifetime, 0 of 3 further apart"
            in output)
    five_minutes = next(values for name, values in _bills(output).items() if "5-minute" in name)
    assert float(five_minutes[0]) < float(five_minutes[1]) <= float(five_minutes[2])


def test_a_stand_in_that_calls_the_tools_for_every_site_left_out_is_billed_for_each_round(tmp_path: Path) -> None:
    """A helper's body changes and 45 modules call it: the request shows two sites and names the
    rest; the stand-in asks `callers` (which shows 40 and names 3), then `read`s those 3, then
    answers: three requests, each re-sending the conversation, all billed."""
    callers = {f"app/module_{index}.py": f"from lib.numbers import parse\n\n\ndef use_{index}(raw):\n"
                                         f"    return parse(raw) + {index}\n" for index in range(45)}
    repo = make_repo(tmp_path, {"lib/numbers.py": "def parse(text):\n    return int(text)\n", **callers},
                     {"lib/numbers.py": "def parse(text):\n    return int(text.strip())\n"})
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "--no-ff", "-m", "Merge the fix (#8)", "feature")
    merge = git(repo.path, "rev-parse", "HEAD")
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "pr_replay.py"), "--repo", str(repo.path),
               "--merge", merge, "--tools"]
    outputs = []
    for extra in ([], ["--model-calls-tools"]):
        completed = subprocess.run([*command, *extra], cwd=tmp_path, env=clean_environment(), capture_output=True,
                                   text=True, timeout=300, check=False)
        assert completed.returncode == 0, completed.stdout + completed.stderr
        outputs.append(completed.stdout)
    [row] = [line.split() for line in outputs[1].splitlines() if re.match(r"  [0-9a-f]{10} ", line)]
    assert row[2] == "3" and row[5] == "3", outputs[1]  # callers, read, the answer; with the cache and without
    loop = re.search(r"the tools' calls and answers ([\d.]+)", outputs[1])
    assert loop is not None and float(loop.group(1)) > 0, outputs[1]
    without, calling = (float(_bills(output)["openai, cached input 0.5x"][2]) for output in outputs)
    assert calling > 2 * without  # the loop's three requests each re-send the prefix and the change
    # The 5-minute gate marks the second and third requests (the `callers` answer named more);
    # the gate under the hour marks none of a run of one chunk with no recent push, and its bill
    # is its own requests': what they cost without caching, not a 2 x write read once.
    assert ('2 of 3 requests sent a cache breakpoint within the lifetime, 2 of 3 further apart; '
            'with cache_ttl = "1h" 0 of 3 within, 0 of 3 further apart') in outputs[1], outputs[1]
    hour = next(values for name, values in _bills(outputs[1]).items() if "1h" in name)
    assert float(hour[0]) == float(hour[1]) == float(hour[2]), outputs[1]
    completed = subprocess.run([*command[:-1], "--model-calls-tools"], cwd=tmp_path, env=clean_environment(),
                               capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 2 and "--model-calls-tools needs --tools" in completed.stderr


def test_a_commit_that_is_not_a_merge_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "base\n"}, {"a.py": "A = 1\n"})
    completed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "pr_replay.py"), "--repo", str(repo.path),
         "--merge", repo.head_sha], cwd=tmp_path, env=clean_environment(), capture_output=True, text=True,
        timeout=60, check=False)
    assert completed.returncode == 2
    assert f"--merge {repo.head_sha}: not a merge commit of --repo" in completed.stderr


# Two requests on push 0, one on push 1; a 2,000-token prefix of 3,000 and 2,500 tokens in all.
# Anthropic's gate marked push 0's two requests (a run of two) and not push 1's (a run of one).
HAND = [Asked(0, "P", 2000, 3000, marked=True), Asked(0, "P", 2000, 3000, marked=True),
        Asked(1, "P", 2000, 2500, marked=False)]


@pytest.mark.parametrize(("pricing", "every_marked", "within", "apart"), [
    # OpenAI caches 1,920 of the 2,000 tokens (steps of 128), a write costing nothing extra, a read 0.5:
    # 3000, then 3000 - 1920 + 960 = 2040, then 2500 - 1920 + 960 = 1540 (further apart: 2500).
    (OPENAI, False, 3000 + 2040 + 1540, 3000 + 2040 + 2500),
    # A write 1000 + 1.25 × 2000 = 3500, a read 1000 + 0.1 × 2000 = 1200, push 1 unmarked: 2500.
    (ANTHROPIC_5M, False, 3500 + 1200 + 2500, 3500 + 1200 + 2500),
    # Every request marked, a write 1000 + 2 × 2000 = 5000, reads 1200 and 500 + 200 = 700; further
    # apart push 1 writes again: 500 + 4000.
    (ANTHROPIC_1H, True, 5000 + 1200 + 700, 5000 + 1200 + 4500),
])
def test_the_bill_of_three_requests_counted_by_hand(pricing: object, every_marked: bool, within: float,
                                                     apart: float) -> None:
    assert isinstance(pricing, type(OPENAI))
    requests = [Asked(item.push, item.prefix, item.prefix_tokens, item.tokens, item.marked or every_marked)
                for item in HAND]
    assert billed(requests, pricing, across_pushes=True) == pytest.approx(within)
    assert billed(requests, pricing, across_pushes=False) == pytest.approx(apart)


def test_a_prefix_below_the_minimum_is_billed_whole_even_when_marked() -> None:
    requests = [Asked(0, "P", 1000, 1500, marked=True), Asked(0, "P", 1000, 1500, marked=True)]
    assert billed(requests, ANTHROPIC_5M, across_pushes=True) == 3000  # claude-sonnet-4-6 caches from 1,024
    assert billed(requests, OPENAI, across_pushes=True) == 3000  # 1,000 is 896 in steps of 128: below 1,024


def _posted(diff: str) -> Recorded:
    user = f"The change:\n<<<DATA ab12 BEGIN>>>\n{diff}\n<<<DATA ab12 END>>>\n\nContext:\n<<<DATA ab12 BEGIN>>>\n(none)\n<<<DATA ab12 END>>>"
    return Recorded(0.0, "POST", "/v1/chat/completions", {}, {"messages": [{"role": "user", "content": user}]})


def test_a_block_sent_again_is_known_whatever_its_line_numbers_and_its_place_in_the_request() -> None:
    """A request packs many chunks: a later push's request holds a block an earlier one sent at
    other lines, after another file, and a block it changed."""
    first = diff_blocks(_posted("=== FILE a.py (modified) ===\n@@\n 3| x\n+4| y\n@@\n+9| z\n\n"
                                "=== FILE b.py (added) ===\n@@\n+1| q"))
    later = diff_blocks(_posted("=== FILE b.py (added) ===\n@@\n+1| q2\n\n"
                                "=== FILE a.py (modified) === (some of its changes)\n@@\n 13| x\n+14| y\n@@\n-| w"))
    assert len(first) == 3 and len(later) == 3
    assert [block in first for block in later] == [False, True, False]


def test_a_tool_loops_rounds_read_what_the_round_before_wrote() -> None:
    """Three rounds of a loop as the gate sends them (anthropic.py): the first unmarked, the
    second marked on the system block and its round's last block, the third also on its own.
    Round 2 writes up to its breakpoint (1.25 ×), round 3 reads that (0.1 ×) and writes the rest
    up to its own."""
    from benchmarks.prompt_bill import anthropic_asked
    tools = [{"name": "read", "description": "d", "input_schema": {}}]
    system = [{"type": "text", "text": "s" * 7900, "cache_control": {"type": "ephemeral"}}]
    diff = {"role": "user", "content": "d" * 8000}

    def rounds(count: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [dict(diff)]
        for index in range(count):
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{index}"}]})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{index}",
                                                          "content": "r" * 4000}]})
        for message in messages[1:][-1:-4:-2]:
            message["content"][-1]["cache_control"] = {"type": "ephemeral"}
        return messages

    bodies = [{"tools": tools, "system": [{"type": "text", "text": "s" * 7900}], "messages": rounds(0)},
              {"tools": tools, "system": system, "messages": rounds(1)},
              {"tools": tools, "system": system, "messages": rounds(2)}]
    asked = [anthropic_asked(0, body) for body in bodies]
    assert [len(item.later) for item in asked] == [0, 1, 2]
    assert asked[2].later[0][0] == asked[1].later[0][0]  # the same text with or without its breakpoint
    prefix, (first, second, third) = asked[1].prefix_tokens, (item.tokens for item in asked)
    written_second, written_third = asked[1].later[-1][1], asked[2].later[-1][1]
    expected = (first + (second - written_second + 1.25 * written_second)
                + (third - written_third + 0.1 * written_second + 1.25 * (written_third - written_second)))
    assert prefix < written_second < written_third
    for across in (True, False):
        assert billed(asked, ANTHROPIC_5M, across_pushes=across) == pytest.approx(expected)
    # Without the message breakpoints only the prefix is read: each round re-sends the rest whole.
    plain = [Asked(item.push, item.prefix, item.prefix_tokens, item.tokens, item.marked) for item in asked]
    assert billed(plain, ANTHROPIC_5M, across_pushes=True) > billed(asked, ANTHROPIC_5M, across_pushes=True) + 1000


def test_a_breakpoint_is_billed_only_at_its_own_lifetimes_write_price() -> None:
    """The hour's requests are billed as the gate sent them under the hour: one that asks for
    the 5-minute lifetime (no `ttl`) at the hour's price, or the reverse, is an error."""
    from benchmarks.prompt_bill import anthropic_asked
    tools = [{"name": "record_review", "description": "d", "input_schema": {}}]
    bodies = {ttl: {"tools": tools, "messages": [{"role": "user", "content": "d" * 400}],
                    "system": [{"type": "text", "text": "s" * 8000, "cache_control": marked}]}
              for ttl, marked in (("5m", {"type": "ephemeral"}), ("1h", {"type": "ephemeral", "ttl": "1h"}))}
    for ttl, pricing in (("5m", ANTHROPIC_5M), ("1h", ANTHROPIC_1H)):
        asked = anthropic_asked(0, bodies[ttl])
        assert asked.lifetimes == {ttl}
        written = asked.prefix_tokens // 1  # whole tokens, as the bill counts a cached prefix
        assert billed([asked], pricing, across_pushes=False) == pytest.approx(
            asked.tokens - written + pricing.write * written)
    for ttl, pricing in (("5m", ANTHROPIC_1H), ("1h", ANTHROPIC_5M)):
        with pytest.raises(ValueError, match=f"carries a breakpoint with ttl {ttl}: not billed at the"):
            billed([anthropic_asked(0, bodies[ttl])], pricing, across_pushes=False)
