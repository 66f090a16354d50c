"""Routes across the gate's trust boundary that the branch's code could take, each built as the
attacker would build it: the branch's manifest and files, its app, its processes."""

from __future__ import annotations

import io
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from reviewgate.ci.context import CiContext
from reviewgate.verify.manifest import DEFAULT_TIMEOUTS, Manifest, ReadyCheck, StartStep, Step
from reviewgate.verify.runner import run_verify
from testing.repo import write_files
from testing.verify_app import PYTHON, free_port

pytestmark = pytest.mark.timeout(120)
ENVIRONMENT = {"PATH": "/usr/bin:/bin"}

# An app that accepts the ready check's connection and answers one byte every half second,
# never finishing its status line: each read is well within a probe's socket timeout.
_TRICKLE = """
import socket, sys, time
server = socket.create_server(("127.0.0.1", int(sys.argv[1])))
while True:
    client, _ = server.accept()
    try:
        while True:
            client.sendall(b"H")
            time.sleep(0.5)
    except OSError:
        client.close()
"""


@pytest.mark.timeout(60)
def test_an_app_that_trickles_its_answer_cannot_hold_the_ready_check_past_its_timeout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_files(repo, {"trickle.py": _TRICKLE})
    port = free_port()
    manifest = Manifest(
        source=".prepcook/scripts.toml",
        start=StartStep(run=f"{PYTHON} trickle.py {port}"),
        ready=ReadyCheck(url=f"http://127.0.0.1:{port}/", timeout=3),
        test=Step(name="test", run="true", timeout=DEFAULT_TIMEOUTS["test"]),
    )
    started = time.monotonic()
    stdout = io.StringIO()
    outcome = run_verify(manifest, repo=repo, output_dir=tmp_path / "out", ci=CiContext(provider="local"),
                         stdout=stdout, environ=ENVIRONMENT)
    assert outcome.status.value == "failed", stdout.getvalue()
    assert "ready check did not pass within 3 s" in outcome.reason, outcome.reason
    assert time.monotonic() - started < 20, stdout.getvalue()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the verify then runs as a uid of its own")
def test_what_the_verify_leaves_in_the_machines_temp_directories_does_not_outlive_it(tmp_path: Path) -> None:
    """The branch's step leaves files, a directory and links in /tmp, /var/tmp, /dev/shm and /run/lock,
    where the next verify with the same uid (another branch's, maybe with secrets) would find
    them: each is removed at teardown and named in the notes."""
    tag = f"reviewgate-left-{secrets.token_hex(4)}"
    places = [Path("/tmp") / tag, Path("/var/tmp") / tag, Path("/dev/shm") / tag, Path("/run/lock") / tag]
    places = [place for place in places if place.parent.is_dir()]
    plant = "; ".join([f"mkdir -p {places[0]}/d && echo x > {places[0]}/d/f && chmod 0 {places[0]}/d",
                       *(f"ln -s /etc/passwd {place}" for place in places[1:])])
    repo = tmp_path / "repo"
    write_files(repo, {"app.py": "x = 1\n"})
    manifest = Manifest(source=".prepcook/scripts.toml", test=Step(name="test", run=plant, timeout=60.0))
    try:
        stdout = io.StringIO()
        outcome = run_verify(manifest, repo=repo, output_dir=tmp_path / "out", ci=CiContext(provider="local"),
                             stdout=stdout, environ=ENVIRONMENT)
        assert outcome.status.value == "passed", stdout.getvalue()
        assert [place for place in places if os.path.lexists(place)] == []
        notes = " ".join(outcome.notes)
        assert all(str(place) in notes for place in places), outcome.notes
        assert Path("/etc/passwd").is_file()
    finally:
        for place in places:
            if place.is_symlink() or place.is_file():
                place.unlink()
            elif place.is_dir():
                subprocess.run(["rm", "-rf", str(place)], check=False)


@pytest.mark.timeout(60)
def test_a_ready_probe_that_floods_its_output_is_kept_to_the_log_limit(tmp_path: Path) -> None:
    """A `run` probe's output was read whole into the gate's memory and written past the log
    limit: 60 MiB in one attempt is cut to the limit like any step's output."""
    repo = tmp_path / "repo"
    write_files(repo, {"app.py": "x = 1\n"})
    flood = "head -c 62914560 /dev/zero | tr '\\\\0' x; exit 1"
    manifest = Manifest(source=".prepcook/scripts.toml", ready=ReadyCheck(run=flood, timeout=3),
                        test=Step(name="test", run="true", timeout=DEFAULT_TIMEOUTS["test"]))
    stdout = io.StringIO()
    outcome = run_verify(manifest, repo=repo, output_dir=tmp_path / "out", ci=CiContext(provider="local"),
                         stdout=stdout, environ=ENVIRONMENT, log_limit=1 << 20)
    assert outcome.status.value == "failed", outcome.reason
    log = tmp_path / "out" / "verify" / "ready.log"
    assert log.stat().st_size < 2 << 20, log.stat().st_size
    assert len(stdout.getvalue()) < 2 << 20
    assert "left out" in log.read_text(encoding="utf-8")
