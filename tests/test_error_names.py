"""Every error names what the user typed: the flag on the command line, the input in the action,
the config key, and a config file only when there is one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.cli import clean_environment, run_cli
from testing.repo import make_repo, write_base_config

ENTRYPOINT = Path(__file__).resolve().parents[1] / "entrypoint.py"
BASE = {"app.py": "x = 1\n"}
CHANGE = {"app.py": "x = 2\n"}


def error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("reviewgate: error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def run_action(repo: Path, inputs: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """entrypoint.py with the INPUT_* variables the runner sets (name upper-cased, hyphens kept)."""
    env = clean_environment({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    return subprocess.run([sys.executable, str(ENTRYPOINT)], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize(
    ("provider", "needed"),
    [("openai", 'model = "…"'), ("anthropic", 'model = "…"'), ("command", "command = [")],
)
def test_a_model_reviewer_without_config_names_the_flag_and_blames_no_file(
    tmp_path: Path, provider: str, needed: str
) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--reviewer", provider)
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert line.startswith(f"reviewgate: error: --reviewer {provider}: this reviewer needs settings and there is "
                           "no config file; create .reviewgate.toml")
    assert f"[reviewer.{provider}]" in line and needed in line
    assert not (repo.path / ".reviewgate.toml").exists()


def test_with_a_config_file_the_error_names_it_and_the_missing_table(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    write_base_config(repo.path, '[review]\nfail_on = ["correctness:major"]\n')
    result = run_cli(repo.path, "run", "--reviewer", "openai")
    line = error_line(result.stderr)
    assert result.returncode == 2
    assert "--reviewer openai: this reviewer needs settings and .reviewgate.toml has no [reviewer.openai] table" in line


def test_doctor_says_the_same(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "doctor", "--reviewer", "openai")
    assert result.returncode == 2
    assert ("problem: --reviewer openai: this reviewer needs settings and there is no config file"
            in result.stdout), result.stdout


def test_an_unknown_reviewer_names_the_flag(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--reviewer", "gpt-nine")
    assert result.returncode == 2
    assert error_line(result.stderr).startswith("reviewgate: error: --reviewer gpt-nine: unknown reviewer")


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"max-rounds": "three"}, "reviewgate: error: input max-rounds: invalid int value: 'three'"),
        ({"on-missing-key": "later"}, "reviewgate: error: input on-missing-key: invalid choice: 'later'"),
        ({"fail-on": "style:major"}, "reviewgate: error: input fail-on: expected CLASS:SEVERITY"),
        ({"max-rounds": "0"}, "reviewgate: error: input max-rounds: expected a whole number of at least 1"),
        ({"reviewers": "openai"}, "reviewgate: error: input reviewers openai: this reviewer needs settings"),
        ({"base": "no-such-branch"}, "reviewgate: error: 'no-such-branch' (from input base) is not a local ref"),
        ({"config": "missing.toml"}, "reviewgate: error: input config: missing.toml: config file not found"),
    ],
)
def test_action_input_errors_name_the_input_never_the_flag(
    tmp_path: Path, inputs: dict[str, str], expected: str
) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    completed = run_action(repo.path, inputs)
    assert completed.returncode == 2
    line = error_line(completed.stderr)
    assert line.startswith(expected), line
    assert "--" not in line and "argument" not in line and "--help" not in line


def test_bare_reviewgate_prints_usage_and_exits_2(tmp_path: Path) -> None:
    result = run_cli(tmp_path, )
    assert result.returncode == 2
    assert result.stderr.startswith("usage: reviewgate ")
    assert "run" in result.stderr and "doctor" in result.stderr and "reviewgate reviewgate" not in result.stderr


@pytest.mark.parametrize(
    ("args", "hint"),
    [(("--bogus",), "(see reviewgate --help)"), (("run", "--max-rounds", "three"), "(see reviewgate run --help)")],
)
def test_a_bad_flag_points_at_the_right_help(tmp_path: Path, args: tuple[str, ...], hint: str) -> None:
    result = run_cli(tmp_path, *args)
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert line.endswith(hint) and "reviewgate reviewgate" not in line
