"""Credentials in a known format (secret_formats.py) are masked in every output, declared in
the manifest or not: a failing test that prints one leaks it nowhere the gate writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewgate.verify.logs import SecretMasker
from testing.cli import run_cli
from testing.repo import make_repo
from testing.verify_app import PYTHON, app_files, free_port

pytestmark = pytest.mark.timeout(90)

# Syntactically valid, made-up tokens, assembled here so no scanner takes this file for a leak.
GITHUB_TOKEN = "gh" + "p_" + "R3v1ewG4te" * 4
OPENAI_KEY = "sk-" + "proj-" + "Fak3" * 6 + "T3Blbk" + "FJ" + "Fak3" * 6


def every_output_text(output_dir: Path) -> str:
    return "\n".join(path.read_text(errors="replace") for path in output_dir.rglob("*") if path.is_file())


def test_a_failing_test_printing_undeclared_tokens_leaks_them_nowhere(tmp_path: Path) -> None:
    # Built by the failing test itself (the command, echoed in the report, holds only its
    # recipe) and printed in pieces with a pause, so the stream masker sees a token split
    # across reads.
    leaking = (
        f"{PYTHON} -c \"import sys, time; t = 'gh' + 'p_' + 'R3v1ewG4te' * 4; "
        "k = 'sk-' + 'proj-' + 'Fak3' * 6 + 'T3Blbk' + 'FJ' + 'Fak3' * 6; "
        "sys.stdout.write('auth failed for ' + t[:9]); sys.stdout.flush(); time.sleep(0.3); "
        "print(t[9:] + ' and key ' + k); raise SystemExit(1)\""
    )
    # The manifest is on the target side, which grants APP_SECRET; the branch changes the README.
    repo = make_repo(tmp_path, {"README.md": "app\n", **app_files(free_port(), test=leaking)},
                     {"README.md": "app, changed\n"}).path
    step_summary, outputs = tmp_path / "step-summary.md", tmp_path / "outputs.txt"
    github = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary), "GITHUB_OUTPUT": str(outputs),
              "APP_SECRET": "declared-value-1234"}
    result = run_cli(repo, "run", "--base", "main", env=github)
    assert result.returncode == 1, result.stdout + result.stderr
    written = every_output_text(result.output_dir)
    everything = result.stdout + result.stderr + written + step_summary.read_text() + outputs.read_text()
    for token in (GITHUB_TOKEN, OPENAI_KEY, GITHUB_TOKEN[9:], OPENAI_KEY[:30]):
        assert token not in everything
    # The reader still learns what was there and where.
    assert "[REDACTED GitHub token]" in (result.output_dir / "verify" / "test.log").read_text()
    assert "[REDACTED OpenAI API key]" in (result.output_dir / "report.json").read_text()
    assert "[REDACTED GitHub token]" in result.stdout


@given(
    before=st.text(alphabet=" \n.abc:=", max_size=40),
    after=st.text(alphabet=" \n.abc:=", max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
    declared=st.booleans(),
)
def test_a_stream_cut_anywhere_never_releases_a_token_in_halves(
    before: str, after: str, cuts: list[int], declared: bool
) -> None:
    text = f"{before} {GITHUB_TOKEN} {OPENAI_KEY} {after}"
    stream = SecretMasker(["declared-value-1234"] if declared else []).stream()
    positions = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [text[start:end] for start, end in zip([0, *positions], [*positions, len(text)], strict=True)]
    released = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert GITHUB_TOKEN[4:] not in released and OPENAI_KEY[8:] not in released
    assert released.count("[REDACTED") == 2


def test_a_manifest_without_secrets_still_logs_everything_with_tokens_masked(tmp_path: Path) -> None:
    printing = (
        f"{PYTHON} -c \"t = 'gh' + 'p_' + 'R3v1ewG4te' * 4; print('first line'); print('token ' + t); "
        "print('last line'); raise SystemExit(1)\""
    )
    manifest = "[test]\nrun = " + '"' + printing.replace("\\", "\\\\").replace('"', '\\"') + '"\n'
    repo = make_repo(tmp_path, {"README.md": "app\n"}, {".prepcook/scripts.toml": manifest}).path
    result = run_cli(repo, "verify")
    assert result.returncode == 1, result.stdout + result.stderr
    log = (result.output_dir / "verify" / "test.log").read_text()
    assert log.splitlines()[:3] == ["first line", "token [REDACTED GitHub token]", "last line"]
    assert GITHUB_TOKEN not in result.stdout + every_output_text(result.output_dir)
