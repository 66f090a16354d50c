"""Stand-ins for the agent CLIs `codex` and `claude`, with the real ones' argument rules and
output formats, installed as executables in a directory the tests put on PATH.

- `codex exec`: the flags of codex-rs/exec/src/cli.rs that the docs use (an unknown one is
  clap's "unexpected argument", exit 2); outside a git repository (no `.git` in the working
  directory or above) it refuses with the real message unless `--skip-git-repo-check` is given;
  `--json` prints the JSONL events of codex-rs/exec/src/exec_events.rs, else the last message.
- `claude -p`: `--output-format text|json`; the json form is the `{"type": "result", ...}`
  wrapper. Logged out (FAKE_AGENT_LOGGED_OUT set) it prints `Not logged in · Please run /login`
  on stdout, nothing on stderr, and exits 1, as Claude Code does.

Both honour the project's files as the real CLIs do. `claude` reads `.claude/settings.json` and
`.claude/settings.local.json` unless `--setting-sources` leaves `project`/`local` out or `--bare`
is given: their `env` is applied (an `ANTHROPIC_BASE_URL` gets the prompt and the key POSTed to
it), their `UserPromptSubmit` command hooks run with the CLI's environment, and a hook exiting 2
ends the run with what it printed as the `result` (no model turn: `num_turns` 0, usage zero);
`.mcp.json` servers are started unless `--strict-mcp-config` or `--bare`; `CLAUDE.md` and
`CLAUDE.local.md` are read unless `--bare`, in the working directory and every one above it.
`codex` reads `AGENTS.override.md` or `AGENTS.md`.

The answer is the text of the file FAKE_AGENT_ANSWER names; the prompt read is written to
FAKE_AGENT_PROMPT when that is set, the instruction files read to FAKE_AGENT_INSTRUCTIONS.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reviewgate.tomlfile import parse_toml
from testing.verify_app import python_for_the_verify

_COMMON = '''
import json, os, sys
from pathlib import Path

def answer_text():
    return Path(os.environ["FAKE_AGENT_ANSWER"]).read_text(encoding="utf-8")

def keep_prompt(text):
    if os.environ.get("FAKE_AGENT_PROMPT"):
        Path(os.environ["FAKE_AGENT_PROMPT"]).write_text(text, encoding="utf-8")

def fail(message, code):
    sys.stderr.write(message + "\\n")
    sys.exit(code)

def keep_instructions(names, above=False):
    """The instruction files found in the working directory, as the model would be given them;
    `above`: in every directory above it too, from the top down (Claude Code reads CLAUDE.md
    and CLAUDE.local.md up to, not including, /)."""
    here = Path.cwd()
    folders = [*reversed([folder for folder in here.parents if folder != folder.parent]), here] if above else [here]
    found = [(folder / name).read_text(encoding="utf-8") for folder in folders for name in names
             if (folder / name).is_file()]
    if os.environ.get("FAKE_AGENT_INSTRUCTIONS"):
        Path(os.environ["FAKE_AGENT_INSTRUCTIONS"]).write_text("\\n".join(found), encoding="utf-8")
    return found
'''

_CODEX = _COMMON + '''
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
WITH_VALUE = {"-s": "sandbox", "--sandbox": "sandbox", "-m": "model", "--model": "model",
              "-C": "cd", "--cd": "cd", "--color": "color", "-o": "last", "--output-last-message": "last"}
FLAGS = {"--skip-git-repo-check", "--json", "--experimental-json", "--ephemeral"}
args = sys.argv[1:]
if not args or args[0] != "exec":
    fail("error: this stand-in runs `codex exec` only", 2)
seen, values, prompt = set(), {}, None
rest = args[1:]
while rest:
    arg = rest.pop(0)
    if arg in FLAGS:
        seen.add(arg)
    elif arg in WITH_VALUE:
        if not rest:
            fail(f"error: a value is required for '{arg}' but none was supplied", 2)
        values[WITH_VALUE[arg]] = rest.pop(0)
    elif arg.startswith("-") and arg != "-":
        fail(f"error: unexpected argument '{arg}' found\\n\\nUsage: codex exec [OPTIONS] [PROMPT]", 2)
    elif prompt is None:
        prompt = arg
    else:
        fail(f"error: unexpected argument '{arg}' found", 2)
if "sandbox" in values and values["sandbox"] not in SANDBOXES:
    fail(f"error: invalid value '{values['sandbox']}' for '--sandbox <SANDBOX_MODE>'", 2)
cwd = Path(values.get("cd") or os.getcwd()).resolve()
inside_git = any((folder / ".git").exists() for folder in (cwd, *cwd.parents))
if "--skip-git-repo-check" not in seen and not inside_git:
    fail("Not inside a trusted directory and --skip-git-repo-check was not specified.", 1)
keep_prompt(sys.stdin.read() if prompt in (None, "-") else prompt)
keep_instructions(["AGENTS.override.md"] if Path("AGENTS.override.md").is_file() else ["AGENTS.md"])
text = answer_text()
if seen & {"--json", "--experimental-json"}:
    events = [
        {"type": "thread.started", "thread_id": "0199-fake"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "**Reading the diff**"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": text}},
        {"type": "turn.completed", "usage": {"input_tokens": 2400, "cached_input_tokens": 2000, "output_tokens": 90}},
    ]
    print("\\n".join(json.dumps(event) for event in events))
else:
    sys.stderr.write("OpenAI Codex (stand-in)\\n--------\\nworkdir: " + str(cwd) + "\\n")
    print(text)
'''

_CLAUDE = _COMMON + '''
import subprocess, urllib.request
args = sys.argv[1:]
output_format, prompt, printing = "text", None, False
sources, bare, strict_mcp = {"user", "project", "local"}, False, False
while args:
    arg = args.pop(0)
    if arg in ("-p", "--print"):
        printing = True
    elif arg == "--bare":
        bare = True
    elif arg == "--strict-mcp-config":
        strict_mcp = True
    elif arg == "--setting-sources":
        sources = set((args.pop(0) if args else fail("error: option '--setting-sources <sources>' argument missing", 1)).split(","))
    elif arg == "--output-format":
        output_format = args.pop(0) if args else fail("error: option '--output-format <format>' argument missing", 1)
        if output_format not in ("text", "json", "stream-json"):
            fail(f"error: option '--output-format <format>' argument '{output_format}' is invalid.", 1)
    elif arg in ("--model", "--permission-mode", "--allowedTools", "--disallowedTools"):
        args.pop(0)
    elif arg.startswith("-"):
        fail(f"error: unknown option '{arg}'", 1)
    else:
        prompt = arg
if not printing:
    fail("error: this stand-in runs `claude -p` only", 1)
prompt = prompt if prompt is not None else sys.stdin.read()
keep_prompt(prompt)
settings = {}
for source, name in (("project", ".claude/settings.json"), ("local", ".claude/settings.local.json")):
    if source in sources and not bare and Path(name).is_file():
        settings.update(json.loads(Path(name).read_text(encoding="utf-8")))
environment = {**os.environ, **settings.get("env", {})}
if Path(".mcp.json").is_file() and not (strict_mcp or bare):
    for server in json.loads(Path(".mcp.json").read_text(encoding="utf-8")).get("mcpServers", {}).values():
        subprocess.run([server["command"], *server.get("args", [])], env=environment, check=False)
keep_instructions([] if bare else ["CLAUDE.md", "CLAUDE.local.md"], above=True)

def report(text, turns, usage, is_error=False):
    if output_format == "json":
        print(json.dumps({"type": "result", "subtype": "success", "is_error": is_error, "duration_ms": 1200,
                          "num_turns": turns, "result": text, "session_id": "fake", "total_cost_usd": 0.01 * turns,
                          "usage": usage}))
    else:
        print(text)

for group in settings.get("hooks", {}).get("UserPromptSubmit", []):
    for hook in group.get("hooks", []):
        ran = subprocess.run(["/bin/sh", "-c", hook["command"]], input=prompt, text=True, env=environment,
                             capture_output=True, check=False)
        if ran.returncode == 2:  # the hook blocked the prompt: no model turn, what it printed is the result
            report(ran.stderr or ran.stdout, 0, {"input_tokens": 0, "output_tokens": 0,
                                                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
            sys.exit(0)
if environment.get("ANTHROPIC_BASE_URL"):
    request = urllib.request.Request(environment["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages",
                                     data=json.dumps({"prompt": prompt}).encode(), method="POST",
                                     headers={"x-api-key": environment.get("ANTHROPIC_API_KEY", "")})
    urllib.request.urlopen(request, timeout=5).read()
logged_out = bool(os.environ.get("FAKE_AGENT_LOGGED_OUT"))
text = "Not logged in \\u00b7 Please run /login" if logged_out else answer_text()
report(text, 1, {"input_tokens": 4, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 2480,
                 "output_tokens": 80}, is_error=logged_out)
sys.exit(1 if logged_out else 0)
'''


def install_agent_clis(directory: Path) -> Path:
    """`codex` and `claude` stand-ins in `directory` (created); returns it, for PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in (("codex", _CODEX), ("claude", _CLAUDE)):
        script = directory / name
        script.write_text(f"#!{python_for_the_verify()}\n" + body, encoding="utf-8")
        script.chmod(0o755)
    return directory


@contextmanager
def shared_with_the_agent() -> Iterator[Path]:
    """A directory the agent's own uid reaches (as root the agent runs as another uid, and
    pytest's tmp_path lies under a directory private to root): 0o755 and root's, so a program
    in it is one the verify could not have planted; its `out/` is writable by the agent, for
    what a test agent reports. Removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="reviewgate-agent-test-"))
    try:
        directory.chmod(0o755)
        (directory / "out").mkdir(mode=0o777)
        (directory / "out").chmod(0o777)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def documented_command(table: str) -> list[str]:
    """The `command` of `[reviewer.TABLE]` in docs/reviewers.md's examples, as the docs print it."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "reviewers.md").read_text(encoding="utf-8")
    for block in re.findall(r"```toml\n(.*?)```", docs, re.DOTALL):
        reviewers = parse_toml(block.encode(), "docs/reviewers.md").get("reviewer", {})
        if table in reviewers:
            return list(reviewers[table]["command"])
    raise AssertionError(f"docs/reviewers.md has no [reviewer.{table}] example")
