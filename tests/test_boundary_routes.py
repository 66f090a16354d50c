"""Routes across the gate's trust boundary that the branch's code could take, each built as the
attacker would build it: the branch's manifest and files, its app, its processes."""

from __future__ import annotations

import io
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
