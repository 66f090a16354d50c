"""The branch's text (config keys, file names, titles) reaches stderr, stdout and the Markdown
sinks as data: no forged workflow command, no HTML, no live mention, no terminal escape."""

from __future__ import annotations

import re
from pathlib import Path

from testing.cli import run_cli
from testing.markdown_render import render_gfm
from testing.repo import make_repo

BASE = {"README.md": "# app\n", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}
FORGED = "::error file=app.py,line=1::forged by the branch"


def runner_commands(text: str) -> list[str]:
    """The lines GitHub's runner would act on: `::` after leading white space it trims."""
    return [line for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if line.lstrip().startswith("::") or "##[" in line]


def test_a_config_key_holding_a_line_break_and_a_command_stays_one_warning_line(tmp_path: Path) -> None:
    config = (
        "[review]\n"
        f'"x\\n{FORGED}" = 1\n'
        '"y\\r::stop-commands::silenced" = 2\n'
        f'"z\\n  {FORGED}" = 3\n'
    )
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config}, {"notes.txt": "hello\n"})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify", env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "unknown key" in line]
    assert len(warnings) == 3, result.stderr
    assert all(line.startswith("reviewgate: warning: ") for line in warnings)
    assert "x\\n:" in warnings[0]  # the line break is shown, not obeyed
    assert runner_commands(result.stderr) == []


def test_an_unknown_manifest_key_with_a_command_is_one_error_line(tmp_path: Path) -> None:
    manifest = f'[test]\nrun = "true"\n"t\\n{FORGED}" = 1\n'
    repo = make_repo(tmp_path, {"README.md": "x\n"}, {".prepcook/scripts.toml": manifest})
    result = run_cli(repo.path, "verify", env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("reviewgate: error: .prepcook/scripts.toml: ") and "unknown key" in line
    assert runner_commands(result.stderr) == []


def test_a_hostile_file_name_reaches_the_summaries_as_text(tmp_path: Path) -> None:
    name = "app/<img src=x onerror=alert(1)>@octocat.py"
    # A query built by formatting a value in: a finding that blocks, on line 2 of the hostile file.
    injectable = "def run(cursor, request):\n    cursor.execute(f\"SELECT id FROM jobs WHERE name = '{request.args['name']}'\")\n"
    repo = make_repo(tmp_path, BASE, {name: injectable, "tests/test_run.py": "def test_run():\n    pass\n"})
    step_summary = tmp_path / "step-summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary)}
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    for text in ((result.output_dir / "summary.md").read_text(), step_summary.read_text()):
        # Rendered as GitHub renders it: the name is a code span, text that is neither HTML nor a mention.
        html = render_gfm(text)
        assert "<code>app/&lt;img src=x onerror=alert(1)&gt;@octocat.py:2</code>" in html
        assert "<img" not in html and "@octocat" not in re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
