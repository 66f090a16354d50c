"""`reviewgate doctor` against real repositories and a real local model API."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from testing.agent_clis import install_agent_clis
from testing.cli import run_cli
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import LLAMA_CPP_PYTHON, ModelServer, Reply
from testing.repo import write_base_config

KEY = {"OPENAI_API_KEY": "sk-test-key-not-real"}


def _problems(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("problem:")]


def test_all_good(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("other", "test-model")) as server:
        write_config(repo.path, "openai", fast_openai(server.url))
        result = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not _problems(result.stdout)
    assert "ok: reviewer openai: $OPENAI_API_KEY is set" in result.stdout
    assert "lists model test-model" in result.stdout
    # Listing models costs no generation; a server other than OpenAI's gets one probe of 16 tokens.
    [probe] = server.posts()
    assert probe.body["max_tokens"] == 16 and probe.body["response_format"]["type"] == "json_schema"
    assert "ok: reviewer openai: the server takes response_format json_schema" in result.stdout
    assert "ok: reviewer openai: the server honours the token cap in max_tokens" in result.stdout


def test_unknown_model_and_missing_key_are_unreachable(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("other",)) as server:
        write_config(repo.path, "openai", fast_openai(server.url))
        unknown = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        missing = run_cli(repo.path, "doctor", "--base", "main")
    assert unknown.returncode == 3 and _problems(unknown.stdout) == [
        f"problem: reviewer openai: {server.url}/v1/models does not list model 'test-model'"
    ]
    assert missing.returncode == 3
    assert _problems(missing.stdout) == [
        "problem: reviewer openai: the key variable $OPENAI_API_KEY is not set"
    ]


def test_unreachable_endpoint(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    write_config(repo.path, "openai", fast_openai(f"http://127.0.0.1:{port}"))
    result = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert result.returncode == 3
    assert "cannot connect" in _problems(result.stdout)[0]


def test_anthropic_model_check(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("claude-known",)) as server:
        write_config(
            repo.path, "claude", {"provider": "anthropic", "model": "claude-unknown", "base_url": server.url}
        )
        result = run_cli(repo.path, "doctor", "--base", "main", env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 3
    assert "model 'claude-unknown' is unknown (HTTP 404" in _problems(result.stdout)[0]


def test_command_reviewer_needs_its_program(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "agent", {"provider": "command", "command": ["no-such-agent-cli", "-p"]})
    missing = run_cli(repo.path, "doctor", "--base", "main")
    write_config(repo.path, "agent", {"provider": "command", "command": [sys.executable, "-c", "pass"]})
    present = run_cli(repo.path, "doctor", "--base", "main")
    assert missing.returncode == 3 and "'no-such-agent-cli' is not found" in missing.stdout
    assert present.returncode == 0, present.stdout


def test_config_problems_exit_two(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "openai", {"model": "m", "timeout": "soon"})
    bad_type = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    no_base = run_cli(repo.path, "doctor", "--base", "no-such-branch", "--reviewer", "builtin")
    assert bad_type.returncode == 2 and "reviewer.openai.timeout: expected a number" in bad_type.stdout
    assert no_base.returncode == 2 and "base 'no-such-branch'" in no_base.stdout
    assert "Traceback" not in bad_type.stderr + no_base.stderr


def test_independence_against_the_implementer(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("test-model",)) as server:
        write_config(repo.path, "openai", fast_openai(server.url, independent=True))
        base_config = (repo.path / ".reviewgate.toml").read_text()
        write_base_config(repo.path, base_config + '\n[implementer]\nprovider = "openai"\nmodel = "test-model"\n')
        same = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        write_base_config(repo.path, base_config + '\n[implementer]\nprovider = "anthropic"\nmodel = "claude-x"\n')
        different = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        write_base_config(repo.path, base_config)
        unnamed = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert same.returncode == 2 and "configured like the implementer" in same.stdout
    assert different.returncode == 0, different.stdout
    assert unnamed.returncode == 2 and "no [implementer] table" in unnamed.stdout


def test_outside_a_repository(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "doctor")
    assert result.returncode == 2 and "not a git repository" in result.stdout


def test_the_reviewer_that_takes_the_second_look_is_checked_too(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("test-model",)) as server:
        write_config(repo.path, "openai", fast_openai(server.url, verify_findings=True, verifier="judge"))
        base_config = (repo.path / ".reviewgate.toml").read_text()
        missing = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        judge = f'\n[reviewer.judge]\nprovider = "openai"\nmodel = "judge-model"\nbase_url = "{server.url}/v1"\n'
        write_base_config(repo.path, base_config + judge)
        unknown_model = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert missing.returncode == 2
    assert "reviewer.openai.verifier: expected the name of a configured [reviewer.NAME] table, got 'judge'" in (
        missing.stdout)
    assert unknown_model.returncode == 3
    assert _problems(unknown_model.stdout) == [
        f"problem: reviewer judge: {server.url}/v1/models does not list model 'judge-model'"
    ]


def test_a_llama_cpp_python_server_is_named_before_the_run(tmp_path: Path) -> None:
    """It refuses json_schema (HTTP 500) and ignores max_completion_tokens: doctor says which
    form it takes, and that a cap in the ignored field leaves a review unbounded."""
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("test-model",), mimic=LLAMA_CPP_PYTHON, unbounded_seconds=0) as server:
        write_config(repo.path, "openai", fast_openai(server.url))
        defaults = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        write_config(repo.path, "openai", fast_openai(server.url, max_tokens_parameter="max_completion_tokens"))
        ignored = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert defaults.returncode == 0, defaults.stdout
    assert ("note: reviewer openai: the server refuses response_format json_schema (HTTP 500 from "
            f"{server.url}/v1/chat/completions: 1 validation error") in defaults.stdout
    assert 'it takes json_object_with_schema: set response_format = "json_object_with_schema"' in defaults.stdout
    assert ignored.returncode == 2
    assert _problems(ignored.stdout) == [
        "problem: reviewer openai: the server ignores max_completion_tokens (4,096 tokens written to a cap of 16), "
        'so a review\'s length is unbounded; set max_tokens_parameter = "max_tokens"'
    ]


def test_options_the_model_refuses_are_named(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("o4-mini", "gpt-4o")) as server:
        write_config(repo.path, "openai", fast_openai(server.url, model="o4-mini", temperature=0.2))
        reasoning = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        write_config(repo.path, "openai", fast_openai(server.url, model="gpt-4o", reasoning_effort="high"))
        plain = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert ("note: reviewer openai: temperature = 0.2 is refused by reasoning model 'o4-mini' (o-series and gpt-5 "
            "models take no temperature); remove reviewer.openai.temperature") in reasoning.stdout
    assert ("note: reviewer openai: reasoning_effort = 'high' is refused by 'gpt-4o', which does not reason; "
            "remove reviewer.openai.reasoning_effort") in plain.stdout


def test_a_server_that_refuses_prompt_cache_retention_is_named_before_the_run(tmp_path: Path) -> None:
    """vLLM's OpenAI server rejects a field its request model lacks (HTTP 400, "Extra inputs are
    not permitted"): the probe carries the option, so doctor says so, not the first review."""
    def refuse(body: object) -> Reply | None:
        if isinstance(body, dict) and "prompt_cache_retention" in body:
            error = {"message": "[{'type': 'extra_forbidden', 'loc': ('body', 'prompt_cache_retention'), "
                                "'msg': 'Extra inputs are not permitted', 'input': '24h'}]",
                     "type": "BadRequestError", "param": None, "code": 400}
            return Reply(status=400, body={"object": "error", **error})
        return None

    repo = calc_repo(tmp_path)
    with ModelServer([], models=("test-model",), responder=refuse) as server:
        write_config(repo.path, "openai", fast_openai(server.url, prompt_cache_retention="24h"))
        refused = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
        write_config(repo.path, "openai", fast_openai(server.url))
        plain = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert refused.returncode == 3, refused.stdout
    [problem] = _problems(refused.stdout)
    assert problem.startswith(f"problem: reviewer openai: HTTP 400 from {server.url}/v1/chat/completions: ")
    assert "prompt_cache_retention" in problem and problem.endswith("remove reviewer.openai.prompt_cache_retention")
    assert plain.returncode == 0 and not _problems(plain.stdout), plain.stdout


def test_reasoning_effort_on_an_old_azure_api_version_is_a_problem(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    with ModelServer([], models=("review-deployment",)) as server:
        write_config(repo.path, "openai", fast_openai(server.url, model="review-deployment", api_version="2024-10-21",
                                                      reasoning_effort="medium"))
        result = run_cli(repo.path, "doctor", "--base", "main", env=KEY)
    assert result.returncode == 2
    assert ("problem: reviewer openai: reasoning_effort needs Azure api_version 2024-12-01-preview or later; "
            "api_version '2024-10-21' refuses it") in result.stdout


def test_a_codex_command_line_that_cannot_start_in_the_snapshot_is_a_problem(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    bin_dir = install_agent_clis(tmp_path / "bin")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    write_config(repo.path, "codex", {"provider": "command", "command": ["codex", "exec", "--sandbox", "read-only", "-"]})
    bare = run_cli(repo.path, "doctor", "--base", "main", env=env)
    write_config(repo.path, "codex", {"provider": "command",
                                      "command": ["codex", "exec", "--skip-git-repo-check", "--sandbox", "read-only", "-"]})
    fixed = run_cli(repo.path, "doctor", "--base", "main", env=env)
    assert bare.returncode == 2
    assert _problems(bare.stdout) == [
        "problem: reviewer codex: `codex exec` refuses to start outside a git repository, and the agent runs in a "
        'copy of the tree without .git: add "--skip-git-repo-check" to reviewer.codex.command'
    ]
    assert fixed.returncode == 0, fixed.stdout


def test_a_claude_command_line_that_loads_project_settings_gets_a_note(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    bin_dir = install_agent_clis(tmp_path / "bin")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    write_config(repo.path, "claude", {"provider": "command", "command": ["claude", "-p", "--output-format", "json"]})
    bare = run_cli(repo.path, "doctor", "--base", "main", env=env)
    write_config(repo.path, "claude", {"provider": "command", "command": [
        "claude", "-p", "--output-format", "json", "--setting-sources", "user", "--strict-mcp-config"]})
    fixed = run_cli(repo.path, "doctor", "--base", "main", env=env)
    assert bare.returncode == 0 and fixed.returncode == 0, bare.stdout + fixed.stdout
    assert ("note: reviewer claude: `claude` reads the project's .claude/settings.json (hooks, env, permissions) "
            'and .mcp.json; the snapshot holds the merge base\'s, but add "--setting-sources", "user", '
            '"--strict-mcp-config" (or "--bare") to reviewer.claude.command so none runs') in bare.stdout
    assert "setting-sources" not in fixed.stdout
