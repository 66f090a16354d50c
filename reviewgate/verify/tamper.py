"""What the branch's code must leave alone, checked after the verify: the gate's git store (its
config, hooks and attributes, and the trees of the commits under review) and the gate's own
installation. Run as another uid the verify cannot write them; run as the gate's user it can, so
the gate fingerprints them before and compares after. A change blocks, and the review does not run
on a store the branch rewrote (its config could run code in the gate's next git call).

Blob contents are checked on every read instead (freeze/git_objects.py hashes what `cat-file` returns
against the object id): a loose object rewritten with new bytes under its old name is refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reviewgate.findings import Finding, FindingClass, Severity, make_finding_id
from reviewgate.freeze.git import run_git
from reviewgate.freeze.git_control import control_digests, path_digest


@dataclass(frozen=True)
class Fingerprint:
    """A digest of each guarded thing, by name ("git config", "tree of abc123", ...)."""

    digests: dict[str, str]

    def changed_since(self, before: Fingerprint) -> tuple[str, ...]:
        return tuple(name for name in sorted({*before.digests, *self.digests})
                     if before.digests.get(name) != self.digests.get(name))


def _tree_digest(repo: Path, commit: str) -> str:
    completed = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, check=False)
    return hashlib.sha256(completed.stdout + b"%d" % completed.returncode).hexdigest()


def installation_directory() -> Path:
    """The gate's own package: what a later import would load."""
    return Path(__file__).resolve().parent.parent


def user_git_files(environ: Mapping[str, str]) -> dict[str, str]:
    """The user's own git config and attributes, which the gate's git calls that read the work
    tree still read (git-config(1) FILES): a verify running as that user can write them, and a
    filter or an fsmonitor set there would run in the gate's next such call."""
    home = environ.get("HOME") or os.path.expanduser("~")
    config_home = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = {"~/.gitconfig": os.path.join(home, ".gitconfig"),
             "the user's git config": os.path.join(config_home, "git", "config"),
             "the user's git attributes": os.path.join(config_home, "git", "attributes")}
    if environ.get("GIT_CONFIG_GLOBAL"):
        files["GIT_CONFIG_GLOBAL"] = environ["GIT_CONFIG_GLOBAL"]
    return files


def take_fingerprint(repo: Path, commits: tuple[str, ...], environ: Mapping[str, str] = os.environ) -> Fingerprint:
    # Less the bytecode caches: the gate and every other Python process write them as they import.
    digests: dict[str, str] = {"the gate's installation": path_digest(str(installation_directory()),
                                                                     frozenset({"__pycache__"}))}
    digests.update(control_digests(repo))
    digests.update({name: path_digest(path) for name, path in user_git_files(environ).items()})
    for commit in dict.fromkeys(commits):
        digests[f"the tree of {commit[:12]}"] = _tree_digest(repo, commit)
    return Fingerprint(digests)


def tamper_finding(manifest: str, changed: tuple[str, ...]) -> Finding:
    """The branch's code changed what the gate reads or runs afterwards: blocks, and says what."""
    listed = ", ".join(changed)
    return Finding(
        id=make_finding_id("verify", manifest, "verify", "changed the gate's files"),
        finding_class=FindingClass.CORRECTNESS,
        severity=Severity.BLOCKER,
        category="verify",
        path=manifest,
        title="The verify changed the gate's own files",
        body=(f"While the verify ran the branch's code, these changed: {listed}. The gate does not review, or "
              "trust, a store or an installation the change under review could rewrite; the review was not run. "
              "Run the gate as root (it then runs the verify as a separate user), or find what in the "
              "manifest's steps writes there."),
        source="verify",
        rule="verify-tamper",
    )
