"""A real small app for verify tests: an http.server serving /health, its test script, and a
`.prepcook/scripts.toml` that stands it up on a port picked free by the test."""

from __future__ import annotations

import os
import random
import shlex
import socket
import sys
from collections.abc import Mapping
from pathlib import Path


def runnable_by_others(program: str) -> bool:
    """Whether a user other than its owner can run `program`: every directory on its real path
    searchable by others, the file executable by them."""
    path = Path(os.path.realpath(program))
    return bool(path.stat().st_mode & 0o001) and all(parent.stat().st_mode & 0o001 for parent in path.parents)


def python_for_the_verify() -> str:
    """Run as root, the verify runs the app as a dedicated unprivileged uid, which cannot run an
    interpreter under a private home (pyenv in /root): the test apps, stdlib only, then use the
    system's Python 3."""
    if os.geteuid() != 0 or runnable_by_others(sys.executable):
        return sys.executable
    for candidate in ("/usr/local/bin/python3", "/usr/bin/python3"):
        if os.path.exists(candidate) and runnable_by_others(candidate):
            return candidate
    return sys.executable


PYTHON = shlex.quote(python_for_the_verify())

SERVER = """\
import http.server
import os
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status = 200 if self.path == "/health" else 404
        self.send_response(status)
        self.end_headers()
        self.wfile.write(b"ok" if status == 200 else b"no")

    def log_message(self, format, *args):
        sys.stdout.write("request " + (format % args) + "\\n")
        sys.stdout.flush()


port = int(sys.argv[1])
print("serving on", port, "with secret", os.environ.get("APP_SECRET", ""), flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""

TEST = """\
import os
import sys
import urllib.request

port = int(sys.argv[1])
body = urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).read()
print("health said", body.decode(), "secret is", os.environ["APP_SECRET"], "env", os.environ["APP_ENV"])
sys.exit(0 if body == b"ok" else 1)
"""


# Ports for the test apps come from below the kernel's ephemeral range (32768-60999 by default):
# a port the kernel handed out by bind(0) and then freed can be handed to the next bind(0) or
# connect() of any other test before the app binds it (a start failing with "Address already in
# use" under the full suite). Each pytest-xdist worker draws from its own slice, and a process
# never hands out a port twice, so two apps of this suite never race for one.
_APP_PORTS_LOW = 20000
_APP_PORTS_PER_WORKER = 1500
_APP_PORT_SLICES = 8
_handed_out: set[int] = set()


def _worker_slice() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    number = worker.removeprefix("gw")
    return (int(number) if number.isdigit() else os.getpid()) % _APP_PORT_SLICES


def free_port() -> int:
    """A port nothing listens on right now, below the ephemeral range, this process's own."""
    low = _APP_PORTS_LOW + _worker_slice() * _APP_PORTS_PER_WORKER
    start = random.randrange(_APP_PORTS_PER_WORKER)
    for offset in range(_APP_PORTS_PER_WORKER):
        port = low + (start + offset) % _APP_PORTS_PER_WORKER
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port left in {low}-{low + _APP_PORTS_PER_WORKER - 1}")


def manifest(
    port: int,
    *,
    test: str | None = None,
    start: str | None = None,
    extra: str = "",
    ready_timeout: float = 10,
) -> str:
    """The README's example manifest for this app, with short timeouts for tests."""
    test_command = test or f"{PYTHON} app_test.py {port}"
    start_command = start or f"{PYTHON} app/server.py {port}"
    return f"""\
secrets = ["APP_SECRET"]
ports = [{port}]

[env]
APP_ENV = "ci"

[setup]
run = "echo setting up"

[build]
run = {_toml(f"{PYTHON} -m compileall -q app")}

[start]
run = {_toml(start_command)}
grace = 2

[ready]
url = "http://localhost:{port}/health"
timeout = {ready_timeout}
interval = 0.05

[seed]
run = "echo seeding"

[test]
run = {_toml(test_command)}
timeout = 30

[teardown]
run = "echo tearing down"
{extra}"""


def _toml(text: str) -> str:
    """A TOML basic string: escape backslashes and quotes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def app_files(
    port: int,
    *,
    test: str | None = None,
    start: str | None = None,
    extra: str = "",
    ready_timeout: float = 10,
) -> Mapping[str, str]:
    return {
        "app/__init__.py": "",
        "app/server.py": SERVER,
        "app_test.py": TEST,
        ".prepcook/scripts.toml": manifest(
            port, test=test, start=start, extra=extra, ready_timeout=ready_timeout
        ),
    }
