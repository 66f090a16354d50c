"""The command reviewer: a real agent-like script, run in a read-only snapshot."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers import command
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from testing.agent_clis import documented_command, install_agent_clis, shared_with_the_agent
from testing.cli import run_cli
from testing.model_repo import calc_repo, review_request, write_config
from testing.model_server import finding, review_document
from testing.repo import git
from testing.verify_app import python_for_the_verify

# What the stand-in CLIs read: passed on as a user passes any further variable to the agent.
# The agent runs as another uid as root: an interpreter that uid can run (not one under /root).
AGENT_PYTHON = python_for_the_verify()
FAKE_VARIABLES = ["FAKE_AGENT_ANSWER", "FAKE_AGENT_PROMPT", "FAKE_AGENT_INSTRUCTIONS", "FAKE_AGENT_LOGGED_OUT"]


@pytest.fixture
def shared() -> Iterator[Path]:
    with shared_with_the_agent() as directory:
        yield directory


def _agent(shared: Path, body: str) -> Path:
    """A Python script standing in for `claude -p`: reads the prompt, prints a review."""
    script = shared / "agent.py"
    script.write_text("import json, os, sys\n" + body, encoding="utf-8")
    return script


def _settings(argv: list[str], **options: object) -> ReviewerSettings:
    return ReviewerSettings(
        name="agent", provider="command", timeout=5.0,
        options={"command": argv, "verify_findings": False, "environment": FAKE_VARIABLES, **options}
    )


REVIEW = json.dumps(review_document([finding("app/calc.py", 7, title="Division by zero")], "request_changes"))


def _review_with_agent(tmp_path: Path, shared: Path, body: str, timeout: float = 5.0) -> ReviewerOutcome:
    """Review the calc change with an agent script whose body is `body`."""
    repo = calc_repo(tmp_path)
    agent = _agent(shared, body)
    settings = ReviewerSettings(
        name="agent", provider="command", timeout=timeout, options={"command": [AGENT_PYTHON, str(agent)], "verify_findings": False}
    )
    return command.build(settings).review(review_request(repo.path))


def test_prompt_on_stdin_and_review_on_stdout(tmp_path: Path, shared: Path) -> None:
    repo = calc_repo(tmp_path, extra_branch={"docs/specs/divide.md": "SPEC\n"})
    seen = shared / "out" / "seen.json"
    agent = _agent(
        shared,
        f"""
prompt = sys.stdin.read()
json.dump({{"cwd": os.getcwd(), "has_spec": os.path.exists("docs/specs/divide.md"),
           "has_calc": os.path.exists("app/calc.py"), "diff": "return a / b" in prompt,
           "write_bits": os.stat("app/calc.py").st_mode & 0o222}}, open({str(seen)!r}, "w"))
print("Sure, here it is:")
print({REVIEW!r})
""",
    )
    outcome = command.build(_settings([AGENT_PYTHON, str(agent)])).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [(item.path, item.line) for item in outcome.findings] == [("app/calc.py", 7)]
    facts = json.loads(seen.read_text())
    assert facts["has_calc"] and facts["diff"]
    assert not facts["has_spec"]  # withheld files are removed from the snapshot
    assert facts["write_bits"] == 0  # read-only (mode bits: root ignores them, but agents do not run as root)
    assert (
        Path(facts["cwd"]) != repo.path and not Path(facts["cwd"]).exists()
    )  # a temporary snapshot, removed


def test_prompt_file_placeholder(tmp_path: Path, shared: Path) -> None:
    repo = calc_repo(tmp_path)
    agent = _agent(
        shared,
        f"""
prompt = open(sys.argv[1]).read()
assert "return a / b" in prompt and sys.stdin.read() == ""
print({REVIEW!r})
""",
    )
    outcome = command.build(_settings([AGENT_PYTHON, str(agent), "{prompt_file}"])).review(
        review_request(repo.path)
    )
    assert outcome.status is ReviewerStatus.OK, outcome.reason


def test_agent_writing_into_the_checkout_is_a_mutation(tmp_path: Path, shared: Path) -> None:
    repo = calc_repo(tmp_path)
    agent = _agent(
        shared,
        f"""
sys.stdin.read()
open({str(repo.path / "app" / "calc.py")!r}, "a").write("# fixed it for you\\n")
print({REVIEW!r})
""",
    )
    write_config(
        repo.path, "agent", {"provider": "command", "command": [AGENT_PYTHON, str(agent)], "timeout": 5}
    )
    before = (repo.path / "app" / "calc.py").read_text(encoding="utf-8")
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 3, result.stderr
    report = result.report()
    if os.geteuid() == 0:  # the agent is another uid: the checkout is out of its reach
        assert "PermissionError" in report["reasons"][0]
        assert (repo.path / "app" / "calc.py").read_text(encoding="utf-8") == before
    else:
        assert "reviewer mutation" in report["reasons"][0] and "real checkout" in report["reasons"][0]
    assert report["findings"] == []


def test_agent_writing_into_its_snapshot_is_a_mutation(tmp_path: Path, shared: Path) -> None:
    body = f"""
sys.stdin.read()
os.chmod("app", 0o755)
open("app/new.py", "w").write("x = 1\\n")
print({REVIEW!r})
"""
    outcome = _review_with_agent(tmp_path, shared, body)
    assert outcome.status is ReviewerStatus.BLOCKED
    # As root the agent is another uid: the snapshot is root's, read-only to it.
    assert ("PermissionError" if os.geteuid() == 0 else "its snapshot") in outcome.reason


def test_failing_agent_blocks_with_its_error(tmp_path: Path, shared: Path) -> None:
    outcome = _review_with_agent(tmp_path, shared, "sys.stdin.read()\nsys.exit('model quota exhausted')\n")
    assert outcome.status is ReviewerStatus.BLOCKED
    assert "exited with code 1: model quota exhausted" in outcome.reason


def test_hanging_agent_is_killed_at_the_timeout(tmp_path: Path, shared: Path) -> None:
    outcome = _review_with_agent(tmp_path, shared, "import time\ntime.sleep(30)\n", timeout=1.0)
    assert outcome.status is ReviewerStatus.BLOCKED and "timeout" in outcome.reason


def test_an_agent_that_floods_stderr_is_stopped_at_its_cap(tmp_path: Path, shared: Path) -> None:
    """Only the end of stderr explains a failure; an agent that never stops writing there would
    fill the runner's disk before its timeout."""
    flood = "import sys\nwhile True:\n    sys.stderr.write('warning: retrying\\n' * 4096)\n"
    outcome = _review_with_agent(tmp_path, shared, flood, timeout=60.0)
    assert outcome.status is ReviewerStatus.BLOCKED and "to stderr" in outcome.reason, outcome.reason


def test_missing_command_option_is_a_config_error(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "agent", {"provider": "command"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert "reviewer.agent.command: expected the agent's command line" in result.stderr


def _with_fake_clis(shared: Path, monkeypatch: pytest.MonkeyPatch, answer: str) -> Path:
    """The codex and claude stand-ins first on PATH, answering `answer`; the prompt file."""
    bin_dir = install_agent_clis(shared / "bin")
    (shared / "answer.txt").write_text(answer, encoding="utf-8")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_AGENT_ANSWER", str(shared / "answer.txt"))
    monkeypatch.setenv("FAKE_AGENT_PROMPT", str(shared / "out" / "prompt.txt"))
    monkeypatch.setenv("FAKE_AGENT_INSTRUCTIONS", str(shared / "out" / "instructions.txt"))
    return shared / "out" / "prompt.txt"


@pytest.mark.parametrize("table", ["codex", "claude-code"])
def test_the_documented_agent_command_lines_start_in_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, shared: Path) -> None:
    """The snapshot has no `.git`: Codex refuses to start there without --skip-git-repo-check.
    The stand-ins have the real CLIs' flag rules, and print their JSON output formats."""
    prompt = _with_fake_clis(shared, monkeypatch, "Here it is:\n" + REVIEW)
    repo = calc_repo(tmp_path / "work")
    outcome = command.build(_settings(documented_command(table))).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [(item.path, item.line) for item in outcome.findings] == [("app/calc.py", 7)]
    assert "return a / b" in prompt.read_text(encoding="utf-8")
    # The CLIs' own token counts, cached input included, not the estimate.
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == ((2400, 90) if table == "codex" else (2784, 80))


def test_the_fake_codex_refuses_outside_a_repository_as_the_real_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: Path) -> None:
    _with_fake_clis(shared, monkeypatch, REVIEW)
    repo = calc_repo(tmp_path / "work")
    outcome = command.build(_settings(["codex", "exec", "--sandbox", "read-only", "-"])).review(
        review_request(repo.path))
    assert outcome.status is ReviewerStatus.BLOCKED
    assert outcome.reason == ("'codex' exited with code 1: Not inside a trusted directory and "
                              "--skip-git-repo-check was not specified.")


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_an_error_on_stdout_only_is_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output_format: str, shared: Path) -> None:
    """Claude Code logged out prints its error on stdout and nothing on stderr."""
    _with_fake_clis(shared, monkeypatch, REVIEW)
    monkeypatch.setenv("FAKE_AGENT_LOGGED_OUT", "1")
    repo = calc_repo(tmp_path / "work")
    outcome = command.build(_settings(["claude", "-p", "--output-format", output_format])).review(
        review_request(repo.path))
    assert outcome.status is ReviewerStatus.BLOCKED
    assert outcome.reason.startswith("'claude' exited with code 1: ")
    assert "Not logged in · Please run /login" in outcome.reason
    assert "no error output" not in outcome.reason


def test_stdout_quoted_in_a_failure_is_masked_escaped_and_cut(tmp_path: Path, shared: Path) -> None:
    body = ("sys.stdin.read()\nprint('working...')\n"
            "print('::error::\\x1b[31mfailed\\x1b[0m with key ghp_' + 'a' * 36 + ' ' + 'x' * 5000)\nsys.exit(4)\n")
    outcome = _review_with_agent(tmp_path, shared, body)
    assert outcome.status is ReviewerStatus.BLOCKED
    assert "\x1b" not in outcome.reason and "\n" not in outcome.reason and "failed with key" in outcome.reason
    assert "ghp_" + "a" * 36 not in outcome.reason
    assert len(outcome.reason) < 400 and outcome.reason.endswith("…")


def test_an_is_error_result_wrapper_blocks_with_its_text(tmp_path: Path, shared: Path) -> None:
    wrapper = json.dumps({"type": "result", "subtype": "success", "is_error": True,
                          "result": "API Error: 529 overloaded"})
    outcome = _review_with_agent(tmp_path, shared, f"sys.stdin.read()\nprint({wrapper!r})\n")
    assert outcome.status is ReviewerStatus.BLOCKED
    assert "reported an error: API Error: 529 overloaded" in outcome.reason


def test_a_failed_codex_turn_blocks_with_its_message(tmp_path: Path, shared: Path) -> None:
    events = "\n".join(json.dumps(event) for event in (
        {"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
        {"type": "turn.failed", "error": {"message": "stream disconnected before completion"}}))
    outcome = _review_with_agent(tmp_path, shared, f"sys.stdin.read()\nprint({events!r})\n")
    assert outcome.status is ReviewerStatus.BLOCKED
    assert "reported an error: stream disconnected before completion" in outcome.reason


def test_what_an_agent_printed_is_read_as_its_answer() -> None:
    from reviewgate.reviewers.model.agent_output import read_agent_output

    pretty = json.dumps(json.loads(REVIEW), indent=2)
    assert read_agent_output(pretty).text == pretty  # a review is no wrapper, however printed
    events = "\n".join([json.dumps({"type": "thread.started", "thread_id": "t"}), "warning: slow network",
                        json.dumps({"type": "item.completed", "item": {"id": "1", "type": "agent_message", "text": REVIEW}})])
    assert read_agent_output(events).text == REVIEW
    assert read_agent_output(json.dumps({"type": "turn.started"})).error == "its JSON events hold no agent_message"


def test_the_agent_gets_a_clean_environment_with_its_key_and_the_names_it_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: Path) -> None:
    """An agent following an instruction in the diff reaches nothing of the gate's: no forge
    token, no other key, no cache key, no step outputs to write `verdict=approve` into; it gets
    PATH, its own HOME, its key under `api_key_env`'s name and the names `environment` lists."""
    outputs = tmp_path / "github_output"
    outputs.write_text("", encoding="utf-8")
    for name, value in {"REVIEWGATE_CACHE_KEY": "cache-key", "GITHUB_TOKEN": "ghs_forge", "OTHER_API_KEY": "other",
                        "AGENT_API_KEY": "agent-key", "AGENT_REGION": "eu", "GITHUB_OUTPUT": str(outputs),
                        "GITHUB_ENV": str(outputs), "LANG": "C.UTF-8"}.items():
        monkeypatch.setenv(name, value)
    seen = shared / "out" / "seen.json"
    agent = _agent(shared, f"""
sys.stdin.read()
if os.environ.get("GITHUB_OUTPUT"):
    open(os.environ["GITHUB_OUTPUT"], "a").write("verdict=approve\\n")
json.dump(dict(os.environ), open({str(seen)!r}, "w"))
print({REVIEW!r})
""")
    settings = ReviewerSettings(name="agent", provider="command", timeout=5.0, api_key_env="AGENT_API_KEY",
                                options={"command": [AGENT_PYTHON, str(agent)], "verify_findings": False,
                                         "environment": ["AGENT_REGION"]})
    outcome = command.build(settings).review(review_request(calc_repo(tmp_path).path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    environment = json.loads(seen.read_text())
    assert sorted(environment) == ["AGENT_API_KEY", "AGENT_REGION", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                                   "HOME", "LANG", "PATH", "TEMP", "TMP", "TMPDIR"]
    assert environment["AGENT_API_KEY"] == "agent-key" and environment["AGENT_REGION"] == "eu"
    assert environment["HOME"] != os.environ["HOME"] and not Path(environment["HOME"]).exists()  # its own, removed
    assert outputs.read_text(encoding="utf-8") == ""


def test_the_environment_setting_refuses_the_gates_own_files(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "agent", {"provider": "command", "command": [AGENT_PYTHON, "-c", "pass"],
                                      "environment": ["GITHUB_OUTPUT", "AGENT_REGION", "GITHUB_TOKEN",
                                                      "ACTIONS_CACHE_URL"]})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert ("reviewer.agent.environment: GITHUB_OUTPUT, GITHUB_TOKEN, ACTIONS_CACHE_URL may not be passed to an "
            "agent (a forge token, the gate's step outputs, runner files or cache key)") in result.stderr


# reviewgate: ignore[security/committed-secret] a made-up value outside the repository the agent must not read
OUTSIDE_SECRET = "outside-secret-Kq3v-never-read"
# `x/y/hop` resolves to the snapshot's root, so each `x/y/hop/` goes back there: lexically the link
# stays inside (its `..` cancel the hops as written), physically it climbs to / and on to /etc.
CLIMB = "x/y/hop/" * 12 + "../" * 20 + "etc/passwd"
LINK_REVIEW = json.dumps(review_document([finding("app/calc.py", 7, title="What the links hold")], "request_changes"))


def test_links_out_of_the_snapshot_are_left_out_and_links_inside_are_kept(tmp_path: Path, shared: Path) -> None:
    """A committed link to /etc/passwd, to a secret outside the repository, or one that climbs
    out through another link, must not let the agent read the file: its answer reaches report.json."""
    outside = tmp_path / "credentials.txt"
    outside.write_text(OUTSIDE_SECRET + "\n", encoding="utf-8")
    repo = calc_repo(tmp_path)
    links = {"leak": "/etc/passwd", "creds": str(outside), "up": "../" * 20 + "etc/passwd",
             "x/y/hop": "../..", "climb": CLIMB, "same": "app/calc.py", "app/util_link.py": "util.py"}
    for name, target in links.items():
        (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / name).symlink_to(target)
    # The branch's attributes do not shape the snapshot: git archive would have left util.py out.
    (repo.path / ".gitattributes").write_text("app/util.py export-ignore\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "links")
    seen = shared / "out" / "seen.json"
    agent = _agent(shared, f"""
sys.stdin.read()
def read(name):
    try:
        return open(name, encoding="utf-8", errors="replace").read()
    except OSError as error:
        return "unreadable: " + type(error).__name__
facts = {{name: read(name) for name in {sorted(links)!r}}}
facts["kept"] = sorted(name for name in {sorted(links)!r} if os.path.islink(name))
json.dump(facts, open({str(seen)!r}, "w"))
review = json.loads({LINK_REVIEW!r})
review["findings"][0]["body"] = " ".join(facts[name] for name in ("leak", "creds", "up", "climb"))
print(json.dumps(review))
""")
    write_config(repo.path, "agent", {"provider": "command", "command": [AGENT_PYTHON, str(agent)], "timeout": 10,
                                      "verify_findings": False})
    result = run_cli(repo.path, "run", "--base", "main")
    facts = json.loads(seen.read_text(encoding="utf-8"))
    assert facts["kept"] == ["app/util_link.py", "same", "x/y/hop"]
    assert facts["same"] == (repo.path / "app" / "calc.py").read_text(encoding="utf-8")
    assert facts["app/util_link.py"].startswith("def helper")
    for name in ("leak", "creds", "up", "climb"):
        assert facts[name] == "unreadable: FileNotFoundError", name
    written = "\n".join(path.read_text(errors="replace") for path in result.output_dir.rglob("*") if path.is_file())
    assert "What the links hold" in json.dumps(result.report())
    assert "root:x:0:0" not in written and OUTSIDE_SECRET not in written
