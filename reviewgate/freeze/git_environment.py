"""What every git process the gate runs gets: the git program found and sealed once, settings
that make its output the same whatever the user's or the runner's config says, and an environment
that points it at nothing but the repository under review."""

from __future__ import annotations

import functools
import os
import shutil

from reviewgate.errors import BlockedError
from reviewgate.trusted_programs import TrustedProgram, resolve

# Settings that make git's output the same whatever the user's or the runner's config says.
# safe.directory: container actions mount a workspace owned by another user; this applies
# to our own calls only (command-line scope) and never touches anyone's config file.
# The diff settings also keep the canonical patch hash stable across user configs: the
# algorithm and inter-hunk context decide where hunks split (git-config(1), "diff.*").
FIXED_CONFIG = (
    "core.quotepath=off",
    "color.ui=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.algorithm=myers",
    "diff.indentHeuristic=true",
    "diff.interHunkContext=0",
    "diff.suppressBlankEmpty=false",
    "diff.ignoreSubmodules=none",
    "core.pager=cat",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "log.showSignature=false",
    "safe.directory=*",
    # Nothing in the repository's own config runs code in our calls: no hook (post-index-change
    # on the temporary index, reference-transaction on a fetch), no ext:: transport.
    # diff.external cannot be cleared with `-c` (an empty value is run as a command):
    # every diff passes --no-ext-diff instead.
    "core.hooksPath=/dev/null",
    "protocol.ext.allow=never",
)

# What a tree-only command (run_git(..., tree_only=True)) adds: no attributes from anywhere.
# attr.tree is the setting (git 2.43 on) for where in-tree attributes come from (older git
# ignores the key; a value that names no tree reads as the empty tree); the empty work tree and
# index do the same on every git version (_prepared).
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
NO_ATTRIBUTES_CONFIG = (
    "core.attributesFile=/dev/null",
    f"attr.tree={EMPTY_TREE}",
    # Files over this size are binary to git's diff whatever their bytes: git's default, so the
    # repository's config cannot lower it.
    "core.bigFileThreshold=512m",
)


# Variables that would point git at another repository, index or diff driver than the
# one being reviewed (git(1), ENVIRONMENT). GIT_CONFIG_COUNT/GIT_CONFIG_PARAMETERS stay:
# runners pass fetch credentials that way, and the fixed `-c` settings still win over them.
UNSET_VARIABLES = (
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_DIFF_PATH_COUNTER",
    "GIT_DIFF_PATH_TOTAL",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_ATTR_SOURCE",
)


def git_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "LC_ALL": "C",
            "LANG": "C",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            # Replace refs would silently swap the commits being reviewed.
            "GIT_NO_REPLACE_OBJECTS": "1",
        }
    )
    for name in UNSET_VARIABLES:
        env.pop(name, None)
    return env


# Exit 3, not 2: nothing the user typed is wrong; the runner lacks a tool, so the review could
# not be done, and a missing tool must never read as an approval or a usage mistake.
GIT_NOT_FOUND = ("git is needed and was not found on PATH: install git or add its directory to PATH "
                 "(exit 3: the review could not be done; this says nothing about the code)")


@functools.cache
def _sealed_git() -> TrustedProgram:
    if shutil.which("git") is None:
        raise BlockedError(GIT_NOT_FOUND)  # not cached: raised again at the next call
    # By its status: hashing a few MB of git would cost every run, a one-line push among them,
    # and no write to it can put its change time back.
    return resolve("git", content=False)


def git_program() -> str:
    """git's full path, found and sealed once, at the gate's first git call (the freeze, before
    the verify): a `git` the branch's code puts earlier on PATH afterwards is never the one run,
    and a change to the one found blocks (trusted_programs.py)."""
    git = _sealed_git()
    git.check(content=False)
    return str(git.path)
