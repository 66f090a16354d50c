"""Base and head when no CI says: flags, else the upstream's default branch, else main/master."""

from __future__ import annotations

from pathlib import Path

from reviewgate.errors import UsageError
from reviewgate.freeze.git import git_text, resolve_commit, run_git

# Tried in order when origin/HEAD is not set (a clone made with --no-checkout, or by hand).
FALLBACK_BRANCHES = ("origin/main", "origin/master", "main", "master")


def is_detached(repo: Path) -> bool:
    return run_git(repo, "symbolic-ref", "--quiet", "HEAD", check=False).returncode != 0


def default_base(repo: Path) -> tuple[str, str]:
    """origin/HEAD's branch when the clone knows it, else the first of origin/main,
    origin/master, main, master that exists, else the default branch origin names (a `trunk`
    or `develop` default in a clone that never recorded origin/HEAD, or a single-branch clone
    that lacks it); with where it came from."""
    completed = run_git(repo, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False)
    ref = completed.stdout.decode("utf-8", "surrogateescape").strip().removeprefix("refs/remotes/")
    if completed.returncode == 0 and resolve_commit(repo, ref) is not None:  # not a dangling origin/HEAD
        return ref, "origin/HEAD (the upstream's default branch)"
    for candidate in FALLBACK_BRANCHES:
        if resolve_commit(repo, candidate) is not None:
            return candidate, f"default ({candidate}: origin/HEAD is not set)"
    asked = _origins_default_branch(repo)
    if asked is not None:
        branch, reachable = asked
        if branch is not None:
            return branch, f"origin's default branch ({branch}, asked origin: origin/HEAD is not set here)"
        if not reachable:
            return "main", "default (main: origin/HEAD is not set and origin cannot be asked)"
    if is_detached(repo):
        raise UsageError(
            f"{repo}: HEAD is detached and no default branch (origin/HEAD, main, master) exists; "
            "pass --base REF"
        )
    from reviewgate.freeze.shallow import existing_branches  # only when no default branch is found

    current = git_text(repo, "branch", "--show-current")
    others = [name for name in existing_branches(repo) if name != current]
    if not others:
        suggestion = "there is no other branch: pass --base REF"
    else:
        suggestion = f"pass --base {others[0]}" + (f" (branches here: {', '.join(others)})" if len(others) > 1 else "")
    raise UsageError(
        f"{repo}: no default branch to review against: origin/HEAD is not set and none of "
        f"{', '.join(FALLBACK_BRANCHES)} exists; {suggestion}"
    )


def _origins_default_branch(repo: Path) -> tuple[str | None, bool] | None:
    """(the branch origin's HEAD names, whether origin answered), or None without an origin.
    One `ls-remote`, asked only when no local ref says which branch is the default."""
    if "origin" not in run_git(repo, "remote", check=False).stdout.decode("utf-8", "replace").split():
        return None
    listed = run_git(repo, "ls-remote", "--symref", "origin", "HEAD", check=False)
    if listed.returncode != 0:
        return None, False
    for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines():
        target, _, name = line.partition("\t")
        if name == "HEAD" and target.startswith("ref: refs/heads/"):
            return target.removeprefix("ref: refs/heads/"), True
    return None, True


def check_repository(repo: Path, explicit_base: str | None, checked_out: str | None) -> None:
    """Refuse the checkouts a review cannot make sense of, with one clear line each.
    `checked_out`: the commit HEAD names (None on a branch with no commits yet), asked of git by
    the caller with the refs it resolves too."""
    if checked_out is None and not run_git(repo, "rev-list", "-n", "1", "--all").stdout.strip():
        raise UsageError(f"{repo}: the repository has no commits yet: there is nothing to review")
    # A submodule's `.git` is a file (pointing into the superproject's modules), never a
    # directory: only then is git asked, which costs a look through the superproject's index.
    superproject = (
        git_text(repo, "rev-parse", "--show-superproject-working-tree") if (repo / ".git").is_file() else ""
    )
    if superproject and explicit_base is None:
        raise UsageError(
            f"{repo}: this is a submodule checkout of {superproject}; run reviewgate in the "
            "superproject, or pass --base REF to review the submodule's own history"
        )
