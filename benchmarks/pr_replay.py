"""What a model reviewer is sent over a merged pull request's life: its commits replayed as pushes.

    python benchmarks/pr_replay.py --repo CLONE --merge SHA [--merge SHA ...] [--gate-path DIR] [--tools]
        [--model-calls-tools]

Each `--merge` is a merge commit M of `--repo`: the PR's pushes are the first-parent commits of
M^1..M^2, oldest first, each reviewed as CI would (`reviewgate run --base M^1 --head C`, in a
subprocess running the gate at `--gate-path`, default this checkout) against the stand-in model
server (testing/model_server.py: a real HTTP server on 127.0.0.1 answering every request with
an empty review; `--tools` turns the read-only tool loop on, as it is for a hosted API: the
tools' schemas are sent and the context holds fewer call sites inline; the stand-in calls no
tool, so what the model's calls would add is not counted; with `--model-calls-tools` it calls them as a
model that wants every call site would: `callers` of each symbol the request's `not shown` entry
names, then `read` of each site `callers` named without showing it, then the answer; each round
re-sends the conversation, and every request is billed). Twice with the `openai` provider: with one chunk cache kept across the PR's
pushes, and with a new empty cache for each push; twice more with the `anthropic` provider, each
with its own kept chunk cache: as the pushes come (seconds apart, so each push after the first
finds the previous one recent in the gate's store and marks its prefix for the prompt cache),
and with the store's record of when the prefix was last sent removed before each push (as the
gate finds it when the previous push is older than the cache's lifetime: no breakpoint on a
run's only request); and those two again with `cache_ttl = "1h"`, each with its own kept chunk
cache. It prints per push and per PR the requests and characters sent (the
whole JSON body of each request: system message, user message, the answer's schema) and tokens
per changed line (characters / 4), and what the chunk cache saved.

Then, over all PRs, what the providers bill for the kept-cache runs in input-token equivalents
per changed line (prompt_bill.py): OpenAI's automatic prompt cache at 0.5 × for a read,
Anthropic's breakpoints as the gate sent them (1.25 × a write, 0.1 × a read): within the cache's
lifetime the first run's requests (a prefix written on one push is read on the next, whichever
PR sent it: the replay's pushes follow one another), further apart the second run's (only the
requests of one push share it); and the two runs with `cache_ttl = "1h"` the same way, their
requests as the gate sent them (2 × a write). Each beside its within-the-lifetime run's requests
billed without any provider caching.

A push's changed lines are those `git diff --numstat` counts between the previous push and
this one (the first push: from the merge base), lock files left out; over the PR, their sum.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
REPO_ROOT = BENCHMARKS.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.prompt_bill import (  # noqa: E402
    ANTHROPIC_1H,
    ANTHROPIC_5M,
    ANTHROPIC_MODEL,
    OPENAI,
    Asked,
    Pricing,
    anthropic_asked,
    billed,
    openai_asked,
)
from reviewgate.chunk_store import PREFIX_SENT_FILE  # noqa: E402
from reviewgate.freeze.exclusions import LOCK_FILES  # noqa: E402
from reviewgate.reviewers.model.rendering import CHARACTERS_PER_TOKEN  # noqa: E402
from testing.cli import clean_environment  # noqa: E402
from testing.model_server import ModelServer, Recorded, Reply  # noqa: E402


@dataclass
class Sent:
    requests: int = 0
    characters: int = 0
    system: int = 0  # of `characters`: the system message, the same in every request of a run

    def add(self, other: Sent) -> None:
        self.requests += other.requests
        self.characters += other.characters
        self.system += other.system


@dataclass
class Push:
    commit: str
    changed_lines: int
    cached: Sent = field(default_factory=Sent)
    uncached: Sent = field(default_factory=Sent)
    exit_codes: tuple[int, int] = (0, 0)
    # Of `cached`'s diffs: characters of the blocks (chunks) an earlier push of the PR had sent
    # already, line numbers aside (asked again because their context or rules changed).
    diff_seen_before: int = 0
    # The kept-cache runs' requests as the providers' bills see them: openai, then anthropic.
    openai_bill: list[Asked] = field(default_factory=list)
    diff_characters: int = 0  # of the openai kept-cache run's requests (each round of a tool loop re-sends them)
    context_characters: int = 0
    loop_characters: int = 0  # of those requests: the tool loop's calls and answers
    anthropic_bodies: list[dict[str, object]] = field(default_factory=list)  # as the pushes come
    anthropic_apart_bodies: list[dict[str, object]] = field(default_factory=list)  # each push long after the last
    hour_bodies: list[dict[str, object]] = field(default_factory=list)  # the same two with `cache_ttl = "1h"`
    hour_apart_bodies: list[dict[str, object]] = field(default_factory=list)


_DIFF_BLOCK = re.compile(r"<<<DATA (\w+) BEGIN>>>\n(.*?)\n<<<DATA \1 END>>>", re.DOTALL)


def _messages(body: Any) -> list[Any]:
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else []


def _review_message(body: Any) -> int:
    """The index of the request's user message holding the data (a tool loop's later rounds follow it)."""
    return next((index for index, message in enumerate(_messages(body))
                 if isinstance(message, dict) and message.get("role") == "user"
                 and isinstance(message.get("content"), str)), -1)


def data_blocks(post: Recorded) -> list[str]:
    """The data blocks of a request's user message: the chunk's diff, then its context."""
    index = _review_message(post.body)
    user = str(_messages(post.body)[index].get("content", "")) if index >= 0 else ""
    return [found.group(2) for found in _DIFF_BLOCK.finditer(user)]


def loop_characters(post: Recorded) -> int:
    """Characters of a request's tool-loop rounds: the calls and their answers, re-sent with each round."""
    index = _review_message(post.body)
    return sum(len(json.dumps(message, ensure_ascii=False)) for message in _messages(post.body)[index + 1:]) \
        if index >= 0 else 0


def first_of_loop(post: Recorded) -> bool:
    """The review's own request, not a later round of its tool loop."""
    return loop_characters(post) == 0


def diff_sent(post: Recorded) -> str:
    """The first data block of a request's user message: the chunk's diff."""
    return next(iter(data_blocks(post)), "")


_NOT_SHOWN_SYMBOL = re.compile(r"^\d+ call site\(s\) of (\S+) in: ", re.MULTILINE)
# `callers`' answer names the sites past its room: `not shown: 3 more use(s) of x (read them …):` then `  path: 4, 9`.
_CALLERS_LEFT_OUT = re.compile(r"^not shown: \d+ more use\(s\) of \S+ \(read them with `read`\):\n((?:  .+\n?)+)",
                               re.MULTILINE)
READ_AROUND = 2  # lines either side of a left-out site the stand-in reads, as `callers` shows each


def _rounds(body: Any) -> tuple[list[list[str]], list[str]]:
    """The tool loop so far: each round's tool names, and every answer's text, in order (either wire format)."""
    rounds: list[list[str]] = []
    answers: list[str] = []
    for message in _messages(body):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            calls = message.get("tool_calls") or [block for block in message.get("content") or []
                                                  if isinstance(block, dict) and block.get("type") == "tool_use"]
            if calls:
                rounds.append([str(call.get("function", {}).get("name") if "function" in call else call.get("name"))
                               for call in calls])
        elif message.get("role") == "tool":
            answers.append(str(message.get("content", "")))
        elif isinstance(message.get("content"), list):
            answers += [str(block.get("content", "")) for block in message["content"]
                        if isinstance(block, dict) and block.get("type") == "tool_result"]
    return rounds, answers


def calls_every_site(body: Any) -> Reply | None:
    """The stand-in model that uses the tools as one wanting every call site would: `callers` of
    each symbol the request's `not shown` entry names; then `read` of each site those answers
    named without showing it; then the review (None: the server's empty one). Only while the
    request offers the tools and leaves them open."""
    if not isinstance(body, dict) or not body.get("tools"):
        return None
    if body.get("tool_choice") not in ("auto", {"type": "any"}):
        return None  # the answer is asked for with the tools closed
    rounds, answers = _rounds(body)
    if not rounds:
        context = "".join(data_blocks(Recorded(0.0, "POST", "", {}, body))[1:2])
        symbols = list(dict.fromkeys(_NOT_SHOWN_SYMBOL.findall(context)))
        return Reply(tool_calls=tuple(("callers", {"symbol": symbol}) for symbol in symbols)) if symbols else None
    if len(rounds) > 1 or set(rounds[0]) != {"callers"}:
        return None
    reads: list[tuple[str, dict[str, Any]]] = []
    for answer in answers:
        for found in _CALLERS_LEFT_OUT.finditer(answer):
            for line in found.group(1).splitlines():
                path, _, numbers = line.strip().rpartition(": ")
                for number in numbers.split(", "):
                    if number.isdigit():
                        reads.append(("read", {"path": path, "start_line": max(1, int(number) - READ_AROUND),
                                               "end_line": int(number) + READ_AROUND}))
    return Reply(tool_calls=tuple(reads)) if reads else None


_NUMBER = re.compile(r"^([+ -])\d*\s*\| ", re.MULTILINE)


def diff_blocks(post: Recorded) -> list[str]:
    """The chunks of a request's diff, each led by its file's header, as `@@` separates them (a
    chunk is one block of one hunk), with their line numbers left out: what the chunk cache keys."""
    blocks: list[str] = []
    for section in ("\n\n" + diff_sent(post)).split("\n\n=== FILE ")[1:]:
        header, _, body = section.partition("\n@@")
        for block in body.split("\n@@"):
            blocks.append(_NUMBER.sub(r"\1| ", header.split(") ===")[0] + "\n@@" + block))
    return blocks


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, text=True).stdout


def changed_lines(repo: Path, old: str, new: str) -> int:
    total = 0
    for line in git(repo, "diff", "--numstat", "--no-renames", old, new).splitlines():
        added, removed, path = line.split("\t", 2)
        if added != "-" and path.rsplit("/", 1)[-1] not in LOCK_FILES:
            total += int(added) + int(removed)
    return total


def pushes_of(repo: Path, merge: str) -> tuple[str, list[str]]:
    """(the base M^1, the PR's pushes oldest first)."""
    base = git(repo, "rev-parse", f"{merge}^1").strip()
    commits = git(repo, "rev-list", "--reverse", "--first-parent", f"{merge}^1..{merge}^2").split()
    return base, commits


def config_text(server_url: str, provider: str = "openai", tools: bool = False, cache_ttl: str = "5m") -> str:
    where = (['provider = "openai"', 'model = "stand-in"', f'base_url = "{server_url}/v1"'] if provider == "openai"
             else ['provider = "anthropic"', f'model = "{ANTHROPIC_MODEL}"', f'base_url = "{server_url}"',
                   f'cache_ttl = "{cache_ttl}"'])
    return "\n".join([
        "[review]", 'reviewers = ["llm"]', "",
        "[reviewer.llm]", *where,
        'api_key_env = ""', "timeout = 30", "retries = 0", "verify_findings = false",
        f"tools = {'true' if tools else 'false'}", "",
    ])


def review(gate: Path, clone: Path, base: str, head: str, config: Path, cache: Path, output: Path) -> int:
    git(clone, "checkout", "-q", "--detach", "--force", head)
    env = clean_environment({"PYTHONPATH": str(gate)})
    completed = subprocess.run(
        [sys.executable, "-m", "reviewgate", "run", "--base", base, "--head", head, "--config", str(config),
         "--cache-dir", str(cache), "--output-dir", str(output), "--no-verify"],
        cwd=clone, env=env, capture_output=True, text=True, timeout=900, check=False)
    if completed.returncode not in (0, 1):
        print(f"  {head[:10]}: exit {completed.returncode}: {completed.stderr.strip()[-400:]}", file=sys.stderr)
    return completed.returncode


def sent_since(server: ModelServer, start: int) -> Sent:
    posts = server.posts()[start:]
    return Sent(len(posts), sum(_characters(post) for post in posts), sum(_system(post) for post in posts))


def _system(post: Recorded) -> int:
    messages = post.body.get("messages") if isinstance(post.body, dict) else None
    first = messages[0] if isinstance(messages, list) and messages else {}
    return len(str(first.get("content", ""))) if isinstance(first, dict) and first.get("role") == "system" else 0


def _characters(post: Recorded) -> int:
    return len(json.dumps(post.body, ensure_ascii=False))


def replay(gate: Path, source: Path, merge: str, server: ModelServer, scratch: Path, first_push: int = 0,
           tools: bool = False) -> list[Push]:
    """The PR's pushes; `first_push` numbers them after the earlier PRs' (the bill's pushes)."""
    clone = scratch / "clone"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(source), str(clone)], check=True)
    base, commits = pushes_of(clone, merge)
    merge_base = git(clone, "merge-base", base, commits[-1]).strip()
    config = scratch / "reviewgate.toml"
    config.write_text(config_text(server.url, tools=tools), encoding="utf-8")
    anthropic_config = scratch / "reviewgate-anthropic.toml"
    anthropic_config.write_text(config_text(server.url, "anthropic", tools), encoding="utf-8")
    hour_config = scratch / "reviewgate-anthropic-hour.toml"
    hour_config.write_text(config_text(server.url, "anthropic", tools, "1h"), encoding="utf-8")
    kept_cache = scratch / f"cache-{merge[:10]}"
    pushes: list[Push] = []
    previous = merge_base
    blocks_sent: set[str] = set()
    for index, commit in enumerate(commits):
        push = Push(commit, changed_lines(clone, previous, commit))
        start = len(server.posts())
        cached_exit = review(gate, clone, base, commit, config, kept_cache, scratch / "out")
        push.cached = sent_since(server, start)
        posts = server.posts()[start:]
        blocks = [block for post in posts if first_of_loop(post) for block in diff_blocks(post)]
        push.diff_seen_before = sum(len(block) for block in blocks if block in blocks_sent)
        blocks_sent.update(blocks)
        push.openai_bill = [openai_asked(first_push + index, post.body) for post in posts]
        push.diff_characters = sum(len(diff_sent(post)) for post in posts)
        push.context_characters = sum(len("".join(data_blocks(post)[1:2])) for post in posts)
        push.loop_characters = sum(loop_characters(post) for post in posts)
        for name, settings, within, apart in (
                ("anthropic", anthropic_config, push.anthropic_bodies, push.anthropic_apart_bodies),
                ("anthropic-hour", hour_config, push.hour_bodies, push.hour_apart_bodies)):
            start = len(server.posts())
            review(gate, clone, base, commit, settings, scratch / f"cache-{name}-{merge[:10]}", scratch / "out")
            within += [post.body for post in server.posts()[start:]]
            apart_cache = scratch / f"cache-{name}-apart-{merge[:10]}"
            # The previous push as the gate sees it once the cache's lifetime has passed: unknown.
            (apart_cache / "llm" / PREFIX_SENT_FILE).unlink(missing_ok=True)
            start = len(server.posts())
            review(gate, clone, base, commit, settings, apart_cache, scratch / "out")
            apart += [post.body for post in server.posts()[start:]]
        start = len(server.posts())
        uncached_exit = review(gate, clone, base, commit, config, scratch / f"fresh-{merge[:10]}-{index}",
                               scratch / "out")
        push.uncached = sent_since(server, start)
        push.exit_codes = (cached_exit, uncached_exit)
        pushes.append(push)
        previous = commit
    return pushes


def _per_line(characters: int, lines: int) -> str:
    return f"{characters / CHARACTERS_PER_TOKEN / lines:.1f}" if lines else "-"


def _saved(cached: int, uncached: int) -> str:
    return f"{100 * (1 - cached / uncached):.0f}%" if uncached else "-"


def render(merge: str, subject: str, pushes: list[Push]) -> tuple[list[str], Sent, Sent, int]:
    lines = [f"PR {merge[:10]} {subject}: {len(pushes)} push(es)",
             f"  {'push':<12} {'lines':>6} {'requests':>8} {'characters':>10} {'tok/line':>8}   "
             f"{'uncached req':>12} {'characters':>10} {'tok/line':>8} {'saved':>6}"]
    cached, uncached, total_lines = Sent(), Sent(), 0
    seen_before = sum(push.diff_seen_before for push in pushes)
    later = sum(push.diff_characters for push in pushes[1:])
    for push in pushes:
        lines.append(
            f"  {push.commit[:10]:<12} {push.changed_lines:>6} {push.cached.requests:>8} {push.cached.characters:>10} "
            f"{_per_line(push.cached.characters, push.changed_lines):>8}   {push.uncached.requests:>12} "
            f"{push.uncached.characters:>10} {_per_line(push.uncached.characters, push.changed_lines):>8} "
            f"{_saved(push.cached.characters, push.uncached.characters):>6}"
            + ("" if push.exit_codes == (0, 0) else f"  (exit {push.exit_codes[0]}/{push.exit_codes[1]})"))
        cached.add(push.cached)
        uncached.add(push.uncached)
        total_lines += push.changed_lines
    lines.append(
        f"  {'PR total':<12} {total_lines:>6} {cached.requests:>8} {cached.characters:>10} "
        f"{_per_line(cached.characters, total_lines):>8}   {uncached.requests:>12} {uncached.characters:>10} "
        f"{_per_line(uncached.characters, total_lines):>8} {_saved(cached.characters, uncached.characters):>6}")
    if later:
        lines.append(f"  with the cache, {100 * seen_before / later:.0f}% of the later pushes' diff characters re-sent a "
                     "block an earlier push sent (its context changed)")
    return lines, cached, uncached, total_lines


def bill_lines(pushes: list[Push], changed: int) -> list[str]:
    """Billed input-token equivalents per changed line, per provider pricing, with the provider's
    prompt cache and without it, for pushes within its lifetime and further apart."""
    anthropic = [anthropic_asked(number, body) for number, push in enumerate(pushes) for body in push.anthropic_bodies]
    anthropic_apart = [anthropic_asked(number, body)
                       for number, push in enumerate(pushes) for body in push.anthropic_apart_bodies]
    hour = [anthropic_asked(number, body) for number, push in enumerate(pushes) for body in push.hour_bodies]
    hour_apart = [anthropic_asked(number, body) for number, push in enumerate(pushes) for body in push.hour_apart_bodies]
    openai = [asked for push in pushes for asked in push.openai_bill]
    # Each pricing: the requests sent with pushes within the cache's lifetime, and further apart.
    rows: list[tuple[Pricing, list[Asked], list[Asked]]] = [
        (OPENAI, openai, openai), (ANTHROPIC_5M, anthropic, anthropic_apart),
        (ANTHROPIC_1H, hour, hour_apart)]
    prefixes = sorted({round(asked.prefix_tokens) for _, requests, _ in rows for asked in requests})
    lines = [f"billed input-token equivalents per changed line ({changed} changed lines; the stable prefix "
             f"{', '.join(f'{tokens:,}' for tokens in prefixes)} tokens; anthropic: "
             f"{sum(asked.marked for asked in anthropic)} of {len(anthropic)} requests sent a cache breakpoint "
             f"within the lifetime, {sum(asked.marked for asked in anthropic_apart)} of {len(anthropic_apart)} "
             f"further apart; with cache_ttl = \"1h\" {sum(asked.marked for asked in hour)} of {len(hour)} within, "
             f"{sum(asked.marked for asked in hour_apart)} of {len(hour_apart)} further apart):",
             f"  {'pricing':<70} {'within the lifetime':>19} {'further apart':>13} {'no caching':>10}"]
    for pricing, requests, apart_requests in rows:
        within, apart = (billed(requests, pricing, across_pushes=True),
                         billed(apart_requests, pricing, across_pushes=False))
        whole = sum(asked.tokens for asked in requests)
        lines.append(f"  {pricing.name:<70} {_per_changed_line(within, changed):>19} "
                     f"{_per_changed_line(apart, changed):>13} {_per_changed_line(whole, changed):>10}")
    prefix, whole = sum(asked.prefix_tokens for asked in openai), sum(asked.tokens for asked in openai)
    diff = sum(push.diff_characters for push in pushes) / CHARACTERS_PER_TOKEN
    context = sum(push.context_characters for push in pushes) / CHARACTERS_PER_TOKEN
    loop = sum(push.loop_characters for push in pushes) / CHARACTERS_PER_TOKEN
    lines.append(f"  where the {len(openai)} openai requests' tokens per changed line go: the stable prefix "
                 f"{_per_changed_line(prefix, changed)}, the diff {_per_changed_line(diff, changed)}, the context "
                 f"{_per_changed_line(context, changed)}, the tools' calls and answers "
                 f"{_per_changed_line(loop, changed)}, the rest "
                 f"{_per_changed_line(whole - prefix - diff - context - loop, changed)}")
    return lines


def _per_changed_line(tokens: float, lines: int) -> str:
    return f"{tokens / lines:.1f}" if lines else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repo", type=Path, required=True, help="a clone holding the merge commits")
    parser.add_argument("--merge", action="append", required=True, help="a merge commit of a PR (repeatable)")
    parser.add_argument("--gate-path", type=Path, default=REPO_ROOT,
                        help="the checkout whose reviewgate package runs (default: this one)")
    parser.add_argument("--tools", action="store_true",
                        help="the reviewer has the read-only tool loop, as for a hosted API (default: off)")
    parser.add_argument("--model-calls-tools", action="store_true",
                        help="with --tools: the stand-in calls `callers` of every symbol a request leaves out and "
                             "`read`s every site those answers leave out, before it answers")
    arguments = parser.parse_args(argv)
    gate = arguments.gate_path.resolve()
    if not (gate / "reviewgate" / "__init__.py").is_file():
        parser.error(f"--gate-path {arguments.gate_path}: no reviewgate package there")
    if not (arguments.repo / ".git").exists() and not (arguments.repo / "HEAD").is_file():
        parser.error(f"--repo {arguments.repo}: not a git repository")
    for merge in arguments.merge:
        parents = git(arguments.repo, "rev-list", "--parents", "-n", "1", merge).split()
        if len(parents) != 3:
            parser.error(f"--merge {merge}: not a merge commit of --repo")
    if arguments.model_calls_tools and not arguments.tools:
        parser.error("--model-calls-tools needs --tools: without them the request offers no tool to call")
    print(f"gate: {gate}; tools {'on' if arguments.tools else 'off'}"
          + ("; the stand-in calls callers and read for every site left out" if arguments.model_calls_tools else ""))
    every_cached, every_uncached, every_line = Sent(), Sent(), 0
    every_push: list[Push] = []
    responder = calls_every_site if arguments.model_calls_tools else None
    with ModelServer([], responder=responder) as server, tempfile.TemporaryDirectory(prefix="reviewgate-pr-replay-") as scratch:
        for merge in arguments.merge:
            subject = git(arguments.repo, "log", "-1", "--format=%s", merge).strip()
            pushes = replay(gate, arguments.repo.resolve(), merge, server, Path(scratch), len(every_push),
                            arguments.tools)
            every_push += pushes
            lines, cached, uncached, total = render(merge, subject, pushes)
            print("\n".join(lines), flush=True)
            every_cached.add(cached)
            every_uncached.add(uncached)
            every_line += total
    print(f"all PRs: {every_line} changed lines; with the cache {every_cached.requests} requests, "
          f"{every_cached.characters:,} characters, {_per_line(every_cached.characters, every_line)} tokens per "
          f"changed line; without it {every_uncached.requests} requests, {every_uncached.characters:,} characters, "
          f"{_per_line(every_uncached.characters, every_line)} tokens per changed line; the cache saved "
          f"{_saved(every_cached.characters, every_uncached.characters)} of the characters and "
          f"{_saved(every_cached.requests, every_uncached.requests)} of the requests")
    if every_cached.characters:
        print(f"with the cache, {100 * every_cached.system / every_cached.characters:.0f}% of the characters were the "
              "system message (the same in every request: a provider's prompt cache reads it after a run's first)")
    print("\n".join(bill_lines(every_push, every_line)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
