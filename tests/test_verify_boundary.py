"""The verify runs the branch's code as another principal: a test step that tries every attack on
the gate (its token in /proc, the checkout's credentials, its object store, its installation, its
git config, its cache, its outputs after it exits) learns nothing and changes nothing.

Needs root (the gate then runs the verify as a dedicated uid, as in the container action)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import time
from pathlib import Path

import pytest

from reviewgate.verify.principal import boundary
from reviewgate.verify.tamper import installation_directory
from testing.cli import run_cli
from testing.forge_server import ForgeServer, github_environment
from testing.repo import git, make_repo
from testing.verify_app import PYTHON

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the verify then runs as a separate uid")]

TOKEN = "forge-token-value-7f3a9c"  # no known credential format: masking would not hide a leak
MODEL_KEY = "model-key-value-51bd02"
# A query built by formatting a value in: the finding that blocks, unless the attack rewrites it away.
INJECTABLE = "def load(cursor, request):\n    cursor.execute(f\"SELECT body FROM files WHERE path = '{request.args['path']}'\")\n"
CLEAN = "def load(path):\n    return open(path).read()\n"

ATTACK = r'''
import json, os, subprocess, sys, zlib, hashlib
from pathlib import Path
loot, repo, package = Path(os.environ["LOOT"]), Path(os.environ["ORIGINAL"]), Path(os.environ["PACKAGE"])
learned = []
def attempt(what, action):
    try:
        result = action()
        learned.append(f"{what}: {result}")
    except Exception as error:
        learned.append(f"{what}: refused ({type(error).__name__})")
# 1. the gate's environment through /proc, and the runner's command files it names
for entry in Path("/proc").iterdir():
    if entry.name.isdigit():
        attempt(f"environ {entry.name}", lambda: (entry / "environ").read_bytes().decode("utf-8", "replace"))
for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
    for line in " ".join(learned).split("\0"):
        if line.startswith(name + "="):
            target = line.split("=", 1)[1]
            attempt(f"write {name}", lambda: open(target, "a").write("verdict=approve\nX=1\n<script>\n"))
# 2. the checkout's credentials
attempt("git config", lambda: (repo / ".git/config").read_text())
# 3. what is reviewed: app.py's blob rewritten in place with clean bytes
clean = b"def load(path):\n    return open(path).read()\n"
reviewed = Path("app.py").read_bytes()
blob = hashlib.sha1(b"blob %d\0" % len(reviewed) + reviewed).hexdigest()
def rewrite():
    path = repo / ".git/objects" / blob[:2] / blob[2:]
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(clean) + clean))
attempt("rewrite object", rewrite)
# 4. the gate's installation and git configuration
attempt("installation", lambda: open(package / "report" / "summary.py", "a").write("\n# the branch was here\n"))
attempt("git hooks", lambda: (repo / ".git/hooks/post-checkout").write_text("#!/bin/sh\ntouch /tmp/pwned\n"))
attempt("git config write", lambda: open(repo / ".git/config", "a").write("[core]\n\tfsmonitor = touch /tmp/pwned\n"))
# 5. the cache and the outputs
attempt("cache", lambda: (repo / ".reviewgate-cache/planted").write_text("x"))
attempt("outputs", lambda: (repo / ".reviewgate/report.json").write_text("{}"))
# 6. a process that clears its environment and comes back after the gate has exited
later = f"sleep 4; echo '{{}}' > {repo}/.reviewgate/report.json; echo verdict=approve >> {loot}.late"
subprocess.Popen(["/bin/sh", "-c", later], env={}, start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
loot.write_text("\n".join(learned))
'''


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.interpreter_independent  # the kernel's: what a dedicated uid can reach
def test_a_verify_that_tries_every_attack_learns_no_token_and_changes_nothing(tmp_path: Path) -> None:
    world = Path(tempfile.mkdtemp(prefix="reviewgate-loot-"))
    os.chmod(world, 0o777)
    loot = world / "loot.txt"
    summary_module = installation_directory() / "report" / "summary.py"
    summary_before = summary_module.read_bytes()
    manifest = (f'[test]\nrun = "{PYTHON} attack.py"\n'
                f'[env]\nLOOT = "{loot}"\nPACKAGE = "{installation_directory()}"\n')
    branch = make_repo(tmp_path, {"app.py": CLEAN, ".prepcook/scripts.toml": manifest},
                       {"app.py": INJECTABLE, "attack.py": ATTACK})
    repo = branch.path
    (repo / ".prepcook/scripts.toml").write_text(manifest + f'ORIGINAL = "{repo}"\n')
    git(repo, "commit", "-qam", "point the attack at the checkout")
    # As actions/checkout leaves it: the token in .git/config (persist-credentials).
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    (repo / ".reviewgate-cache").mkdir()
    os.chmod(repo / ".reviewgate-cache", 0o755)
    outputs = {name: tmp_path / name for name in ("output.txt", "env.txt", "summary.md")}
    for path in outputs.values():
        path.write_text("")
    try:
        with ForgeServer() as server:
            env = {**github_environment(server, tmp_path, token=TOKEN), "OPENAI_API_KEY": MODEL_KEY,
                   "GITHUB_OUTPUT": str(outputs["output.txt"]), "GITHUB_ENV": str(outputs["env.txt"]),
                   "GITHUB_STEP_SUMMARY": str(outputs["summary.md"])}
            result = run_cli(repo, "run", "--base", "main", env=env)
        report_digest = _digest(repo / ".reviewgate/report.json")
        time.sleep(5)  # the process that cleared its environment would act now
        learned = loot.read_text()
        assert TOKEN not in learned and MODEL_KEY not in learned, learned
        assert "git config: refused" in learned and "installation: refused" in learned
        report = json.loads((repo / ".reviewgate/report.json").read_text())
        assert _digest(repo / ".reviewgate/report.json") == report_digest, "rewritten after the gate exited"
        assert not (world / "loot.txt.late").exists()
        assert result.returncode == 1, result.stdout + result.stderr
        assert report["verdict"] == "request_changes"
        assert report["verify"]["status"] == "passed" and report["verify"]["tampered"] == []
        assert report["verify"]["boundary"].startswith("separate user")
        assert any(item["path"] == "app.py" and item["rule"] == "security/sql-injection"
                   for item in report["findings"]), report["findings"]
        assert "verdict=approve" not in outputs["output.txt"].read_text()
        assert "verdict=request_changes" in outputs["output.txt"].read_text()
        assert outputs["env.txt"].read_text() == "" and "<script>" not in outputs["summary.md"].read_text()
        assert not (repo / ".git/hooks/post-checkout").exists()
        assert "fsmonitor" not in (repo / ".git/config").read_text()
        assert not (repo / ".reviewgate-cache/planted").exists()
        assert stat.S_IMODE((repo / ".git").stat().st_mode) & 0o005, ".git's mode came back"
        assert TOKEN not in result.stdout + result.stderr
    finally:
        if summary_module.read_bytes() != summary_before:
            summary_module.write_bytes(summary_before)
            pytest.fail("the branch's code wrote into the gate's installation")


def test_the_boundary_as_root_is_a_separate_user_with_its_own_pid_namespace() -> None:
    chosen = boundary(61999)
    assert chosen.kind == "separate user" and chosen.uid == 61999
    assert "--no-new-privs" in chosen.launcher.drop or chosen.launcher.user == 61999
