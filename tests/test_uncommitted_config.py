"""A `.reviewgate.toml` written and not committed is not the policy in force (the config is read at
the merge base): `doctor` and the run both say so, what the run uses instead, and when the file
takes effect, instead of ignoring it in silence."""

from __future__ import annotations

from pathlib import Path

from testing.cli import run_cli
from testing.repo import make_repo, write_base_config

REPORT_ONLY = '[review]\nfail_on = ["none"]\n'
# A query built by formatting a value in: a finding that blocks under the defaults.
BLOCKING = {"app.py": "def total(cursor, request):\n    cursor.execute(f\"SELECT total FROM orders WHERE name = '{request.args['name']}'\")\n"}


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "def total(items):\n    return sum(items)\n"}, BLOCKING).path


def test_a_run_says_the_uncommitted_config_is_not_in_force_and_when_it_will_be(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".reviewgate.toml").write_text(REPORT_ONLY, encoding="utf-8")

    completed = run_cli(repo, "run", "--reviewer", "builtin", "--no-verify")
    assert completed.returncode == 1, completed.stdout + completed.stderr  # the defaults block: the file is not read
    line = (".reviewgate.toml is in the working tree but not committed at the merge base "
            f"{completed.report()['target']['merge_base'][:12]}: this run uses the defaults; it takes effect once "
            "committed to main")
    assert line in completed.stdout, completed.stdout
    assert line in (completed.output_dir / "summary.md").read_text(encoding="utf-8")


def test_doctor_says_it_after_the_config_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".reviewgate.toml").write_text(REPORT_ONLY, encoding="utf-8")

    completed = run_cli(repo, "doctor", "--reviewer", "builtin")
    lines = completed.stdout.splitlines()
    config_line = next(index for index, line in enumerate(lines) if line.startswith("ok: config "))
    assert "no config file in force" in lines[config_line]
    assert lines[config_line + 1].startswith("note: .reviewgate.toml is in the working tree but not committed at the "
                                             "merge base "), completed.stdout
    assert lines[config_line + 1].endswith("this run uses the defaults; it takes effect once committed to main")


def test_it_names_the_committed_config_the_run_uses_instead(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write_base_config(repo, "[tool.reviewgate.review]\nmax_rounds = 2\n", name="pyproject.toml")
    (repo / ".reviewgate.toml").write_text(REPORT_ONLY, encoding="utf-8")

    completed = run_cli(repo, "run", "--reviewer", "builtin", "--no-verify")
    assert ("this run uses pyproject.toml at the merge base; it takes effect once committed to main"
            in completed.stdout), completed.stdout


def test_nothing_is_said_of_a_config_committed_at_the_merge_base(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write_base_config(repo, REPORT_ONLY)

    for command in (("run", "--reviewer", "builtin", "--no-verify"), ("doctor", "--reviewer", "builtin")):
        completed = run_cli(repo, *command)
        assert "not committed at the merge base" not in completed.stdout, completed.stdout
