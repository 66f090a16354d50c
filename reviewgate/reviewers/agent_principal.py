"""Who an agent CLI runs as, and with what: a principal of its own, like the verify.

The agent reads the branch under review and may run what it finds, or follow an instruction
planted in the diff. So:

- **as root** it runs as a dedicated unprivileged uid leased like the verify's (verify/principal.py:
  the same uid range and lock files, `setpriv` with no groups, no capabilities, no-new-privs, its
  own pid namespace where `unshare` works). The uid is leased when the reviewer is built, before
  the verify, so the verify never gets the same one; every process left with it is killed when
  the review ends. Its snapshot is root's and read-only to it; the checkout's `.git` is not
  reachable.
- **otherwise** it runs as the gate's user (there is no other to switch to).

Either way its environment is built from nothing (`agent_environment`): PATH, its own empty HOME
and temp dir, LANG/LC_*/TZ, its key under the name `api_key_env` gives, and the names the
reviewer's `environment` setting lists (from the target side's config only). Never the forge
token, other keys, the runner's command files (GITHUB_OUTPUT, GITHUB_ENV, ...) or the cache key.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reviewgate.cache_trust import CACHE_KEY_VARIABLE
from reviewgate.trusted_programs import TrustedProgram, resolve, resolve_with_interpreter, verify_can_replace

# _UidLease is private to the verify's module: imported, not copied, so both share one uid lease.
from reviewgate.verify.principal import Boundary, _UidLease, boundary
from reviewgate.verify.sweep import empty_uid, remove_files_of

# Locale and time zone: how the CLI prints, nothing it could be steered by.
BASIC_VARIABLES = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ")
# Claude Code on a fresh HOME sends a title request and telemetry besides the review: not counted in
# its usage, and not wanted from a CI gate.
QUIET_VARIABLES = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
# Never passed, even when the reviewer's `environment` names them: the forge's tokens (the agent
# reads hostile input), and what would let it write the gate's step outputs or summary, run
# runner commands, or forge the review cache.
NEVER_PASSED = frozenset({
    CACHE_KEY_VARIABLE, "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN", "INPUT_GITHUB-TOKEN",
    "GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
})
NEVER_PASSED_PREFIXES = ("ACTIONS_", "RUNNER_")


def refused_names(names: Sequence[str]) -> list[str]:
    return [name for name in names if name in NEVER_PASSED or name.startswith(NEVER_PASSED_PREFIXES)]


def agent_environment(environ: Mapping[str, str], *, search_path: str, home: Path, key_variable: str | None,
                      key: str | None, passed: Sequence[str]) -> dict[str, str]:
    """The agent's whole environment (see the module's docstring)."""
    environment = {name: environ[name] for name in BASIC_VARIABLES if name in environ}
    environment.update({name: environ[name] for name in passed if name in environ and not refused_names([name])})
    environment.update(QUIET_VARIABLES)
    temp = home / "tmp"
    environment.update(PATH=search_path, HOME=str(home), TMPDIR=str(temp), TMP=str(temp), TEMP=str(temp))
    if key_variable and key is not None:
        environment[key_variable] = key
    return environment


def safe_search_path(programs: Sequence[TrustedProgram], gate_path: str) -> str:
    """The agent's PATH: the directories of its program and interpreter first (so `#!/usr/bin/env
    node` finds the node that was sealed), then the gate's entries the verify cannot write."""
    entries = [str(program.path.parent) for program in reversed(programs)]
    for entry in gate_path.split(os.pathsep):
        if entry and os.path.isabs(entry) and entry not in entries and _kept(Path(entry)):
            entries.append(entry)
    return os.pathsep.join(entries)


def _kept(directory: Path) -> bool:
    """A PATH entry the verify could not have filled: as root, not writable by its uid (nor a
    directory it could create); as a normal user, not writable by the user (the same as the verify)."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if os.geteuid() == 0:
        return verify_can_replace(existing) is None
    return not any(os.access(place, os.W_OK) for place in (existing, *existing.parents) if place.is_dir())


@dataclass
class AgentPrincipal:
    """Who the agent runs as, chosen when the reviewer is built (before the verify)."""

    boundary: Boundary
    programs: tuple[TrustedProgram, ...]  # the CLI, its interpreter, and the launcher's wrappers
    search_path: str
    lease: _UidLease | None = None

    @property
    def uid(self) -> int | None:
        return self.boundary.uid

    def command(self, argv: Sequence[str]) -> list[str]:
        """The agent's command line: its program by the path sealed before the verify, inside the
        launcher that drops to the dedicated uid."""
        return self.boundary.launcher.command([str(self.programs[0].path), *argv[1:]])

    def check(self) -> None:
        """Every program about to run is still the one sealed before the verify (UntrustedProgram)."""
        for program in self.programs:
            program.check()

    def describe(self) -> str:
        who = f"as uid {self.uid} (no groups, no-new-privs)" if self.uid is not None else "as the gate's user"
        said = f"the agent ran {self.programs[0].path} {who}, with its own HOME and a clean environment"
        exposed = [str(program.path) for program in self.programs if self.uid is None and not _kept(program.path.parent)]
        if exposed:  # the verify is this same user: it could change what these load besides their own file
            said += (f"; {', '.join(exposed)} lie where the verify's user can write: only the files themselves "
                     "were checked unchanged, not what they load")
        return said

    @contextmanager
    def home(self) -> Iterator[Path]:
        """A fresh HOME (and temp dir) for one review, the dedicated uid's own; removed after,
        with every process still running as that uid and what it left in the shared temp dirs
        (verify/sweep.py). The uid's lease is held until the gate
        exits (its lock file closes with it)."""
        home = Path(tempfile.mkdtemp(prefix="reviewgate-agent-home-"))
        try:
            (home / "tmp").mkdir()
            if self.uid is not None:
                for place in (home, home / "tmp"):
                    os.chown(place, self.uid, self.uid)
            yield home
        finally:
            if self.uid is not None and not empty_uid(self.uid):
                remove_files_of(self.uid, keep=(str(home),))
            shutil.rmtree(home, ignore_errors=True)



def agent_principal(command: str, gate_path: str) -> AgentPrincipal:
    """Resolve the agent's program (and a script's interpreter) and, as root, lease its uid and
    choose its launcher: all before the verify runs. UntrustedProgram when a program is refused."""
    programs = resolve_with_interpreter(command, gate_path)
    lease: _UidLease | None = None
    uid: int | None = None
    if os.geteuid() == 0:
        lease = _UidLease()
        uid = lease.acquire()
    chosen = boundary(uid)
    launcher = chosen.launcher
    wrappers = [part for part in (*launcher.namespace[:1], *launcher.drop[:1]) if part]
    sealed = (*programs, *(resolve(wrapper) for wrapper in wrappers))
    return AgentPrincipal(chosen, sealed, safe_search_path(programs, gate_path), lease)
