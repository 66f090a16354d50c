"""Who runs the branch's code: the verify as another principal than the gate.

The verify executes the branch under review, so it must not reach the gate: its token and keys,
its outputs, its git store and config, its cache, its installation. Each verify gets its own copy
of the tree (no `.git`, no outputs, no cache) and runs, as far as the platform allows, as someone
else:

- **as root** (the container action, a root runner): a dedicated unprivileged uid per run, with
  no supplementary groups, no capabilities and no-new-privs. It cannot read the gate's /proc
  entries, files or the checkout's `.git` (closed to others while the verify runs), nor write the
  gate's installation or outputs. Every process left with that uid is killed at teardown,
  whatever it did to its environment.
- **otherwise**: the gate is made non-dumpable (its /proc/<pid>/environ and memory become root's,
  no ptrace), and each step runs in a user and pid namespace of its own where `unshare` allows
  it, so /proc shows only the step's processes and nothing it starts outlives it. Files the
  gate's user can read stay readable: what changed is checked afterwards (verify/tamper.py).

`boundary()` says which of these a run gets; `doctor` and the verify's notes print it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from reviewgate.text import printable
from reviewgate.verify.sweep import Adopter, describe_process, empty_uid, processes_of, remove_files_of
from reviewgate.verify.tree_copy import copy_tree, hand_over, remove_tree

# Dedicated uids are taken from this range, one per concurrent run; none should have a passwd
# entry (a uid some account or service uses is skipped).
VERIFY_UID_FIRST = 61000
VERIFY_UID_COUNT = 1000
VERIFY_USER_NAME = "reviewgate-verify"
# One place per machine, whatever TMPDIR a gate was given: two gates with different temp dirs
# would otherwise lease the same uid, and each one's teardown kill the other's processes. /run
# (root's, cleared at boot) where there is one; /tmp itself, not TMPDIR, elsewhere.
_LOCK_DIRECTORY = Path("/run" if os.access("/run", os.W_OK) else "/tmp") / "reviewgate-verify-uids"
_PR_SET_DUMPABLE = 4
_PROBE_SECONDS = 10.0


# The first process of a start step's pid namespace when the step may daemonize (`pg_ctl start`,
# `redis-server --daemonize yes`): the kernel kills a namespace whose first process ends, so this
# one stays while anything else runs in it, reaping orphans. Run with -I -S: the step's environment
# (PYTHONPATH, PYTHONSTARTUP) cannot bring the branch's code into it.
_KEEP_ALIVE = """
import os, sys, time
child = os.fork()
if child == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
status = None
while True:
    try:
        pid, code = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pid, code = 0, 0
    if pid == child:
        status = os.waitstatus_to_exitcode(code)
        if status != 0:
            sys.exit(status if status > 0 else 128 - status)
    if pid:
        continue
    if status is not None and not [e for e in os.listdir('/proc') if e.isdigit() and e != '1']:
        sys.exit(0)
    time.sleep(0.1)
"""


@dataclass(frozen=True)
class Launcher:
    """How a step's `sh -c` is started: `namespace`, a wrapper that unshares a pid namespace;
    `drop`, one that drops privileges; the uid/gid a plain start switches to when no wrapper can
    (both None: as the gate)."""

    namespace: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    user: int | None = None
    group: int | None = None

    def command(self, shell_command: list[str], *, keep_alive: bool = False) -> list[str]:
        """`keep_alive`: the namespace outlives the shell while what it started still runs."""
        init = [sys.executable, "-I", "-S", "-c", _KEEP_ALIVE] if keep_alive and self.namespace else []
        return [*self.namespace, *init, *self.drop, *shell_command]


@dataclass(frozen=True)
class Boundary:
    """What separates the verify from the gate in this run, for notes, `doctor` and the docs."""

    kind: str  # "separate user", "namespaces" or "same user"
    launcher: Launcher
    uid: int | None = None
    namespaces: bool = False
    limits: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        parts = [self.kind + (f" (uid {self.uid})" if self.uid is not None else "")]
        if self.namespaces:
            parts.append("own pid namespace per step")
        parts.append("own copy of the tree")
        return ", ".join(parts)


def _unshare() -> str | None:
    return shutil.which("unshare")


def _setpriv() -> str | None:
    return shutil.which("setpriv")


def _works(command: list[str]) -> bool:
    """Whether the wrapper can start a process here (a kernel or a container may refuse it)."""
    try:
        completed = subprocess.run([*command, "/bin/sh", "-c", "exit 0"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=_PROBE_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return completed.returncode == 0


def _pid_namespace(unshare: str, *, user_namespace: bool) -> list[tuple[str, ...]]:
    """`unshare` wrappers to try, strongest first: a pid namespace (so /proc shows only the step's
    own processes, and the kernel kills all of them when the step's shell ends)."""
    base = (unshare, "--pid", "--fork", "--mount-proc", "--kill-child")
    if not user_namespace:
        return [base]
    # Without root a pid namespace needs a user namespace; older util-linux lacks --map-current-user.
    return [(unshare, "--user", "--map-current-user", *base[1:]), (unshare, "--user", "--map-root-user", *base[1:])]


def _drop_privileges(setpriv: str, uid: int) -> tuple[str, ...]:
    return (setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--")


@lru_cache(maxsize=4)
def _boundary_for(euid: int, uid: int | None) -> Boundary:
    unshare, setpriv = _unshare(), _setpriv()
    if euid == 0 and uid is not None:
        if setpriv:
            drop = _drop_privileges(setpriv, uid)
            for wrapper in _pid_namespace(unshare, user_namespace=False) if unshare else []:
                if _works([*wrapper, "--", *drop]):
                    return Boundary("separate user", Launcher((*wrapper, "--"), drop), uid, namespaces=True)
            if _works(list(drop)):
                return Boundary("separate user", Launcher(drop=drop), uid)
        # No setpriv: the start itself switches uid and gid (no namespace, capabilities dropped
        # by the kernel with the uid change).
        return Boundary("separate user", Launcher(user=uid, group=uid), uid,
                        limits=("no pid namespace (setpriv/unshare not usable here)",))
    no_new_privs = (setpriv, "--no-new-privs", "--") if setpriv else ()
    for wrapper in _pid_namespace(unshare, user_namespace=True) if unshare else []:
        if _works([*wrapper, "--", *no_new_privs]):
            return Boundary("namespaces", Launcher((*wrapper, "--"), no_new_privs), namespaces=True,
                            limits=_SAME_USER_LIMITS)
    return Boundary("same user", Launcher(drop=no_new_privs), limits=(
        *_SAME_USER_LIMITS, "no pid namespace: the verify can see the runner's other processes of this user"))


_SAME_USER_LIMITS = (
    "runs as the gate's user: files that user can read (the checkout's .git/config, which holds the "
    "token when actions/checkout persists credentials; the cache key file; the runner's command files) "
    "stay readable; changes to the gate's git store and installation are detected after the verify "
    "and block",
)


def boundary(uid: int | None = None) -> Boundary:
    """The boundary a verify gets on this machine as this user (`uid`: the dedicated one, as root)."""
    euid = os.geteuid()
    return _boundary_for(euid, uid if euid == 0 else None)


def expected_boundary() -> str:
    """What `doctor` says before any verify has run: the kind, without allocating a uid."""
    if os.geteuid() == 0:
        return boundary(VERIFY_UID_FIRST).describe().replace(f"uid {VERIFY_UID_FIRST}", "a dedicated uid")
    return boundary().describe()


def same_user_limits() -> tuple[str, ...]:
    """What the verify can still reach here (nothing more as root, where it is another uid)."""
    return () if os.geteuid() == 0 else boundary().limits


# Groups whose members can become root (the Docker or LXD socket, sudo, raw disks).
_ROOT_GROUPS = ("docker", "lxd", "sudo", "wheel", "disk", "root")


def kept_groups() -> str | None:
    """What the verify keeps of the gate user's supplementary groups where it cannot drop them (a
    normal user: setgroups needs root, and a user namespace keeps them), as a note; None as root."""
    if os.geteuid() == 0:
        return None
    import grp

    names = []
    for gid in sorted(set(os.getgroups()) - {os.getegid()}):
        try:
            names.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            names.append(str(gid))
    if not names:
        return None
    root = [name for name in names if name in _ROOT_GROUPS]
    warning = f": {', '.join(root)} means root" if root else ""
    return f"keeps the gate user's supplementary groups {', '.join(names)} (a normal user cannot drop them){warning}"


def make_gate_undumpable() -> None:
    """/proc/<gate>/environ, mem and ptrace become root's only (prctl PR_SET_DUMPABLE 0): a step
    running as the same user cannot read the gate's token from there. Children exec'd later get
    their own default again; the gate itself stays so for the rest of the run."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: nothing to set
        return


class _UidLease:
    """A dedicated uid held for one run: an exclusive lock file per uid, so two gates on one
    machine never share one (teardown kills every process of it)."""

    def __init__(self) -> None:
        self.uid: int | None = None
        self._handle: int | None = None

    def acquire(self) -> int:
        import pwd

        import psutil

        _LOCK_DIRECTORY.mkdir(mode=0o700, exist_ok=True)
        # In the shared temp dir: one another user made (or a link) could hand out or hold the locks.
        info = os.lstat(_LOCK_DIRECTORY)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise OSError(f"{_LOCK_DIRECTORY} is not a directory of the gate's own, writable by it alone: "
                          "the verify's uids cannot be leased safely (remove it and re-run)")
        busy = {process.info["uids"].real for process in psutil.process_iter(["uids"])
                if process.info.get("uids") is not None}
        for uid in range(VERIFY_UID_FIRST, VERIFY_UID_FIRST + VERIFY_UID_COUNT):
            try:
                pwd.getpwuid(uid)
                continue  # an account has it
            except KeyError:
                pass
            if uid in busy:
                continue
            handle = os.open(_LOCK_DIRECTORY / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(handle)
                continue
            self.uid, self._handle = uid, handle
            return uid
        raise OSError(f"no free uid for the verify in {VERIFY_UID_FIRST}-{VERIFY_UID_FIRST + VERIFY_UID_COUNT - 1}")

    def release(self) -> None:
        if self._handle is not None:
            os.close(self._handle)
            self._handle = None


@dataclass
class Sandbox:
    """One verify's principal: its boundary, its copy of the tree, its home and temp dir."""

    boundary: Boundary
    root: Path
    tree: Path
    home: Path
    temp: Path
    notes: list[str] = field(default_factory=list)
    # Processes of the dedicated uid that outlived teardown: the checkout's `.git` then stays
    # closed to others, and the verify is blocked.
    occupied: list[str] = field(default_factory=list)
    adopter: Adopter | None = None

    @property
    def launcher(self) -> Launcher:
        return self.boundary.launcher

    def environment(self, environ: dict[str, str]) -> dict[str, str]:
        """The step environment with the places that are the verify's own: its home and temp dir,
        and the workspace variables pointing at its copy of the tree, not at the gate's checkout."""
        environ = dict(environ)
        environ["HOME"] = str(self.home)
        for name in ("TMPDIR", "TMP", "TEMP"):
            environ[name] = str(self.temp)
        for name in ("GITHUB_WORKSPACE", "CI_PROJECT_DIR"):
            if name in environ:
                environ[name] = str(self.tree)
        if self.boundary.uid is not None:
            environ["USER"] = environ["LOGNAME"] = VERIFY_USER_NAME
        return environ

    def contains(self, path: Path) -> bool:
        """Whether `path` (a file the gate reads back, e.g. the app's JUnit results) lies in the
        verify's tree once links are followed: a link to the gate's files is refused."""
        try:
            return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(self.tree))
        except OSError:
            return False

    def kill_leftovers(self) -> list[str]:
        """Every process the verify left, killed until none is left (`occupied` names what
        outlived that): as root every process of the dedicated uid, whatever its environment and
        however often it changes its pid; as the gate's user without a pid namespace every
        process that re-parented to the gate (a subreaper while the verify runs)."""
        if self.boundary.uid is not None:
            found = [describe_process(process) for process in processes_of(self.boundary.uid)]
            self.occupied = empty_uid(self.boundary.uid)
            left = [] if self.occupied else remove_files_of(self.boundary.uid, keep=(str(self.root),))
            if left:
                self.notes.append(f"removed what the verify's user left in the machine's temp directories: "
                                  f"{', '.join(printable(path) for path in left[:10])}"
                                  + (f" and {len(left) - 10} more" if len(left) > 10 else ""))
            return found
        if self.adopter is not None:
            found, self.occupied = self.adopter.kill_adopted()
            return found
        return []


@contextmanager
def _closed_to_others(path: Path, closing: bool, empty: Callable[[], bool]) -> Iterator[None]:
    """While the verify runs as another uid, `path` (the checkout's `.git`: its config can hold
    the job's token) is closed to everyone but its owner. Its mode comes back only once `empty`
    says no process of that uid is left; otherwise it stays closed (the job's end discards it,
    or `chmod o+rx .git` restores it by hand once the processes are gone)."""
    if not closing or not path.is_dir() or path.is_symlink():
        yield
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    os.chmod(path, mode & ~0o007)
    try:
        yield
    finally:
        if empty():
            os.chmod(path, mode)


@contextmanager
def verify_sandbox(repo: Path, leave_out: tuple[Path, ...] = ()) -> Iterator[Sandbox]:
    """The principal for one verify: a copy of `repo`, a home and a temp dir, owned by the dedicated
    uid as root; the gate non-dumpable; everything removed afterwards."""
    make_gate_undumpable()
    lease = _UidLease()
    uid = lease.acquire() if os.geteuid() == 0 else None
    try:
        chosen = boundary(uid)
        root = Path(tempfile.mkdtemp(prefix="reviewgate-verify-"))
        sandbox: Sandbox | None = None
        try:
            tree, home, temp = root / "tree", root / "home", root / "tmp"
            skipped = copy_tree(repo, tree, leave_out)
            home.mkdir()
            temp.mkdir()
            if uid is not None:
                hand_over(root, uid)
            # Without a pid namespace or a uid of its own, what a step leaves behind is found as
            # the gate's adopted children.
            adopter = Adopter.start() if uid is None and not chosen.namespaces else None
            sandbox = Sandbox(chosen, root, tree, home, temp, adopter=adopter)
            groups = kept_groups()
            if groups:
                sandbox.notes.append(f"the verify {groups}")
            if skipped:
                sandbox.notes.append(f"not copied into the verify's tree (special files): {', '.join(skipped[:10])}")
            with _closed_to_others(repo / ".git", uid is not None,
                                   lambda: uid is None or not (sandbox.occupied or empty_uid(uid))):
                yield sandbox
        finally:
            if sandbox is not None and sandbox.adopter is not None:
                sandbox.adopter.stop()
            remove_tree(root)
    finally:
        lease.release()
