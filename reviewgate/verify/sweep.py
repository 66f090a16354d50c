"""Teardown's last sweep: nothing the verify started may outlive it, whatever it did to its
environment (the run cookie is gone once a process clears it) and however often it changes its pid.

- As root, every process of the verify's dedicated uid: `kill(-1, SIGKILL)` sent as that uid,
  repeated until a pass over /proc after a kill finds none (`empty_uid`).
- As the gate's own user without a pid namespace, every process that re-parented to the gate:
  while the verify runs the gate is a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so what a
  step double-forks or `setsid`s away becomes the gate's child, not init's (`Adopter`).

As root, what the dedicated uid left in the machine's shared temp directories goes too, once no
process of it is left (`remove_files_of`): the next verify with that uid must not find it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

# How long teardown keeps killing before it gives up on what is left.
EMPTY_UID_SECONDS = 10.0
_SHELL = "/bin/sh"
_KILL_SECONDS = 10.0
_PR_SET_CHILD_SUBREAPER = 36
# Passes in a row that must find no adopted process: one pass can miss a process between two pids.
_EMPTY_PASSES = 3
_PASS_PAUSE = 0.02


def processes_of(uid: int) -> list[psutil.Process]:
    """Every live process whose real, effective or saved uid is `uid` (a zombie is dead)."""
    import psutil

    found = []
    for process in psutil.process_iter(["uids", "status"]):
        uids = process.info.get("uids")
        if uids is not None and uid in uids and process.info.get("status") != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def describe_process(process: psutil.Process) -> str:
    import psutil

    try:
        command = " ".join(process.cmdline()) or process.name()
    except psutil.Error:
        command = "?"
    return f"pid {process.pid} ({command})"[:200]


def _kill_every_process_as(uid: int) -> None:
    """kill(-1, SIGKILL) sent by a process of `uid`: the kernel signals every process of that uid
    but the sender in one pass, and a fork under way when it runs fails, so a process that forks
    and lets its parent exit cannot slip past the way it slips past a list of pids."""
    subprocess.run([_SHELL, "-c", "kill -s KILL -- -1"], user=uid, group=uid, extra_groups=[],
                   env={"PATH": "/usr/bin:/bin"}, cwd="/", stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=_KILL_SECONDS)


def empty_uid(uid: int, seconds: float = EMPTY_UID_SECONDS) -> list[str]:
    """Kill every process of `uid` until a pass finds none; what is still there after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        # The kill comes first, every round: a pass over /proc can miss a process that is
        # between two pids, so only a pass after a kill proves the uid empty.
        try:
            _kill_every_process_as(uid)
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.05)
        left = processes_of(uid)
        if not left:
            return []
        if time.monotonic() >= deadline:
            return [describe_process(process) for process in left]


# Where any user can create files that outlive a run: each one's own entries are removed.
SHARED_TEMP_DIRECTORIES = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")


def remove_files_of(uid: int, keep: tuple[str, ...] = ()) -> list[str]:
    """Every entry `uid` owns at the top of the shared temp directories but `keep`, removed (a
    directory with all inside it, a link itself, never what it points to); the paths removed.
    Call it only once no process of `uid` is left: nothing can then swap an entry for a link."""
    removed = []
    for directory in dict.fromkeys((tempfile.gettempdir(), *SHARED_TEMP_DIRECTORIES)):
        try:
            with os.scandir(directory) as entries:
                owned = [entry for entry in entries if _owner(entry) == uid and entry.path not in keep]
        except OSError:
            continue
        for entry in owned:
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
            removed.append(entry.path)
    return removed


def _owner(entry: os.DirEntry[str]) -> int | None:
    try:
        return entry.stat(follow_symlinks=False).st_uid
    except OSError:
        return None


def _set_subreaper(on: bool) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):  # not Linux
        return False


def _children() -> set[int]:
    """The gate's direct children, as the kernel lists them per thread."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as listed:
                found.update(int(pid) for pid in listed.read().split())
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN
        import psutil

        found = {child.pid for child in psutil.Process().children()}
    return found


class Adopter:
    """The gate as a child subreaper for the verify's time: every orphan of a step becomes the
    gate's child, found and killed at teardown even after it cleared its environment."""

    def __init__(self, before: frozenset[int]) -> None:
        self.before = before  # the gate's own children from before the verify: never touched
        self._groups: set[int] = set()

    @classmethod
    def start(cls) -> Adopter | None:
        if not _set_subreaper(True):
            return None
        return cls(frozenset(_children()))

    def stop(self) -> None:
        _set_subreaper(False)

    def _adopted(self) -> list[int]:
        """The gate's children since the verify began that still run; the dead ones are reaped."""
        alive = []
        for pid in _children() - self.before:
            try:
                reaped, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue
            if not reaped:
                alive.append(pid)
        return alive

    def kill_adopted(self, seconds: float = EMPTY_UID_SECONDS) -> tuple[list[str], list[str]]:
        """SIGKILL to every adopted process and its process group until passes in a row find
        none: (what was found, what was still there after `seconds`)."""
        import psutil

        found: list[str] = []
        own_group = os.getpgrp()
        deadline = time.monotonic() + seconds
        empty_passes = 0
        while empty_passes < _EMPTY_PASSES:
            left = self._adopted()
            if not left:
                empty_passes += 1
                time.sleep(_PASS_PAUSE)
                continue
            empty_passes = 0
            if time.monotonic() >= deadline:
                return found, [describe_process(psutil.Process(pid)) for pid in left if psutil.pid_exists(pid)]
            for pid in left:
                try:
                    if len(found) < 20:
                        found.append(describe_process(psutil.Process(pid)))
                    group = os.getpgid(pid)
                    if group != own_group:
                        self._groups.add(group)
                    os.kill(pid, signal.SIGKILL)
                except (OSError, psutil.Error):
                    continue
            # A group outlives the pid that led it: a hopper that forked from it is still in it.
            for group in self._groups:
                try:
                    os.killpg(group, signal.SIGKILL)
                except OSError:
                    continue
            time.sleep(_PASS_PAUSE)
        return found, []
