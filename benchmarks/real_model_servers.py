"""The model reviewers against real model servers and agent CLIs, where they are installed.

    python benchmarks/real_model_servers.py [--gguf MODEL.gguf] [--litellm-url URL]
        [--server NAME=URL ...] [--timeout 300]

Opt-in, not part of the test suite (it needs software and, for the CLIs, accounts the suite
does not have). Each target that is present reviews the same small change (a `divide` that
does not guard against zero) the way the gate would, with the defaults a new user gets:

- `llama-server` (llama.cpp) and llama-cpp-python's server (`python -m llama_cpp.server`),
  started on 127.0.0.1 with `--gguf` (any GGUF model; a small one is enough: the point is the
  wire format and the grammar-enforced JSON, not the review's quality);
- a LiteLLM proxy already running at `--litellm-url` (in front of either server), and any other
  Chat Completions server already running (`--server ollama=http://127.0.0.1:11434/v1`: vLLM,
  Ollama, LM Studio);
- the agent CLIs `claude` and `codex`, with the command lines of docs/reviewers.md.

A target whose program or model is missing is listed as skipped, never failed. Each line says
the outcome (`ok` with the finding count, or `blocked` with the reason), the notes that say what
the reviewer learned about the server (a refused structured form, a cut answer), the requests
and the seconds taken. The exit code is 1 when a present target ended `blocked`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from reviewgate.config import ReviewerSettings  # noqa: E402
from reviewgate.escaping import one_line  # noqa: E402
from reviewgate.reviewers import command, openai  # noqa: E402
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus  # noqa: E402
from reviewgate.reviewers.model.engine import ModelReviewer  # noqa: E402
from testing.model_repo import calc_repo, review_request  # noqa: E402

# The documented agent command lines (docs/reviewers.md; tests/test_reviewer_command.py checks
# that these start where the gate runs them, against stand-ins with the real flag rules).
CLAUDE_COMMAND = ["claude", "-p", "--output-format", "json", "--setting-sources", "user", "--strict-mcp-config"]
CODEX_COMMAND = ["codex", "exec", "--skip-git-repo-check", "--sandbox", "read-only", "--json", "-"]
# The agent runs with a clean environment and a fresh HOME: whichever of the CLIs' own key or token
# variables is set is passed on (a `claude login` or `codex login` in the user's HOME is not seen).
AGENT_LOGIN_VARIABLES = ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "CODEX_API_KEY", "OPENAI_API_KEY"]


@dataclass(frozen=True)
class Result:
    target: str
    version: str
    outcome: ReviewerOutcome | None
    skipped: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        if self.outcome is None:
            return f"{self.target:<22} skipped: {self.skipped}"
        outcome = self.outcome
        told = "; ".join(note for note in outcome.notes if "refused" in note or "cut at" in note)
        state = (f"ok, {len(outcome.findings)} finding(s)" if outcome.status is ReviewerStatus.OK
                 else f"{outcome.status.value}: {outcome.reason}")
        return one_line(f"{self.target:<22} {self.version:<24} {state}; {outcome.usage.requests} request(s), "
                        f"{self.seconds:.1f}s") + (f"\n{'':<23}{one_line(told)}" if told else "")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[-1][:24] if text else "?"


def _wait_for(url: str, seconds: float) -> bool:
    import requests

    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return True
        except requests.RequestException:
            pass
        time.sleep(0.5)
    return False


@contextmanager
def _server(argv: list[str], port: int) -> Iterator[str | None]:
    """The server started, its base URL once it answers (None when it never did); stopped after."""
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        yield url if _wait_for(f"{url}/models", 300) else None
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _review(reviewer: ModelReviewer, work: Path) -> tuple[ReviewerOutcome, float]:
    repo = calc_repo(work)
    started = time.monotonic()
    outcome = reviewer.review(review_request(repo.path))
    return outcome, time.monotonic() - started


def _openai_reviewer(name: str, base_url: str, timeout: float) -> ModelReviewer:
    # The defaults a new user gets, key-less as a local server is.
    return openai.build(ReviewerSettings(name=name, provider="openai", model="local", base_url=base_url,
                                         api_key_env="", timeout=timeout, options={}))


def _llama_server(gguf: Path, port: int) -> list[str]:
    return ["llama-server", "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port)]


def _llama_cpp_python(gguf: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port)]


def _local_servers(gguf: Path | None, timeout: float, work: Path) -> Iterator[Result]:
    targets: list[tuple[str, bool, Callable[[Path, int], list[str]], list[str]]] = [
        ("llama-server", shutil.which("llama-server") is not None, _llama_server, ["llama-server", "--version"]),
        ("llama-cpp-python", _importable("llama_cpp.server"), _llama_cpp_python,
         [sys.executable, "-c", "import llama_cpp; print(llama_cpp.__version__)"]),
    ]
    for name, present, argv, version in targets:
        if not present:
            yield Result(name, "", None, "not installed")
            continue
        if gguf is None:
            yield Result(name, "", None, "no --gguf model given")
            continue
        port = _free_port()
        with _server(argv(gguf, port), port) as url:
            if url is None:
                yield Result(name, _version(version), None, "the server did not answer within 300 s")
                continue
            outcome, seconds = _review(_openai_reviewer(name, url, timeout), work / name)
            yield Result(name, _version(version), outcome, seconds=seconds)


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _agent_clis(timeout: float, work: Path) -> Iterator[Result]:
    for name, argv in (("claude", CLAUDE_COMMAND), ("codex", CODEX_COMMAND)):
        if shutil.which(name) is None:
            yield Result(name, "", None, "not on PATH")
            continue
        reviewer = command.build(ReviewerSettings(name=name, provider="command", timeout=timeout,
                                                  options={"command": argv, "environment": AGENT_LOGIN_VARIABLES}))
        outcome, seconds = _review(reviewer, work / name)
        yield Result(name, _version([name, "--version"]), outcome, seconds=seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, help="a GGUF model for llama-server and llama-cpp-python")
    parser.add_argument("--litellm-url", help="the base URL of a running LiteLLM proxy (…/v1)")
    parser.add_argument("--server", action="append", default=[], metavar="NAME=URL",
                        help="another running Chat Completions server (repeatable)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for one request (default 300)")
    args = parser.parse_args(argv)
    servers = [item.partition("=") for item in args.server]
    if any(not name or not url for name, _, url in servers):
        parser.error("--server: expected NAME=URL, e.g. ollama=http://127.0.0.1:11434/v1")
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="reviewgate-real-servers-") as scratch:
        work = Path(scratch)
        for result in _local_servers(args.gguf, args.timeout, work):
            print(result.line(), flush=True)
            results.append(result)
        if args.litellm_url:
            outcome, seconds = _review(_openai_reviewer("litellm", args.litellm_url, args.timeout), work / "litellm")
            results.append(Result("litellm", "proxy", outcome, seconds=seconds))
        else:
            results.append(Result("litellm", "", None, "no --litellm-url given"))
        print(results[-1].line(), flush=True)
        for name, _, url in servers:
            outcome, seconds = _review(_openai_reviewer(name, url, args.timeout), work / f"server-{len(results)}")
            results.append(Result(name, "running server", outcome, seconds=seconds))
            print(results[-1].line(), flush=True)
        for result in _agent_clis(args.timeout, work):
            print(result.line(), flush=True)
            results.append(result)
    blocked = [item for item in results if item.outcome is not None and item.outcome.status is ReviewerStatus.BLOCKED]
    return 1 if blocked else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
