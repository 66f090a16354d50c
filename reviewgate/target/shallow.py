"""Get the commits a review needs into a shallow CI checkout, fetching no more than needed.

CI checkouts are shallow by default (actions/checkout `fetch-depth: 1`, GitLab `GIT_DEPTH`
20): the base, the PR head and their merge base are often missing. Missing commits are
fetched by SHA at depth 1, then the history is deepened in bounded steps until the merge
base appears, and `--unshallow` is the last resort.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from reviewgate.errors import BlockedError, UsageError
from reviewgate.target.git import git_text, run_git

REMOTE = "origin"
# Deepening steps for the merge base: most branches are a few dozen commits off their base;
# each step fetches from both tips, so the cost grows with the branch, never the whole history.
DEEPEN_STEPS = (50, 200, 1000, 5000)
CHECKOUT_ADVICE = "set `fetch-depth: 0` on actions/checkout, or `GIT_DEPTH: 0` in GitLab CI"


@dataclass
class FetchLog:
    """Every fetch made, in order, for the frozen target's record (`shallow_fetches`)."""

    fetches: list[str] = field(default_factory=list)


def is_shallow(repo: Path) -> bool:
    return git_text(repo, "rev-parse", "--is-shallow-repository") == "true"


def has_commit(repo: Path, sha: str) -> bool:
    return run_git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def has_remote(repo: Path, name: str = REMOTE) -> bool:
    return name in run_git(repo, "remote").stdout.decode("utf-8", "replace").split()


class RemoteUnreachable(BlockedError):
    """Origin could not be reached: the review could not be done (exit 3), whatever named
    the ref; never mistaken for a ref that does not exist (a usage error)."""


def _display_url(url: str) -> str:
    """A remote URL without any user or password in it (runners put tokens there)."""
    parts = urlsplit(url)
    if parts.scheme and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return url


def _remote_reachable(repo: Path) -> bool:
    """Whether origin answers at all: `ls-remote` of one ref succeeds even when that ref is
    missing, and fails only when the remote cannot be read."""
    return run_git(repo, "ls-remote", REMOTE, "HEAD", check=False).returncode == 0


def _fetch(repo: Path, log: FetchLog, *args: str) -> bool:
    """True when the fetch worked, False when it did not (a ref or commit origin lacks);
    RemoteUnreachable when origin cannot be reached at all."""
    command = ("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", *args)
    completed = run_git(repo, *command, check=False)
    log.fetches.append("git " + " ".join(command) + ("" if completed.returncode == 0 else " (failed)"))
    if completed.returncode != 0 and not _remote_reachable(repo):
        raw_url = run_git(repo, "remote", "get-url", REMOTE, check=False).stdout.decode("utf-8", "replace").strip()
        url = _display_url(raw_url)
        lines = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = f": {lines[-1].replace(raw_url, url)}" if lines else ""
        raise RemoteUnreachable(
            f"cannot reach remote {REMOTE} ({url}) to fetch what this shallow checkout lacks{detail}; "
            "check the network or the remote and re-run"
        )
    return completed.returncode == 0


def ensure_commit(repo: Path, sha: str, source: str, log: FetchLog) -> None:
    """Make sure the commit `sha` (named by `source`) is in the repository, fetching it at
    depth 1 from origin when missing; a clear blocked error when it cannot be had."""
    if has_commit(repo, sha):
        return
    if has_remote(repo) and _fetch(repo, log, "--depth=1", REMOTE, sha) and has_commit(repo, sha):
        return
    raise BlockedError(
        f"commit {sha} (from {source}) is not in the checkout and could not be fetched from {REMOTE}; "
        f"{CHECKOUT_ADVICE}"
    )


def _has_ref(repo: Path, ref: str) -> bool:
    return run_git(repo, "rev-parse", "--verify", "--quiet", ref, check=False).returncode == 0


def ensure_remote_branch(repo: Path, branch: str, source: str, log: FetchLog) -> str:
    """`origin/<branch>`, fetched at depth 1 when the clone does not have it (single-branch
    CI checkouts carry only the branch being built), else the tag of that name."""
    valid = run_git(repo, "check-ref-format", "--branch", branch, check=False).returncode == 0
    if branch.startswith("-") or not valid:
        raise UsageError(f"{source}: {branch!r} is not a valid branch name")
    remote_ref = f"{REMOTE}/{branch}"
    if _has_ref(repo, f"refs/remotes/{remote_ref}"):
        return remote_ref
    if has_remote(repo):
        if _fetch(repo, log, "--depth=1", REMOTE, f"+refs/heads/{branch}:refs/remotes/{remote_ref}"):
            return remote_ref
        # A base that is a tag: CI fetches run with --no-tags, so fetch that one tag.
        if _fetch(repo, log, "--depth=1", REMOTE, f"+refs/tags/{branch}:refs/tags/{branch}"):
            return f"refs/tags/{branch}"
    if _has_ref(repo, f"refs/heads/{branch}"):
        return branch  # no such ref on origin, or no origin at all: the local branch stands in
    raise BlockedError(
        f"{branch!r} (from {source}) is neither a local ref nor a branch or tag on {REMOTE}; "
        f"{CHECKOUT_ADVICE}"
    )


def _merge_base(repo: Path, base_sha: str, head_sha: str) -> str | None:
    completed = run_git(repo, "merge-base", base_sha, head_sha, check=False)
    text = completed.stdout.decode("ascii", "replace").strip()
    return text or None if completed.returncode == 0 else None


def find_merge_base(repo: Path, base_sha: str, head_sha: str, describe: str, log: FetchLog) -> str:
    """The merge base of two commits present in the repository, deepening a shallow clone
    step by step until it appears. No merge base in a full history is unrelated histories."""
    found = _merge_base(repo, base_sha, head_sha)
    if found is not None:
        return found
    remote = has_remote(repo)
    for depth in DEEPEN_STEPS:
        if not (remote and is_shallow(repo)):
            break
        if not _fetch(repo, log, f"--depth={depth}", REMOTE, base_sha, head_sha):
            break
        found = _merge_base(repo, base_sha, head_sha)
        if found is not None:
            return found
    if remote and is_shallow(repo):
        _fetch(repo, log, "--unshallow", REMOTE, base_sha, head_sha)
        found = _merge_base(repo, base_sha, head_sha)
        if found is not None:
            return found
    if is_shallow(repo):
        raise BlockedError(
            f"no merge base of {describe} in this shallow clone, and fetching more history from "
            f"{REMOTE} did not find one; {CHECKOUT_ADVICE}"
        )
    raise UsageError(
        f"{describe} share no history (unrelated histories, no merge base); check the base branch"
    )
