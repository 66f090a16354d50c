"""The command reviewer: a real agent-like script, run in a read-only snapshot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers import command
from reviewgate.reviewers.base import ReviewerOutcome, ReviewerStatus
from testing.cli import run_cli
from testing.model_repo import calc_repo, review_request, write_config
from testing.model_server import finding, review_document
from testing.repo import git


def _agent(tmp_path: Path, body: str) -> Path:
    """A Python script standing in for `claude -p`: reads the prompt, prints a review."""
    script = tmp_path / "agent.py"
    script.write_text("import json, os, sys\n" + body, encoding="utf-8")
    return script


def _settings(argv: list[str], **options: object) -> ReviewerSettings:
    return ReviewerSettings(
        name="agent", provider="command", timeout=5.0,
        options={"command": argv, "verify_findings": False, **options}
    )


REVIEW = json.dumps(review_document([finding("app/calc.py", 7, title="Division by zero")], "request_changes"))


def _review_with_agent(tmp_path: Path, body: str, timeout: float = 5.0) -> ReviewerOutcome:
    """Review the calc change with an agent script whose body is `body`."""
    repo = calc_repo(tmp_path)
    agent = _agent(tmp_path, body)
    settings = ReviewerSettings(
        name="agent", provider="command", timeout=timeout, options={"command": [sys.executable, str(agent)], "verify_findings": False}
    )
    return command.build(settings).review(review_request(repo.path))


def test_prompt_on_stdin_and_review_on_stdout(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path, extra_branch={"docs/specs/divide.md": "SPEC\n"})
    seen = tmp_path / "seen.json"
    agent = _agent(
        tmp_path,
        f"""
prompt = sys.stdin.read()
json.dump({{"cwd": os.getcwd(), "has_spec": os.path.exists("docs/specs/divide.md"),
           "has_calc": os.path.exists("app/calc.py"), "diff": "return a / b" in prompt,
           "write_bits": os.stat("app/calc.py").st_mode & 0o222}}, open({str(seen)!r}, "w"))
print("Sure, here it is:")
print({REVIEW!r})
""",
    )
    outcome = command.build(_settings([sys.executable, str(agent)])).review(review_request(repo.path))
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert [(item.path, item.line) for item in outcome.findings] == [("app/calc.py", 7)]
    facts = json.loads(seen.read_text())
    assert facts["has_calc"] and facts["diff"]
    assert not facts["has_spec"]  # withheld files are removed from the snapshot
    assert facts["write_bits"] == 0  # read-only (mode bits: root ignores them, but agents do not run as root)
    assert (
        Path(facts["cwd"]) != repo.path and not Path(facts["cwd"]).exists()
    )  # a temporary snapshot, removed


def test_prompt_file_placeholder(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    agent = _agent(
        tmp_path,
        f"""
prompt = open(sys.argv[1]).read()
assert "return a / b" in prompt and sys.stdin.read() == ""
print({REVIEW!r})
""",
    )
    outcome = command.build(_settings([sys.executable, str(agent), "{prompt_file}"])).review(
        review_request(repo.path)
    )
    assert outcome.status is ReviewerStatus.OK, outcome.reason


def test_agent_writing_into_the_checkout_is_a_mutation(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    agent = _agent(
        tmp_path,
        f"""
sys.stdin.read()
open({str(repo.path / "app" / "calc.py")!r}, "a").write("# fixed it for you\\n")
print({REVIEW!r})
""",
    )
    write_config(
        repo.path, "agent", {"provider": "command", "command": [sys.executable, str(agent)], "timeout": 5}
    )
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 3, result.stderr
    report = result.report()
    assert "reviewer mutation" in report["reasons"][0] and "real checkout" in report["reasons"][0]
    assert report["findings"] == []


def test_agent_writing_into_its_snapshot_is_a_mutation(tmp_path: Path) -> None:
    body = f"""
sys.stdin.read()
os.chmod("app", 0o755)
open("app/new.py", "w").write("x = 1\\n")
print({REVIEW!r})
"""
    outcome = _review_with_agent(tmp_path, body)
    assert outcome.status is ReviewerStatus.BLOCKED and "its snapshot" in outcome.reason


def test_failing_agent_blocks_with_its_error(tmp_path: Path) -> None:
    outcome = _review_with_agent(tmp_path, "sys.stdin.read()\nsys.exit('model quota exhausted')\n")
    assert outcome.status is ReviewerStatus.BLOCKED
    assert "exited with code 1: model quota exhausted" in outcome.reason


def test_hanging_agent_is_killed_at_the_timeout(tmp_path: Path) -> None:
    outcome = _review_with_agent(tmp_path, "import time\ntime.sleep(30)\n", timeout=1.0)
    assert outcome.status is ReviewerStatus.BLOCKED and "timeout" in outcome.reason


def test_missing_command_option_is_a_config_error(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path)
    write_config(repo.path, "agent", {"provider": "command"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 2
    assert "reviewer.agent.command: expected the agent's command line" in result.stderr


# reviewgate: ignore[security/committed-secret] a made-up value outside the repository the agent must not read
OUTSIDE_SECRET = "outside-secret-Kq3v-never-read"
# `x/y/hop` resolves to the snapshot's root, so each `x/y/hop/` goes back there: lexically the link
# stays inside (its `..` cancel the hops as written), physically it climbs to / and on to /etc.
CLIMB = "x/y/hop/" * 12 + "../" * 20 + "etc/passwd"
LINK_REVIEW = json.dumps(review_document([finding("app/calc.py", 7, title="What the links hold")], "request_changes"))


def test_links_out_of_the_snapshot_are_left_out_and_links_inside_are_kept(tmp_path: Path) -> None:
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
    seen = tmp_path / "seen.json"
    agent = _agent(tmp_path, f"""
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
    write_config(repo.path, "agent", {"provider": "command", "command": [sys.executable, str(agent)], "timeout": 10,
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
