"""Benchmark the two performance promises of the verify:

1. ready detection within one polling interval (0.25 s, backing off to 1 s) of the app
   being ready: an http.server app that becomes ready after a chosen delay writes the
   moment it listens; the latency is from then until `wait_ready` returns;
2. teardown of a healthy app within the grace period: `terminate_tree` on the running app.

Run: python benchmarks/verify_benchmark.py [--trials N] [--grace S]
Prints one line per trial and a summary; exits 1 when a promise is broken.
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewgate.verify.cancellation import Cancellation  # noqa: E402
from reviewgate.verify.logs import SecretMasker, StepLog  # noqa: E402
from reviewgate.verify.manifest import DEFAULT_READY_INTERVAL, ReadyCheck  # noqa: E402
from reviewgate.verify.processes import port_is_free, spawn, terminate_tree  # noqa: E402
from reviewgate.verify.readiness import MAX_INTERVAL, wait_ready  # noqa: E402

APP = """\
import http.server, sys, time
port, delay, stamp = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
time.sleep(delay)
server = http.server.HTTPServer(("127.0.0.1", port), http.server.SimpleHTTPRequestHandler)
with open(stamp, "w") as handle:
    handle.write(repr(time.time()))
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def interval_in_effect(elapsed: float) -> float:
    """The polling interval the backoff has reached `elapsed` seconds after start."""
    interval, clock = DEFAULT_READY_INTERVAL, 0.0
    while clock + interval < elapsed:
        clock += interval
        interval = min(interval * 2, MAX_INTERVAL)
    return interval


def trial(workdir: Path, delay: float, grace: float) -> tuple[float, float, float]:
    port = free_port()
    stamp = workdir / f"ready-{port}"
    (workdir / "app.py").write_text(APP)
    command = f"{shlex.quote(sys.executable)} app.py {port} {delay} {shlex.quote(str(stamp))}"
    started = time.time()
    process = spawn(command, workdir, dict(os.environ))
    log = StepLog(workdir / f"ready-{port}.log", SecretMasker([]), None)
    assert process.stdout is not None
    StepLog(workdir / f"start-{port}.log", SecretMasker([]), None).follow(process.stdout)
    check = ReadyCheck(url=f"http://localhost:{port}/", timeout=30)
    result = wait_ready(
        check, start=process, cwd=workdir, env=dict(os.environ), log=log, cancellation=Cancellation()
    )
    detected = time.time()
    log.close()
    if not result.ready:
        raise SystemExit(f"app never became ready: {result.detail}")
    listening = float(stamp.read_text())
    clock = time.monotonic()
    survivors = terminate_tree(process, grace)
    teardown = time.monotonic() - clock
    if survivors or not port_is_free(port):
        raise SystemExit(f"teardown left {survivors} / port {port} busy")
    return detected - listening, interval_in_effect(listening - started), teardown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--grace", type=float, default=10.0)
    arguments = parser.parse_args()
    broken = 0
    with tempfile.TemporaryDirectory() as directory:
        for number in range(arguments.trials):
            delay = 0.1 + 2.5 * number / max(1, arguments.trials - 1)
            latency, interval, teardown = trial(Path(directory), delay, arguments.grace)
            # One interval, plus a probe's own time (a local HTTP round trip, well under 0.1 s).
            ok = latency <= interval + 0.1 and teardown <= arguments.grace
            broken += not ok
            print(
                f"app ready after {delay:.2f}s: detected {latency * 1000:.0f} ms later "
                f"(interval then {interval:.2f}s); teardown {teardown * 1000:.0f} ms "
                f"(grace {arguments.grace:g}s) {'ok' if ok else 'SLOW'}"
            )
    print("all within bounds" if not broken else f"{broken} trial(s) out of bounds")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
