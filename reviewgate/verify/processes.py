"""Processes and ports of the verify: start each step in its own session, tear a tree down.

Teardown sends SIGTERM to the start process group, waits a grace
period, sends SIGKILL, then checks that no process of the group remains and the declared
ports are free again. psutil finds the tree: the group's members and the start process's
descendants (a child that called setsid left the group but is still ours).
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reviewgate.verify.cancellation import POLL_SECONDS

if TYPE_CHECKING:
    import psutil  # imported where used: only a run with a verify needs it (a tenth of start-up)

    from reviewgate.verify.principal import Launcher

# After SIGKILL the kernel needs a moment to reap; a process still there after this survived.
KILL_WAIT_SECONDS = 2.0
SHELL = "/bin/sh"  # POSIX: every step is `sh -c RUN`, never a command we build from text
# Every process the verify starts carries this variable with a value random per run (as
# Jenkins' ProcessTreeKiller does with BUILD_ID): what escaped the process group and the tree
# (setsid, a double fork) still carries it in /proc/<pid>/environ, and teardown finds it there.
RUN_COOKIE_VARIABLE = "REVIEWGATE_RUN_COOKIE"


# What every wrapper before the step's shell runs with (unshare, the keep-alive init, setpriv, some
# as root): a fixed environment, never the step's. The step's environment (built from the
# manifest, which the branch writes) reaches only the shim below, the last wrapper, which runs
# after the uid switch, the namespaces and no-new-privs.
LAUNCHER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The shim reads the step's environment as `export NAME='value'` lines from its stdin (a file
# the gate wrote and unlinked: never a command line, argv is world-readable in /proc), gives the
# step /dev/null as stdin, enters the step's directory as the step's own user and execs its shell.
STEP_SHIM = 'eval "$(cat)" || exit 126; exec </dev/null; cd -- "$1" || exit 126; exec /bin/sh -c "$2"'
_EXPORTABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def launcher_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The wrappers' fixed environment; the run cookie too, so teardown finds them if they escaped."""
    fixed = {"PATH": LAUNCHER_PATH}
    if RUN_COOKIE_VARIABLE in env:
        fixed[RUN_COOKIE_VARIABLE] = env[RUN_COOKIE_VARIABLE]
    return fixed


def environment_script(env: Mapping[str, str]) -> bytes:
    """`env` as shell exports, each value quoted (a name a shell cannot export is left out)."""
    lines = [f"export {name}={shlex.quote(value)}\n" for name, value in env.items() if _EXPORTABLE.match(name)]
    if "PATH" not in env:
        lines.append("unset PATH\n")
    return "".join(lines).encode("utf-8", "surrogateescape")


def spawn(command: str, cwd: Path, env: Mapping[str, str],
          launcher: Launcher | None = None, *, keep_alive: bool = False) -> subprocess.Popen[bytes]:
    """`sh -c command` in `cwd` with `env`, in a new session (so its own process group), output on
    one pipe, started through the verify's `launcher` (another uid, its own namespaces:
    verify/principal.py) and the step shim. `keep_alive`: the start step, whose app may daemonize
    and outlive its shell."""
    if not cwd.is_dir():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(cwd))
    shim = [SHELL, "-c", STEP_SHIM, "reviewgate-step", str(cwd), command]
    with tempfile.TemporaryFile() as environment:
        environment.write(environment_script(env))
        environment.seek(0)
        return subprocess.Popen(
            launcher.command(shim, keep_alive=keep_alive) if launcher else shim,
            cwd="/",  # the shim enters `cwd` as the step's user: a link there cannot take root elsewhere
            env=launcher_environment(env),
            stdin=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=launcher.user if launcher else None,
            group=launcher.group if launcher else None,
            extra_groups=[] if launcher and launcher.user is not None else None,
        )


def _alive(process: psutil.Process) -> bool:
    """Running and not a zombie: a zombie is dead, only waiting for its parent to reap it."""
    import psutil
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def group_members(pgid: int) -> list[psutil.Process]:
    """Every live process whose process group is `pgid`."""
    import psutil
    members = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and _alive(process):
                members.append(process)
        except (OSError, psutil.Error):
            continue
    return members


def process_tree(root_pid: int, pgid: int) -> list[psutil.Process]:
    """The group's members and the root's live descendants, each once."""
    import psutil
    found = {process.pid: process for process in group_members(pgid)}
    try:
        for child in psutil.Process(root_pid).children(recursive=True):
            if _alive(child):
                found.setdefault(child.pid, child)
    except psutil.Error:
        pass
    return list(found.values())


def describe(process: psutil.Process) -> str:
    import psutil
    try:
        command = " ".join(process.cmdline()) or process.name()
    except psutil.Error:
        command = "?"
    return f"pid {process.pid} ({command[:200]})"


def _signal_all(pgid: int, processes: Iterable[psutil.Process], signum: signal.Signals) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
    _signal_each(processes, signum)


def _signal_each(processes: Iterable[psutil.Process], signum: signal.Signals) -> None:
    """The signal to each process; one already gone, or not ours to signal, is skipped."""
    import psutil
    for process in processes:
        try:
            process.send_signal(signum)
        except psutil.Error:
            continue


def _wait_gone(
    processes: list[psutil.Process], seconds: float, reap: Callable[[], object]
) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while True:
        reap()
        alive = [process for process in processes if _alive(process)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(POLL_SECONDS)


def terminate_tree(process: subprocess.Popen[bytes], grace: float) -> list[str]:
    """SIGTERM to the process's group and tree, `grace` seconds, SIGKILL, then what survived.

    `process` was made by `spawn`, so its pid is its process group id.
    """
    pgid = process.pid
    tree = process_tree(process.pid, pgid)
    if not tree:
        process.poll()
        return []
    _signal_all(pgid, tree, signal.SIGTERM)
    alive = _wait_gone(tree, grace, process.poll)
    if alive or group_members(pgid):
        # Include whatever forked while shutting down: the group again, plus the ones we knew.
        remaining = {item.pid: item for item in (*alive, *group_members(pgid))}
        _signal_all(pgid, remaining.values(), signal.SIGKILL)
        alive = _wait_gone(list(remaining.values()), KILL_WAIT_SECONDS, process.poll)
    process.poll()
    return [describe(item) for item in alive]


def _bind_check(family: socket.AddressFamily, address: str, port: int) -> bool | None:
    """True when we could bind the port (free), False when it is in use, None when this
    check cannot tell (no IPv6, or a privileged port we may not bind)."""
    try:
        probe = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
        return None
    with probe:
        # SO_REUSEADDR so a port with only TIME_WAIT connections counts as free, as it does
        # for a server (http.server sets it too); a listener still makes bind fail.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            probe.bind((address, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return False
            return None
    return True


def _accepts_connections(port: int) -> bool:
    for host in ("127.0.0.1", "::1"):
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            continue
    return False


def port_is_free(port: int) -> bool:
    """Nothing listens on the port, on any IPv4 or IPv6 address."""
    answers = [_bind_check(socket.AF_INET, "0.0.0.0", port), _bind_check(socket.AF_INET6, "::", port)]
    if False in answers:
        return False
    if None in answers and answers.count(None) == len(answers):
        return not _accepts_connections(port)
    return True


def busy_ports(ports: Iterable[int]) -> list[int]:
    return [port for port in ports if not port_is_free(port)]


def wait_ports_free(ports: Iterable[int], seconds: float) -> list[int]:
    """Ports still in use after waiting up to `seconds` (sockets close just after their process)."""
    wanted = list(ports)
    deadline = time.monotonic() + seconds
    while True:
        busy = busy_ports(wanted)
        if not busy or time.monotonic() >= deadline:
            return busy
        time.sleep(POLL_SECONDS)


def processes_with_cookie(cookie: str) -> list[psutil.Process]:
    """Every live process started with RUN_COOKIE_VARIABLE=cookie in its environment (only
    processes we may read: our own user's, or all of them as root)."""
    import psutil
    found = []
    for process in psutil.process_iter():
        try:
            if process.pid != os.getpid() and process.environ().get(RUN_COOKIE_VARIABLE) == cookie:
                if _alive(process):
                    found.append(process)
        except psutil.Error:
            continue
    return found


def kill_escaped(cookie: str, grace: float) -> list[tuple[str, bool]]:
    """SIGTERM to every process still carrying the cookie, `grace` seconds, SIGKILL: each as
    (description, gone). Run after the group and tree are stopped, so these escaped them."""
    escaped = processes_with_cookie(cookie)
    if not escaped:
        return []
    described = {process.pid: describe(process) for process in escaped}
    _signal_each(escaped, signal.SIGTERM)
    alive = _wait_gone(escaped, grace, lambda: None)
    _signal_each(alive, signal.SIGKILL)
    alive = _wait_gone(alive, KILL_WAIT_SECONDS, lambda: None)
    still = {process.pid for process in alive}
    return [(described[process.pid], process.pid not in still) for process in escaped]
