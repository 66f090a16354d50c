"""Get the commits a review needs into a shallow CI checkout, fetching no more than needed.

CI checkouts are shallow by default (actions/checkout `fetch-depth: 1`, GitLab `GIT_DEPTH`
20): the base, the PR head and their merge base are often missing. Missing commits are
fetched by SHA at depth 1, then the history is deepened in bounded steps until the merge
base appears, and `--unshallow` is the last resort.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from reviewgate.errors import BlockedError, UsageError
from reviewgate.freeze.git import git_text, run_git
from reviewgate.text import did_you_mean
from reviewgate.workspace_owner import give_tree_to_owner, owner_to_inherit

REMOTE = "origin"
# Deepening steps for the merge base: most branches are a few dozen commits off their base;
# each step fetches from both tips, so the cost grows with the branch, never the whole history.
DEEPEN_STEPS = (50, 200, 1000, 5000)
# What to change in the CI checkout when history is missing, per CI provider. A laptop gets none:
# its clone is the user's own, and a CI setting would only mislead there.
CHECKOUT_ADVICE = {
    "github": "set `fetch-depth: 0` on actions/checkout",
    "gitlab": "set the variable `GIT_DEPTH: 0` in GitLab CI",
}
# Branch names a base most likely is, listed first when a base names nothing.
LIKELY_BASES = ("main", "master", "develop", "trunk")
LISTED_BRANCHES = 6


class FetchLog:
    """Every fetch made, in order, for the frozen target's record (`shallow_fetches`), and the
    CI provider the run is on (`local`, `github`, `gitlab`), which decides the advice given. (A
    plain class: a dataclass costs every start about 0.4 ms compiling its generated methods.)"""

    def __init__(self, fetches: list[str] | None = None, provider: str = "local") -> None:
        self.fetches: list[str] = [] if fetches is None else fetches
        self.provider = provider

    def advice(self) -> str:
        """`; <what to change in the CI checkout>`, or nothing outside CI."""
        text = CHECKOUT_ADVICE.get(self.provider)
        return f"; {text}" if text else ""


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


def _fetch(repo: Path, log: FetchLog, *args: str, wanted: str = "what this shallow checkout lacks") -> bool:
    """True when the fetch worked, False when it did not (a ref or commit origin lacks);
    RemoteUnreachable when origin cannot be reached at all, naming `wanted` (what was fetched
    for: the ref the user typed, so a typo behind an unreachable origin is still named)."""
    command = ("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", *args)
    completed = _fetch_as_owner(repo, command)
    log.fetches.append("git " + " ".join(command) + ("" if completed.returncode == 0 else " (failed)"))
    if completed.returncode != 0 and not _remote_reachable(repo):
        raw_url = run_git(repo, "remote", "get-url", REMOTE, check=False).stdout.decode("utf-8", "replace").strip()
        url = _display_url(raw_url)
        detail = _git_reason(completed.stderr.decode("utf-8", "replace"))
        detail = f": {detail.replace(raw_url, url)}" if detail else ""
        raise RemoteUnreachable(
            f"cannot reach remote {REMOTE} ({url}) to fetch {wanted}{detail}; "
            "check the network or the remote and re-run"
        )
    return completed.returncode == 0


# git's words for a ref or commit origin does not have: no other user would fetch it either.
_MISSING_ON_ORIGIN = (b"couldn't find remote ref", b"not our ref", b"no such remote ref")


def _fetch_as_owner(repo: Path, command: tuple[str, ...]) -> subprocess.CompletedProcess[bytes]:
    """The fetch as the repository's owner when the gate runs as root in someone else's checkout
    (what it writes stays theirs). Should that fail (credentials only root has, root-owned files an
    older run left in .git), once more as root, and then everything root owns in the repository's
    git directory goes to its owner."""
    owner = owner_to_inherit(repo)
    completed = run_git(repo, *command, check=False, as_owner=owner is not None)
    if owner is None or completed.returncode == 0 or any(text in completed.stderr for text in _MISSING_ON_ORIGIN):
        return completed
    completed = run_git(repo, *command, check=False)
    git_directory = run_git(repo, "rev-parse", "--absolute-git-dir", check=False).stdout.decode("utf-8", "replace")
    if git_directory.strip():
        give_tree_to_owner(Path(git_directory.strip()), owner)
    return completed


def _git_reason(stderr: str) -> str:
    """git's own reason, from a message that spans lines ("fatal: '/x' does not appear to be a
    git repository", then "Please make sure ... / and the repository exists."): its first
    `fatal:` line, else its last line; never a sentence cut in half."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("fatal: "):
            return line.removeprefix("fatal: ")
    return lines[-1] if lines else ""


def ensure_commit(repo: Path, sha: str, source: str, log: FetchLog) -> None:
    """Make sure the commit `sha` (named by `source`) is in the repository, fetching it at
    depth 1 from origin when missing; a clear blocked error when it cannot be had."""
    if has_commit(repo, sha):
        return
    if (has_remote(repo) and _fetch(repo, log, "--depth=1", REMOTE, sha, wanted=f"commit {sha} (from {source})")
            and has_commit(repo, sha)):
        return
    raise BlockedError(
        f"commit {sha} (from {source}) is not in the checkout and could not be fetched from {REMOTE}"
        f"{log.advice()}"
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
        wanted = f"{branch!r} (from {source}), which is not a local ref"
        try:
            if _fetch(repo, log, "--depth=1", REMOTE, f"+refs/heads/{branch}:refs/remotes/{remote_ref}",
                      wanted=wanted):
                return remote_ref
            # A base that is a tag: CI fetches run with --no-tags, so fetch that one tag.
            if _fetch(repo, log, "--depth=1", REMOTE, f"+refs/tags/{branch}:refs/tags/{branch}", wanted=wanted):
                return f"refs/tags/{branch}"
        except RemoteUnreachable as error:  # perhaps a typo: the branches this clone knows
            raise RemoteUnreachable(f"{error}; {branches_note(repo, branch)}") from None
    if _has_ref(repo, f"refs/heads/{branch}"):
        return branch  # no such ref on origin, or no origin at all: the local branch stands in
    where = f"neither a local ref nor a branch or tag on {REMOTE}" if has_remote(repo) else (
        f"not a local ref (there is no remote {REMOTE})")
    raise BlockedError(f"{branch!r} (from {source}) is {where}; {branches_note(repo, branch)}{log.advice()}")


def existing_branches(repo: Path) -> list[str]:
    """The branches a base could name, local and on origin, the likeliest bases first."""
    names = _ref_names(run_git(repo, "for-each-ref", "--format=%(refname)", "refs/heads", f"refs/remotes/{REMOTE}",
                               check=False).stdout)
    if has_remote(repo):
        # A single-branch CI clone knows one remote branch: ask origin for the rest (reachable, the
        # fetch just before said so).
        listed = run_git(repo, "ls-remote", "--heads", REMOTE, check=False)
        if listed.returncode == 0:
            names |= _ref_names(b"\n".join(line.partition(b"\t")[2] for line in listed.stdout.splitlines()))
    likely = [name for name in LIKELY_BASES if name in names]
    return likely + sorted(names.difference(likely))


def _ref_names(listing: bytes) -> set[str]:
    names: set[str] = set()
    for line in listing.decode("utf-8", "replace").splitlines():
        for prefix in ("refs/heads/", f"refs/remotes/{REMOTE}/"):
            if line.startswith(prefix) and line != f"refs/remotes/{REMOTE}/HEAD":
                names.add(line.removeprefix(prefix))
    return names


def branches_note(repo: Path, typed: str | None = None) -> str:
    """The branches a base could be, for a message about a base (`typed`) that names nothing:
    the closest name first when it looks like a typo of one."""
    branches = existing_branches(repo)
    if not branches:
        return "the repository has no branches"
    shown = ", ".join(branches[:LISTED_BRANCHES])
    more = f" and {len(branches) - LISTED_BRANCHES} more" if len(branches) > LISTED_BRANCHES else ""
    guess = did_you_mean(typed, branches).removeprefix("; ") if typed else ""
    return f"{guess}{' ' if guess else ''}branches here: {shown}{more}; pass one with --base"


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
            f"{REMOTE} did not find one{log.advice()}"
        )
    raise UsageError(
        f"{describe} share no history (unrelated histories, no merge base); check the base branch"
    )
