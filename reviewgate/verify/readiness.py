"""The ready check: poll a URL, a TCP port or a command until it succeeds or times out.

Probe 127.0.0.1, and the IPv6 loopback too when the URL says `localhost`; poll every
`interval` (0.25 s by default) backing off to 1 s; if the start process exits before ready,
fail at once with its exit code (a non-zero one: see `crashed`).
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from reviewgate.verify.cancellation import Cancellation
from reviewgate.verify.logs import StepLog
from reviewgate.verify.manifest import ReadyCheck
from reviewgate.verify.processes import spawn, terminate_tree

if TYPE_CHECKING:
    from reviewgate.verify.principal import Launcher

MAX_INTERVAL = 1.0  # the polling interval backs off to 1 s
PROBE_TIMEOUT = 2.0  # one attempt; a hung app must not eat the whole ready timeout in one go
COMMAND_PROBE_TIMEOUT = 10.0  # a `run` probe (pg_isready, curl) may take longer than a socket
PROBE_GRACE = 1.0  # a `run` probe past its time: SIGTERM, this long, then SIGKILL
LOOPBACK_NAMES = {"localhost": ("127.0.0.1", "::1")}
MAX_STATUS_LINE = 64 * 1024  # bytes read for the status line, at most
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class ReadyResult:
    ready: bool
    detail: str
    attempts: int
    start_exit_code: int | None = None


def _http_status(url: str, address: str, timeout: float) -> int:
    """The status code of a GET of `url` from `address`, all of it within `timeout`: the app
    chooses how fast it answers, and one byte at a time must not hold the gate past the check's
    timeout (a socket timeout bounds each read, not the whole answer)."""
    # Imported here: only a manifest with a URL ready check needs an HTTP client and TLS.
    import http.client
    import ssl

    deadline = time.monotonic() + timeout
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.netloc.rpartition("@")[2]
    if _CONTROL.search(path + host):
        raise http.client.InvalidURL(f"control characters in {url!r}")
    with socket.create_connection((address, port), timeout=timeout) as plain:
        connection: socket.socket = plain
        if parts.scheme == "https":
            # A local app's certificate is self-signed or for another name: the check asks "is it
            # up", not "is it who it says", so it does not verify. The handshake as a whole is
            # bounded by the socket's timeout.
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            plain.settimeout(_left(deadline))
            connection = context.wrap_socket(plain)
        with connection:
            connection.settimeout(_left(deadline))
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("ascii"))
            answer = b""
            while b"\n" not in answer:
                if len(answer) > MAX_STATUS_LINE:
                    raise http.client.LineTooLong("status line")
                connection.settimeout(_left(deadline))
                chunk = connection.recv(1024)
                if not chunk:
                    raise http.client.RemoteDisconnected("closed before a status line")
                answer += chunk
    status_line = answer.partition(b"\n")[0].decode("latin-1").strip()
    version, _, rest = status_line.partition(" ")
    status = rest[:3]
    if not version.startswith("HTTP/") or not status.isdigit() or len(status) != 3:
        raise http.client.BadStatusLine(status_line[:100])
    return int(status)


def _left(deadline: float) -> float:
    """What is left of the attempt's time for the next read; none left is a timeout."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


def probe_url(url: str, expect: tuple[int, ...], timeout: float) -> str | None:
    """None when ready; otherwise what went wrong on each address tried."""
    import http.client

    host = urlsplit(url).hostname or ""
    problems = []
    for address in LOOPBACK_NAMES.get(host.lower(), (host,)):
        try:
            status = _http_status(url, address, timeout)
        except (OSError, http.client.HTTPException) as error:
            problems.append(f"{address}: {type(error).__name__}: {error}")
            continue
        if (status in expect) if expect else (200 <= status < 400):
            return None
        wanted = ", ".join(str(item) for item in expect) if expect else "2xx or 3xx"
        problems.append(f"{address}: HTTP {status} (expected {wanted})")
    return "; ".join(problems)


def probe_tcp(host: str, port: int, timeout: float) -> str | None:
    problems = []
    for address in LOOPBACK_NAMES.get(host.lower(), (host,)):
        try:
            with socket.create_connection((address, port), timeout=timeout):
                return None
        except OSError as error:
            problems.append(f"{address}:{port}: {error.strerror or error}")
    return "; ".join(problems)


def probe_command(
    command: str, cwd: Path, env: Mapping[str, str], timeout: float, log: StepLog,
    launcher: Launcher | None = None,
) -> str | None:
    try:
        process = spawn(command, cwd, env, launcher)
    except OSError as error:
        return f"could not start in {cwd.name}: {error.strerror or error}"
    assert process.stdout is not None
    # Into the log as it comes, within its limit: the probe chooses how much it prints.
    reading = log.follow(process.stdout)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        terminate_tree(process, PROBE_GRACE)
        reading.join(PROBE_GRACE)
        return f"timed out after {timeout:g} s"
    terminate_tree(process, PROBE_GRACE)  # a probe may not leave a background process behind
    reading.join(PROBE_GRACE)
    return None if process.returncode == 0 else f"exit code {process.returncode}"


def wait_ready(
    check: ReadyCheck,
    *,
    start: subprocess.Popen[bytes] | None,
    cwd: Path,
    env: Mapping[str, str],
    log: StepLog,
    cancellation: Cancellation,
    launcher: Launcher | None = None,
) -> ReadyResult:
    started = time.monotonic()
    deadline = started + check.timeout
    delay = check.interval
    attempts = 0

    def crashed() -> bool:
        """The start process failed. Exit 0 is not a crash: a start that daemonizes (`docker
        compose up -d`) returns at once while the app comes up elsewhere; keep polling."""
        return start is not None and start.poll() not in (None, 0)

    while True:
        if cancellation.cancelled:
            return ReadyResult(False, f"cancelled ({cancellation.signal_name})", attempts)
        if start is not None and crashed():
            return ReadyResult(
                False,
                f"the start process exited with code {start.returncode} before ready",
                attempts,
                start.returncode,
            )
        attempts += 1
        attempt_timeout = max(0.1, min(PROBE_TIMEOUT, deadline - time.monotonic()))
        if check.url is not None:
            problem = probe_url(check.url, check.expect, attempt_timeout)
        elif check.tcp_port is not None:
            problem = probe_tcp(check.tcp_host or "127.0.0.1", check.tcp_port, attempt_timeout)
        else:
            command_timeout = max(0.1, min(COMMAND_PROBE_TIMEOUT, deadline - time.monotonic()))
            problem = probe_command(check.run or "", cwd, env, command_timeout, log, launcher)
        if problem is None:
            log.note(f"ready after {time.monotonic() - started:.2f} s ({attempts} attempt(s))")
            return ReadyResult(True, "", attempts)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return ReadyResult(
                False, f"not ready within {check.timeout:g} s; last attempt: {problem}", attempts
            )
        # Wake early when the start process dies, so a crash is reported at once.
        cancellation.sleep(min(delay, remaining), stop_when=crashed)
        delay = min(delay * 2, max(MAX_INTERVAL, check.interval))
