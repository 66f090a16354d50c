"""Bad input: one clear line on stderr, the right exit code, no traceback, nothing half-written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.cli import clean_environment, run_cli
from testing.repo import make_repo

BASE = {"app.py": "x = 1\n"}
CHANGE = {"app.py": "x = 2\n"}


def assert_one_line_error(stderr: str, *fragments: str) -> None:
    errors = [line for line in stderr.splitlines() if line.startswith("reviewgate: error:")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def test_not_a_git_repository(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "run", "--base", "main")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "not a git repository")


def test_base_that_does_not_exist(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--base", "no-such-branch")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "no-such-branch", "--base")


def test_config_that_is_not_toml(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": "[review\nreviewers = 1\n"}, CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, ".reviewgate.toml", "not valid TOML")
    assert not (repo.path / ".reviewgate").exists()


@pytest.mark.parametrize(
    ("config", "fragments"),
    [
        ('[review]\nreviewers = "builtin"\n', (".reviewgate.toml: review.reviewers: expected a list of strings", "'builtin'")),
        ("[review]\nmax_rounds = 0\n", ("review.max_rounds: expected a whole number of at least 1", "got 0")),
        ('[review]\nfail_on = ["style:major"]\n', ("review.fail_on: expected CLASS:SEVERITY", "'style:major'")),
        ('[reviewer.llm]\ntimeout = "slow"\n', ("reviewer.llm.timeout: expected a number",)),
        ("[verify]\nenabled = 1\n", ("verify.enabled: expected true or false",)),
    ],
)
def test_config_with_a_wrong_type_names_file_and_key(tmp_path: Path, config: str, fragments: tuple[str, ...]) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config}, CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, *fragments)


def test_unknown_config_key_warns_and_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": "[review]\nreviewerz = []\n"}, CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0
    assert "reviewgate: warning: .reviewgate.toml: review.reviewerz: unknown key, ignored" in result.stderr


def test_unknown_reviewer_name(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--base", "main", "--reviewer", "gpt-nine")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "--reviewer gpt-nine", "unknown reviewer")


def test_output_dir_that_is_a_file_is_not_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    (repo.path / "out").write_text("precious")
    result = run_cli(repo.path, "run", "--base", "main", "--output-dir", "out")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "--output-dir", "not a directory")
    assert (repo.path / "out").read_text() == "precious"


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--base", "main", "--config", "nope.toml")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "nope.toml", "not found")


def test_bad_flag(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--bogus")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "--bogus")


def test_a_mistyped_flag_gets_the_flag_it_looks_like_and_its_commands_help(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "run", "--no-verfy")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "unrecognized arguments: --no-verfy; did you mean '--no-verify'? "
                                         "(see reviewgate run --help)")
    unlike = run_cli(repo.path, "doctor", "--zzz")
    assert_one_line_error(unlike.stderr, "unrecognized arguments: --zzz (see reviewgate doctor --help)")


def test_a_mistyped_config_key_or_section_gets_the_one_it_looks_like(tmp_path: Path) -> None:
    config = '[reveiw]\nfail_on = []\n[review]\nmax_round = 2\n[lenses]\nrequire_reproducton = "never"\n'
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config}, CHANGE)
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stderr
    for line in ("reveiw: unknown key, ignored; did you mean 'review'?",
                 "review.max_round: unknown key, ignored; did you mean 'max_rounds'?",
                 "lenses.require_reproducton: unknown key, ignored; did you mean 'require_reproduction'?"):
        assert f"reviewgate: warning: .reviewgate.toml: {line}\n" in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["run", "merge", "verify", "freeze", "doctor"])
def test_a_named_command_gets_only_its_own_parser_and_the_same_one(command: str) -> None:
    # A run builds only its own command's parser (argparse takes about a millisecond per command);
    # its flags, help and errors are the ones the parser of every command has for it.
    import argparse
    import io

    from reviewgate.cli import build_parser, main

    def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next(action.choices for action in parser._actions if isinstance(action.choices, dict))  # noqa: SLF001

    alone, every = commands(build_parser(command)), commands(build_parser())
    assert list(alone) == [command]
    assert list(every) == ["run", "merge", "verify", "freeze", "doctor"]
    assert alone[command].format_help() == every[command].format_help()
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"], stdout=io.StringIO())
    assert exited.value.code == 0


@pytest.mark.parametrize("command", [("run", "--base", "main"), ("freeze",), ("verify",), ("doctor",)])
def test_git_missing_from_path_is_one_line_saying_so_and_blocks(tmp_path: Path, command: tuple[str, ...]) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    no_git = tmp_path / "bin-without-git"
    no_git.mkdir()
    result = run_cli(repo.path, *command, env={"PATH": str(no_git)})
    assert result.returncode == 3, result.stdout + result.stderr
    message = ("git is needed and was not found on PATH: install git or add its directory to PATH "
               "(exit 3: the review could not be done; this says nothing about the code)")
    if command[0] == "doctor":  # one line per problem on stdout, as every doctor check
        assert f"problem: {message}" in result.stdout.splitlines() and "Traceback" not in result.stderr
    else:
        assert_one_line_error(result.stderr, message)
    assert "internal error" not in result.stderr + result.stdout


def test_a_mistyped_command_or_choice_gets_the_one_it_looks_like(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    result = run_cli(repo.path, "rn")
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "invalid choice: 'rn'", "; did you mean 'run'? (see reviewgate --help)")
    choice = run_cli(repo.path, "run", "--on-missing-key", "skp")
    assert choice.returncode == 2
    assert_one_line_error(choice.stderr, "invalid choice: 'skp'", "; did you mean 'skip'?")
    unlike = run_cli(repo.path, "zzzz")
    assert unlike.returncode == 2 and "did you mean" not in unlike.stderr


def test_a_mistyped_reviewer_gets_the_one_it_looks_like_from_flag_config_and_input(tmp_path: Path) -> None:
    config = '[review]\nreviewers = ["bultin"]\n[reviewer.llm]\nprovider = "opnai"\nmodel = "m"\n'
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config}, CHANGE)
    flag = run_cli(repo.path, "run", "--base", "main", "--reviewer", "bultin")
    assert flag.returncode == 2
    assert_one_line_error(flag.stderr, "--reviewer bultin: unknown reviewer", "; did you mean 'builtin'?")
    named = run_cli(repo.path, "run", "--base", "main")
    assert named.returncode == 2
    assert_one_line_error(named.stderr, ".reviewgate.toml: review.reviewers: 'bultin': unknown reviewer",
                          "; did you mean 'builtin'?")
    provider = run_cli(repo.path, "run", "--base", "main", "--reviewer", "llm")
    assert provider.returncode == 2
    assert_one_line_error(provider.stderr, "reviewer.llm.provider: 'opnai'", "; did you mean 'openai'?")
    entrypoint = Path(__file__).resolve().parents[1] / "entrypoint.py"
    action = subprocess.run([sys.executable, str(entrypoint)], cwd=repo.path, capture_output=True, text=True,
                            env=clean_environment({"INPUT_BASE": "main", "INPUT_REVIEWERS": "bultin"}),
                            timeout=120, check=False)
    assert action.returncode == 2
    assert_one_line_error(action.stderr, "input reviewers bultin: unknown reviewer", "; did you mean 'builtin'?")
