"""Stand-ins for the agent CLIs `codex` and `claude`, with the real ones' argument rules and
output formats, installed as executables in a directory the tests put on PATH.

- `codex exec`: the flags of codex-rs/exec/src/cli.rs that the docs use (an unknown one is
  clap's "unexpected argument", exit 2); outside a git repository (no `.git` in the working
  directory or above) it refuses with the real message unless `--skip-git-repo-check` is given;
  `--json` prints the JSONL events of codex-rs/exec/src/exec_events.rs, else the last message.
- `claude -p`: `--output-format text|json`; the json form is the `{"type": "result", ...}`
  wrapper. Logged out (FAKE_AGENT_LOGGED_OUT set) it prints `Not logged in · Please run /login`
  on stdout, nothing on stderr, and exits 1, as Claude Code does.

The answer is the text of the file FAKE_AGENT_ANSWER names; the prompt read is written to
FAKE_AGENT_PROMPT when that is set.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
args = sys.argv[1:]
output_format, prompt, printing = "text", None, False
while args:
    arg = args.pop(0)
    if arg in ("-p", "--print"):
        printing = True
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
keep_prompt(prompt if prompt is not None else sys.stdin.read())
logged_out = bool(os.environ.get("FAKE_AGENT_LOGGED_OUT"))
text = "Not logged in \\u00b7 Please run /login" if logged_out else answer_text()
if output_format == "json":
    print(json.dumps({"type": "result", "subtype": "success", "is_error": logged_out, "duration_ms": 1200,
                      "num_turns": 1, "result": text, "session_id": "fake",
                      "total_cost_usd": 0.01,
                      "usage": {"input_tokens": 4, "cache_creation_input_tokens": 300,
                                "cache_read_input_tokens": 2480, "output_tokens": 80}}))
else:
    print(text)
sys.exit(1 if logged_out else 0)
'''


def install_agent_clis(directory: Path) -> Path:
    """`codex` and `claude` stand-ins in `directory` (created); returns it, for PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in (("codex", _CODEX), ("claude", _CLAUDE)):
        script = directory / name
        script.write_text(f"#!{sys.executable}\n" + body, encoding="utf-8")
        script.chmod(0o755)
    return directory
