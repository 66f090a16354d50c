"""Progress on stderr: a status line on a terminal (a real pseudo-terminal, the real command on a
real repository), collapsible groups in GitHub Actions and sections in GitLab CI when asked, and
nothing at all on a stderr that is not a terminal unless asked."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from testing.cli import clean_environment, run_cli
from testing.repo import make_repo

FILES = 8
# A reviewer that takes three seconds and fails (the run is then blocked, exit 3): a run longer
# than the couple of seconds after which progress shows, whatever the machine's speed.
SLOW = ('[review]\nreviewers = ["builtin", "slow"]\n'
        '[reviewer.slow]\nprovider = "command"\ncommand = ["sh", "-c", "sleep 3; exit 1"]\ntimeout = 60\nretries = 0\n')
CODE = "".join(f"def handler_{index}(event):\n    return event.get('a{index}', 0) + {index}\n\n" for index in range(20))


def _repo(tmp_path: Path, slow: bool = True) -> Path:
    change = {f"pkg/mod_{index:02}.py": CODE.replace("handler_", f"h{index}_") for index in range(FILES)}
    base = {"README.md": "x\n", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n", **({".reviewgate.toml": SLOW} if slow else {})}
    return make_repo(tmp_path, base, change).path


def _run_on_a_terminal(repo: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`reviewgate run ARGS` with stderr on a pseudo-terminal: exit code, what the terminal got,
    and stdout."""
    main, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "reviewgate", "run", *args], cwd=repo, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=secondary, env=clean_environment(env))
    os.close(secondary)
    received = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the terminal's other end closed: the command ended
            break
        if not data:
            break
        received.append(data)
    os.close(main)
    stdout = process.stdout.read() if process.stdout else b""
    returncode = process.wait(timeout=120)
    return returncode, b"".join(received).decode("utf-8", "replace"), stdout.decode("utf-8", "replace")


STATUS = re.compile(r"\r\x1b\[Kreviewgate: (\w+)(?: · (\d+)/(\d+) files)? · (\d+\.\d)s")


def test_on_a_terminal_the_stage_files_and_time_are_redrawn_in_place_and_cleared(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    returncode, terminal, stdout = _run_on_a_terminal(repo, "--base", "main", "--no-verify")
    assert returncode == 3, terminal + stdout  # the slow reviewer failed: blocked
    shown = STATUS.findall(terminal)
    assert shown, terminal
    # Not before the run has taken two seconds; the review's files counted of the change's total.
    assert all(float(seconds) >= 2.0 for _, _, _, seconds in shown)
    reviews = [(int(done), int(total)) for stage, done, total, _ in shown if stage == "review"]
    assert reviews and all(total == FILES for _, total in reviews)
    assert reviews[-1][0] == FILES
    times = [float(seconds) for *_, seconds in shown]
    assert times == sorted(times) and times[-1] - times[0] >= 0.5  # the time goes on while nothing else moves
    # Cleared at the end, before the error line: no status line is left under the output.
    after = terminal[terminal.rindex("\r\x1b[K"):]
    assert not STATUS.match(after), repr(after)
    assert "\n" not in "".join(re.findall(r"reviewgate: review · [^\r]*", terminal))


def test_a_stderr_that_is_no_terminal_gets_no_progress_unless_asked(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    asked = run_cli(repo, "run", "--base", "main", "--no-verify", env={"REVIEWGATE_PROGRESS": "1"})
    assert asked.returncode == 3
    lines = [line for line in asked.stderr.splitlines() if line.startswith("reviewgate: review")]
    assert lines and lines[-1].startswith(f"reviewgate: review · {FILES}/{FILES} files · "), asked.stderr
    assert "\x1b" not in asked.stderr  # plain lines: not drawn in place
    # Not asked: nothing, not even in CI, where groups need no delay to show.
    quick = _repo(tmp_path / "quick", slow=False)
    quiet = run_cli(quick, "run", "--base", "main", "--no-verify", env={"GITHUB_ACTIONS": "true"})
    assert quiet.returncode == 0, quiet.stderr  # its findings advise
    assert "reviewgate: review" not in quiet.stderr and "::group::" not in quiet.stderr
    refused = run_cli(quick, "run", "--base", "main", "--no-verify", env={"REVIEWGATE_PROGRESS": "maybe"})
    assert refused.returncode == 2
    assert "reviewgate: error: REVIEWGATE_PROGRESS='maybe': expected 1 or 0 (true or false)" in refused.stderr


def test_on_a_terminal_the_variable_can_turn_it_off(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    returncode, terminal, _ = _run_on_a_terminal(repo, "--base", "main", "--no-verify", env={"REVIEWGATE_PROGRESS": "0"})
    assert returncode == 3 and not STATUS.search(terminal)


@pytest.mark.parametrize("provider", ["github", "gitlab"])
def test_in_ci_each_stage_is_a_collapsible_group_and_the_verdict_stays_out(tmp_path: Path, provider: str) -> None:
    repo = _repo(tmp_path, slow=False)
    env = {"GITHUB_ACTIONS": "true"} if provider == "github" else {"GITLAB_CI": "true"}
    result = run_cli(repo, "run", "--base", "main", "--no-verify", "--progress", env=env)
    assert result.returncode == 0, result.stderr  # its findings advise
    stderr = result.stderr
    if provider == "github":
        opened = re.findall(r"^::group::(.*)$", stderr, flags=re.MULTILINE)
        closed = re.findall(r"^::endgroup::$", stderr, flags=re.MULTILINE)
    else:
        # run_cli reads with universal newlines: the sections' CR reads as a line break.
        opened = re.findall(r"\x1b\[0Ksection_start:\d+:reviewgate_\w+\[collapsed=true\]\n\x1b\[0K(.*)", stderr)
        closed = re.findall(r"\x1b\[0Ksection_end:\d+:reviewgate_\w+\n\x1b\[0K", stderr)
    assert opened == ["reviewgate: freeze", f"reviewgate: review ({FILES} files)"], stderr
    assert len(closed) == 2
    # Inside the review's group: the files done of the total; then how long it took.
    review = stderr[stderr.index(f"reviewgate: review ({FILES} files)"):]
    assert f"reviewgate: review · {FILES}/{FILES} files · " in review
    assert re.search(r"^reviewgate: review took \d+\.\ds$", review, flags=re.MULTILINE)
    # The publishing (the verdict, the annotations) is in no group.
    assert "reviewgate: publish\n" in stderr and re.search(r"^reviewgate: publish took \d+\.\ds$", stderr, re.MULTILINE)
    assert stderr.rindex("reviewgate: publish\n") > stderr.rindex(closed[-1])
