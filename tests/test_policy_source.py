"""The review policy is the target side's: a branch cannot relax the config that judges it.
Real repositories, the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testing.cli import clean_environment, run_cli
from testing.conformance import validate_report
from testing.repo import make_repo

JOBS_TEST = {"tests/test_jobs.py": "from app.jobs import run\n\n\ndef test_run(cursor):\n"
                                   "    assert run(cursor, 'nightly') is None\n"}
# A query built by formatting: one security/sql-injection finding at app/jobs.py:2, blocking by default.
QUERY_RULE = "security/sql-injection"
QUERY_CHANGE = {
    "app/jobs.py": "def run(cursor, request):\n    cursor.execute(f\"SELECT id FROM jobs WHERE name = '{request.args['name']}'\")\n",
    **JOBS_TEST,
}
# The same query with its value passed as a parameter: no finding.
PARAMETERS = "def run(cursor, name):\n    cursor.execute('SELECT id FROM jobs WHERE name = %s', [name])\n"
BASE = {"README.md": "# app\n", "app/__init__.py": "", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}
BASE_CONFIG = '[review]\nmax_rounds = 3\n'


def _policy_findings(report: dict[str, object]) -> list[dict[str, object]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return [item for item in findings if item["category"] == "policy"]


@pytest.mark.parametrize(
    ("relaxing", "shown"),
    [
        ('[review]\nfail_on = []\n',
         "review.fail_on: [systematic:major, correctness:major] → [] (drops systematic:major, correctness:major)"),
        (f'[review]\nmax_rounds = 3\n[lenses]\ndisable = ["{QUERY_RULE}"]\n',
         f"lenses.disable: (unset) → [{QUERY_RULE}]"),
        ('[review]\nmax_rounds = 3\nexclude = ["**"]\n', "review.exclude: [] → [**] (adds **)"),
    ],
    ids=["fail_on-empty", "lens-disabled", "exclude-everything"],
)
def test_a_branch_relaxing_the_config_is_still_judged_by_the_target_sides(
    tmp_path: Path, relaxing: str, shown: str
) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": BASE_CONFIG},
                     {**QUERY_CHANGE, ".reviewgate.toml": relaxing})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    validate_report(report)
    assert report["verdict"] == "request_changes"
    [query] = [item for item in report["findings"] if item["rule"] == QUERY_RULE]
    assert (query["path"], query["line"], query["blocking"]) == ("app/jobs.py", 2, True)
    [policy] = _policy_findings(report)
    assert (policy["class"], policy["blocking"], policy["path"]) == ("product_question", False, ".reviewgate.toml")
    assert shown in policy["body"]
    assert report["policy"]["origin"] == "base" and report["policy"]["commit"] == repo.base_sha
    assert report["policy"]["branch_changes"] == [shown]
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "takes effect after merge" in summary and shown in summary


def test_every_setting_the_branch_edits_is_listed_not_only_a_known_few(tmp_path: Path) -> None:
    """min_confidence, verify.secrets and verify.log_limit were missing from a hand-kept list: the
    listing now walks every table of both configs ([review], [verify], [reviewer.*], [cache])."""
    base = '[review]\nmin_confidence = 0.7\n[verify]\nsecrets = ["APP_TOKEN"]\n'
    branch = ('[review]\nmin_confidence = 0.1\n[verify]\nsecrets = ["APP_TOKEN", "DEPLOY_KEY"]\nlog_limit = 2048\n'
              '[reviewer.claude]\nprovider = "anthropic"\nmax_tokens = 10\n[cache]\ndir = "/tmp/shared"\n')
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": base}, {**QUERY_CHANGE, ".reviewgate.toml": branch})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    validate_report(report)
    shown = [
        "review.min_confidence: 0.7 → 0.1",
        "verify.secrets: [APP_TOKEN] → [APP_TOKEN, DEPLOY_KEY] (adds DEPLOY_KEY)",
        "verify.log_limit: 2097152 → 2048",
        "reviewer.claude.provider: (unset) → anthropic",
        "reviewer.claude.max_tokens: (unset) → 10",
        "cache.dir: (unset) → /tmp/shared",
    ]
    [policy] = _policy_findings(report)
    assert [line for line in shown if line not in policy["body"]] == []
    assert [line for line in shown if line not in report["policy"]["branch_changes"]] == []


def test_pyproject_table_on_the_branch_is_compared_with_the_base_file(tmp_path: Path) -> None:
    """The branch adds a .reviewgate.toml beside the base's [tool.reviewgate]: it would take over."""
    pyproject = '[project]\nname = "app"\n\n[tool.reviewgate.review]\nmax_rounds = 2\n'
    repo = make_repo(tmp_path, {**BASE, "pyproject.toml": pyproject},
                     {**QUERY_CHANGE, ".reviewgate.toml": '[review]\nfail_on = ["readability:blocker"]\n'})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    assert report["policy"]["path"] == "pyproject.toml"
    assert report["policy"]["branch_changes"][0] == "moves the config from pyproject.toml to .reviewgate.toml"
    assert "review.max_rounds: 2 → 3" in report["policy"]["branch_changes"]


def test_the_first_config_added_by_the_branch_is_used_and_said_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, {**QUERY_CHANGE, ".reviewgate.toml": '[review]\nfail_on = ["systematic:major"]\n'})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report()
    assert (report["policy"]["origin"], report["policy"]["commit"]) == ("branch", repo.head_sha)
    assert report["policy"]["fail_on"] == ["systematic:major"]
    assert any("first config" in note for note in report["notes"])
    assert "first config" in (result.output_dir / "summary.md").read_text(encoding="utf-8")


def test_a_branch_config_that_does_not_parse_is_a_finding_not_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": BASE_CONFIG},
                     {"app/jobs.py": PARAMETERS, **JOBS_TEST, ".reviewgate.toml": "[review\n"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    [policy] = _policy_findings(result.report())
    assert (policy["class"], policy["rule"], policy["blocking"]) == ("correctness", "policy/config-invalid", True)
    assert "not valid TOML" in policy["body"]


def test_a_malformed_config_at_the_target_side_exits_2_naming_where(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": "[review]\nreviewers = 1\n"},
                     {**QUERY_CHANGE, ".reviewgate.toml": BASE_CONFIG})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert ".reviewgate.toml: review.reviewers: expected a list of strings" in result.stderr


def test_an_uncommitted_config_in_the_working_tree_is_not_the_policy(tmp_path: Path) -> None:
    """A step before the gate (the branch's install scripts) could write one: it is not read."""
    repo = make_repo(tmp_path, BASE, QUERY_CHANGE)
    (repo.path / ".reviewgate.toml").write_text("[review]\nfail_on = []\n", encoding="utf-8")
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.report()["policy"]["origin"] == "defaults"


def test_include_dirty_compares_with_the_working_tree_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": BASE_CONFIG}, QUERY_CHANGE)
    (repo.path / ".reviewgate.toml").write_text("[review]\nfail_on = []\n", encoding="utf-8")
    result = run_cli(repo.path, "run", "--base", "main", "--include-dirty")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.report()["policy"]["branch_changes"][0].startswith("review.fail_on:")


def test_a_workflow_config_outside_the_repository_is_read_from_disk(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": BASE_CONFIG}, QUERY_CHANGE)
    outside = tmp_path / "ci.toml"
    outside.write_text('[review]\nfail_on = ["readability:blocker"]\n', encoding="utf-8")
    result = run_cli(repo.path, "run", "--base", "main", "--config", str(outside))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.report()["policy"]["origin"] == "workflow"


def test_freeze_and_doctor_name_the_policy_they_use(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": '[review]\nexclude = ["docs/**"]\n'},
                     {"docs/a.md": "a\n", ".reviewgate.toml": '[review]\nexclude = []\n'})
    frozen = run_cli(repo.path, "freeze", "--base", "main")
    assert frozen.returncode == 0, frozen.stderr
    assert f"review policy: .reviewgate.toml at {repo.base_sha[:12]} (the merge base" in frozen.stderr
    document = json.loads(frozen.stdout)
    assert [item["path"] for item in document["excluded"]] == ["docs/a.md"]  # the base's exclusion
    assert document["policy"]["branch_changes"] == ["review.exclude: [docs/**] → [] (drops docs/**)"]
    doctor = run_cli(repo.path, "doctor", "--base", "main")
    assert f"review policy: .reviewgate.toml at {repo.base_sha[:12]}" in doctor.stdout


def test_the_target_sides_tooling_files_come_with_the_policy_in_one_git_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the tooling says (generated files, test input) costs the one-line push no git process
    of its own: the base side's files are read in the policy's batch, misses included."""
    from reviewgate.freeze import git
    from reviewgate.freeze.tooling import tooling_at
    from reviewgate.policy.source import commit_side, policy_at

    repo = make_repo(tmp_path, {**BASE, ".gitattributes": "docs/api/** linguist-generated\n",
                                "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["checks"]\n'},
                     {"app/x.py": "X = 1\n"})
    calls: list[tuple[str, ...]] = []
    real = git.run_git

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(tuple(str(item) for item in args[1:3]))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git, "run_git", counting)
    base = commit_side(repo.path, repo.base_sha, "merge base")
    policy_at(repo.path, None, base, commit_side(repo.path, repo.head_sha, "head"))
    batches = len(calls)
    tooling = tooling_at(base.read)
    assert len(calls) == batches == 1, calls
    assert tooling.generated == ("docs/api/**",) and tooling.test_inputs == ("/checks",)


class _CountedPopen(subprocess.Popen[bytes]):
    started: list[str] = []

    def __init__(self, command: list[str], *args: object, **kwargs: object) -> None:
        type(self).started.append(next(item for item in command[1:] if not item.startswith("-") and "=" not in item))
        super().__init__(command, *args, **kwargs)  # type: ignore[call-overload]


def test_a_branch_on_top_of_its_base_has_its_policy_read_with_the_refs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-line push: the merge base is the base, whose config and tooling files the refs'
    `cat-file` read already; the policy starts no git process of its own, and reads what it did."""
    from reviewgate.freeze.freeze import resolve_refs
    from reviewgate.freeze.tooling import tooling_at
    from reviewgate.policy.source import BASE_SIDE, commit_side, policy_at, policy_files

    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": BASE_CONFIG,
                                ".gitattributes": "docs/api/** linguist-generated\n"},
                     {".reviewgate.toml": "[review]\nmax_rounds = 5\n"})
    monkeypatch.setattr(subprocess, "Popen", _CountedPopen)
    refs = resolve_refs(repo.path, base="main", read_ahead=policy_files(repo.path, None))
    base = commit_side(repo.path, refs.merge_base, "merge base")
    config, origin = policy_at(repo.path, None, base, commit_side(repo.path, refs.head_sha, "head"))
    assert _CountedPopen.started == ["cat-file", "merge-base"]
    assert (refs.merge_base, origin.kind, config.review.max_rounds) == (repo.base_sha, BASE_SIDE, 3)
    assert tooling_at(base.read).generated == ("docs/api/**",)
    assert base.read("pyproject.toml") is None and _CountedPopen.started == ["cat-file", "merge-base"]


# Counts the TOML parses of a run and whether the TOML module was imported at all.
_COUNT_TOML_PARSES = (
    "import io, sys, types\n"
    "from reviewgate import tomlfile\n"
    "calls = []\n"
    "real = tomlfile.toml_module\n"
    "def counting():\n"
    "    module = real()\n"  # tomli on Python 3.10
    "    loads = lambda text, **options: calls.append(text) or module.loads(text, **options)\n"
    "    return types.SimpleNamespace(loads=loads, TOMLDecodeError=module.TOMLDecodeError)\n"
    "tomlfile.toml_module = counting\n"
    "from reviewgate.cli import main\n"
    "code = main(['run', '--reviewer', 'builtin', '--base', 'main'], stdout=io.StringIO())\n"
    "print(code, sum('[project]' in text for text in calls), bool({'tomllib', 'tomli'} & set(sys.modules)))\n"
)


def _toml_parses(repo: Path) -> list[str]:
    completed = subprocess.run([sys.executable, "-c", _COUNT_TOML_PARSES], cwd=repo, env=clean_environment(),
                               capture_output=True, text=True, timeout=120, check=True)
    return completed.stdout.split()


def test_a_pyproject_the_change_leaves_alone_is_parsed_once(tmp_path: Path) -> None:
    # The same pyproject.toml at the merge base, at head and in the working tree: one parse, not
    # three (a millisecond each for Django's); a malformed one still names its file and side.
    pyproject = '[project]\nname = "app"\n\n[tool.reviewgate.review]\nmax_rounds = 3\n'
    repo = make_repo(tmp_path, {**BASE, "pyproject.toml": pyproject, "app/a.py": "x = 1\n"}, {"app/a.py": "x = 2\n"})
    assert _toml_parses(repo.path) == ["0", "1", "True"]
    broken = make_repo(tmp_path / "broken", {**BASE, "pyproject.toml": "[project\n[tool.reviewgate]\n"},
                       {"app/a.py": "x = 2\n"})
    result = run_cli(broken.path, "run", "--base", "main")
    assert result.returncode == 2
    assert "pyproject.toml at merge base" in result.stderr and "not valid TOML" in result.stderr, result.stderr


def test_a_pyproject_that_cannot_hold_the_table_is_not_parsed(tmp_path: Path) -> None:
    # Django's: [project] and other tools' tables, no [tool.reviewgate] however written, and none
    # of the tables the tooling reads. The TOML module (its patterns compile at import) stays unloaded.
    pyproject = '[project]\nname = "app"\n\n[tool.black]\nline-length = 100\n'
    repo = make_repo(tmp_path, {**BASE, "pyproject.toml": pyproject, "app/a.py": "x = 1\n"}, {"app/a.py": "x = 2\n"})
    assert _toml_parses(repo.path) == ["0", "0", "False"]
    # Such a file is not the policy even when it does not parse: it holds no table of ours.
    broken = make_repo(tmp_path / "broken", {**BASE, "pyproject.toml": "[project\n"}, {"app/a.py": "x = 2\n"})
    result = run_cli(broken.path, "run", "--base", "main")
    assert result.returncode == 0, result.stderr
    assert result.report()["policy"]["origin"] == "defaults"


@pytest.mark.parametrize(
    "table",
    [
        '[tool . reviewgate . review]\nfail_on = ["systematic:major"]\n',
        '[tool."reviewgate".review]\nfail_on = ["systematic:major"]\n',
        '[tool]\nreviewgate.review.fail_on = ["systematic:major"]\n',
        'tool.reviewgate.review.fail_on = ["systematic:major"]\n',
        'tool = {reviewgate = {review = {fail_on = ["systematic:major"]}}}\n',
        '[tool."\\u0072eviewgate".review]\nfail_on = ["systematic:major"]\n',  # the name spelled with an escape
    ],
    ids=["spaced", "quoted", "dotted-under-tool", "dotted-at-top", "inline", "escaped"],
)
def test_the_reviewgate_table_however_written_is_read(tmp_path: Path, table: str) -> None:
    # Top-level keys come before the first table header: the reviewgate part goes first.
    repo = make_repo(tmp_path, {**BASE, "pyproject.toml": f'{table}\n[project]\nname = "app"\n'}, {"app/a.py": "x = 2\n"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stderr
    policy = result.report()["policy"]
    assert (policy["origin"], policy["path"], policy["fail_on"]) == ("base", "pyproject.toml", ["systematic:major"]), policy
