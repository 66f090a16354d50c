"""What the app under review gets: an allowlisted environment, secrets granted by the target
side only, never a forge token or a reviewer's key. Real repositories, the real CLI and the
real container entrypoint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reviewgate.verify.environment import step_environment
from reviewgate.verify.manifest import parse_manifest
from reviewgate.verify.processes import RUN_COOKIE_VARIABLE
from testing.cli import clean_environment, run_cli
from testing.repo import commit, make_repo
from testing.verify_app import PYTHON

pytestmark = pytest.mark.timeout(90)

ENTRYPOINT = Path(__file__).resolve().parents[1] / "entrypoint.py"
# reviewgate: ignore[security/committed-secret] made-up values the tests look for in the app's output
TOKEN = "ghs_forgeTokenNeverForTheApp0123456789"
OPENAI_KEY = "sk-reviewerKeyNeverForTheApp"
DATABASE_URL = "postgres://app:db-password-granted@127.0.0.1/app"
# The test step prints the whole environment it got, so a leak shows in test.log.
PRINT_ENVIRONMENT = f"{PYTHON} -c 'import os; [print(k, \"=\", v) for k, v in sorted(os.environ.items())]'"
CONFIG = """\
[reviewer.llm]
provider = "openai"
model = "gpt-test"
api_key_env = "OPENAI_API_KEY"
"""


def toml_manifest(secrets: list[str], test: str = PRINT_ENVIRONMENT) -> str:
    names = ", ".join(f'"{name}"' for name in secrets)
    return f"secrets = [{names}]\n\n[test]\nrun = '''{test}'''\n"


def repo_with(tmp_path: Path, base_secrets: list[str] | None, branch_secrets: list[str],
              config: str = CONFIG) -> Path:
    """`main` has the config and (unless None) a manifest listing `base_secrets`; the branch
    lists `branch_secrets`."""
    base: dict[str, str | None] = {"README.md": "app\n", ".reviewgate.toml": config}
    if base_secrets is not None:
        base[".prepcook/scripts.toml"] = toml_manifest(base_secrets)
    branch = {".prepcook/scripts.toml": toml_manifest(branch_secrets), "README.md": "app, changed\n"}
    return make_repo(tmp_path, base, branch).path  # type: ignore[arg-type]


GATE_ENV = {"GITHUB_TOKEN": TOKEN, "GITLAB_TOKEN": TOKEN, "CI_JOB_TOKEN": TOKEN, "OPENAI_API_KEY": OPENAI_KEY,
            "ACTIONS_RUNTIME_TOKEN": TOKEN, "DATABASE_URL": DATABASE_URL, "REVIEWGATE_CACHE_KEY": TOKEN}


def test_steps_get_the_allowlist_the_grant_and_the_cookie_only() -> None:
    parsed = parse_manifest({"test": "t", "secrets": ["DEPLOY_KEY"], "env": {"APP_ENV": "ci"}}, "m.toml")
    environ = {
        "PATH": "/bin", "HOME": "/home/runner", "LC_ALL": "C.UTF-8", "GITHUB_SHA": "abc", "CI_COMMIT_SHA": "abc",
        "GITHUB_TOKEN": TOKEN, "GITLAB_TOKEN": TOKEN, "CI_JOB_TOKEN": TOKEN, "INPUT_GITHUB-TOKEN": TOKEN,
        "ACTIONS_RUNTIME_TOKEN": TOKEN, "ACTIONS_ID_TOKEN_REQUEST_URL": "u", "GITHUB_ENV": "/tmp/env",
        "CI_REPOSITORY_URL": f"https://gitlab-ci-token:{TOKEN}@gitlab.example/x.git",
        "SOME_UNLISTED_PASSWORD": "p", "DEPLOY_KEY": "d", "APP_ENV": "prod",
    }
    env = step_environment(environ, parsed, {"STEP": "1"}, ("DEPLOY_KEY",), "cookie-1")
    assert env == {
        "PATH": "/bin", "HOME": "/home/runner", "LC_ALL": "C.UTF-8", "GITHUB_SHA": "abc", "CI_COMMIT_SHA": "abc",
        "DEPLOY_KEY": "d", "APP_ENV": "ci", "STEP": "1", RUN_COOKIE_VARIABLE: "cookie-1",
    }
    # The manifest cannot take the cookie off its processes.
    assert step_environment(environ, parsed, {RUN_COOKIE_VARIABLE: "x"}, (), "c")[RUN_COOKIE_VARIABLE] == "c"


def test_the_container_entrypoint_does_not_hand_its_token_to_the_app(tmp_path: Path) -> None:
    """Case 2: the action's github-token input becomes GITHUB_TOKEN for the gate; the app's
    steps must not see it, and it must not be printed in test.log or on the console."""
    repo = repo_with(tmp_path, [], [])
    env = clean_environment({
        "GITHUB_ACTIONS": "true", "INPUT_BASE": "main", "INPUT_OUTPUT-DIR": "gate-out",
        "INPUT_GITHUB-TOKEN": TOKEN, "INPUT_REVIEWERS": "builtin", "GITHUB_RUN_ID": "run-for-the-app",
    })
    completed = subprocess.run([sys.executable, str(ENTRYPOINT)], cwd=repo, env=env, capture_output=True,
                               text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    log = (repo / "gate-out/verify/test.log").read_text()
    assert "GITHUB_RUN_ID = run-for-the-app" in log  # the control: the step printed its environment
    assert TOKEN not in log and TOKEN not in completed.stdout
    assert "GITHUB_TOKEN" not in log and "INPUT_" not in log


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "CI_JOB_TOKEN", "ACTIONS_RUNTIME_TOKEN",
                                  "REVIEWGATE_CACHE_KEY"])
def test_a_withheld_name_in_secrets_blocks_naming_it(tmp_path: Path, name: str) -> None:
    """Case 3: even when the target branch's manifest lists it, a forge token or a configured
    reviewer's key is refused: blocked, exit 3, the name in the reason; nothing runs."""
    repo = repo_with(tmp_path, [name], [name])
    result = run_cli(repo, "run", "--base", "main", "--reviewer", "builtin", env=GATE_ENV)
    assert result.returncode == 3, result.stderr
    verify = result.report()["verify"]
    assert verify["status"] == "blocked" and name in verify["reason"] and verify["steps"] == []
    assert TOKEN not in result.stdout and OPENAI_KEY not in result.stdout
    assert not (result.output_dir / "verify/test.log").exists()


def test_a_secret_the_branch_adds_is_refused_until_merged(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, ["DATABASE_URL"], ["DATABASE_URL", "DEPLOY_KEY"])
    result = run_cli(repo, "run", "--base", "main", "--reviewer", "builtin",
                     env={**GATE_ENV, "DEPLOY_KEY": "deploy-key-value"})
    assert result.returncode == 3, result.stderr
    reason = result.report()["verify"]["reason"]
    assert "DEPLOY_KEY" in reason and "after merge" in reason and "merge base" in reason
    assert "DATABASE_URL" not in reason


def test_a_secret_granted_at_the_merge_base_reaches_the_app_masked(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, ["DATABASE_URL"], ["DATABASE_URL"])
    check = f"{PYTHON} -c 'import os; print(\"url\", os.environ[\"DATABASE_URL\"]); " \
            f"raise SystemExit(os.environ[\"DATABASE_URL\"] != \"{DATABASE_URL}\")'"
    commit(repo, {".prepcook/scripts.toml": toml_manifest(["DATABASE_URL"], check)})
    result = run_cli(repo, "run", "--base", "main", "--reviewer", "builtin", env=GATE_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.report()["verify"]["status"] == "passed"
    log = (result.output_dir / "verify/test.log").read_text()
    assert "url ***" in log and DATABASE_URL not in log and DATABASE_URL not in result.stdout


def test_a_manifest_new_in_the_branch_is_granted_nothing(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, None, ["DATABASE_URL"])
    result = run_cli(repo, "run", "--base", "main", "--reviewer", "builtin", env=GATE_ENV)
    assert result.returncode == 3, result.stderr
    reason = result.report()["verify"]["reason"]
    assert "DATABASE_URL" in reason and "new in this branch" in reason


def test_the_config_can_grant_a_secret(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, None, ["DATABASE_URL"], CONFIG + '\n[verify]\nsecrets = ["DATABASE_URL"]\n')
    result = run_cli(repo, "run", "--base", "main", "--reviewer", "builtin", env=GATE_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DATABASE_URL = ***" in (result.output_dir / "verify/test.log").read_text()


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "REVIEWGATE_CACHE_KEY"])
def test_the_config_cannot_grant_a_withheld_name(tmp_path: Path, name: str) -> None:
    repo = repo_with(tmp_path, [], [], CONFIG + f'\n[verify]\nsecrets = ["{name}"]\n')
    result = run_cli(repo, "run", "--base", "main", "--reviewer", "builtin", env=GATE_ENV)
    assert result.returncode == 2
    assert f"verify.secrets: {name}" in result.stderr and OPENAI_KEY not in result.stderr and TOKEN not in result.stderr


def test_verify_by_name_grants_the_working_tree_manifest_or_the_merge_base_with_base(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, [], ["DATABASE_URL"])
    local = run_cli(repo, "verify", env=GATE_ENV)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "DATABASE_URL = ***" in (local.output_dir / "verify/test.log").read_text()
    against_main = run_cli(repo, "verify", "--base", "main", env=GATE_ENV)
    assert against_main.returncode == 3
    assert "DATABASE_URL" in against_main.report()["verify"]["reason"]
