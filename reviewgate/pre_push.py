"""`reviewgate run --pre-push`: review what a `git push` sends, ref by ref, whatever is checked out.

The refs come from pre-commit (`PRE_COMMIT_TO_REF` and friends, set by its pre-push stage) or,
when reviewgate is git's own pre-push hook, from the lines git writes on the hook's stdin
(githooks(5): `<local ref> <local sha> <remote ref> <remote sha>`). Each pushed ref is reviewed
as `--head <its commit>` against the remote branch it updates, or the default branch for a
branch new on the remote: the review reads commits only, never the working tree, so pushing a
branch you are not on is reviewed the same as pushing the one you are on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from reviewgate.ci.local import default_base
from reviewgate.errors import UsageError
from reviewgate.escaping import runner_line
from reviewgate.freeze.git import resolve_commit
from reviewgate.run_options import RunOptions
from reviewgate.text import printable

# What git writes for "no commit": the remote side of a new branch, the local side of a deletion.
NO_COMMIT = ("0" * 40, "0" * 64)
PRE_COMMIT_VARIABLES = ("PRE_COMMIT_TO_REF", "PRE_COMMIT_LOCAL_BRANCH")


@dataclass(frozen=True)
class PushedRef:
    """One ref a push updates. `remote_sha` is what the remote holds now (git's stdin), or
    None when pre-commit passed its own `from_ref` instead (`pre_commit_from`)."""

    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str | None = None
    pre_commit_from: str | None = None
    remote_name: str = "origin"

    @property
    def deletes(self) -> bool:
        return self.local_sha in NO_COMMIT

    def name(self) -> str:
        """`refs/heads/feature -> origin refs/heads/feature`, for every line about this ref."""
        return printable(f"{self.local_ref} -> {self.remote_name} {self.remote_ref}")


@dataclass(frozen=True)
class ReviewPlan:
    """The base one pushed ref is reviewed against, or why it is not reviewed (`skip`)."""

    ref: PushedRef
    base: str | None  # what the review takes as --base: a ref when one names the commit; None: skip
    why: str
    policy_base: str | None = None  # the default branch's commit, whose policy judges an update


def refs_from_pre_commit(environ: Mapping[str, str]) -> list[PushedRef]:
    """The ref pre-commit's pre-push stage names. pre-commit passes only the first ref of a push
    that updates several (pre_commit/commands/hook_impl.py), and none for a deletion; with no
    `PRE_COMMIT_TO_REF` (a push of a root commit, pre-commit's "all files") the local branch
    names the commit."""
    local_ref = environ.get("PRE_COMMIT_LOCAL_BRANCH", "")
    to_ref = environ.get("PRE_COMMIT_TO_REF") or local_ref
    if not to_ref:
        return []
    return [PushedRef(local_ref=local_ref or to_ref, local_sha=to_ref,
                      remote_ref=environ.get("PRE_COMMIT_REMOTE_BRANCH") or local_ref or to_ref,
                      pre_commit_from=environ.get("PRE_COMMIT_FROM_REF") or None,
                      remote_name=environ.get("PRE_COMMIT_REMOTE_NAME") or "origin")]


def refs_from_git(lines: str, remote_name: str = "origin") -> list[PushedRef]:
    """git's pre-push hook input, one ref per line; a line that is not four fields is refused."""
    refs: list[PushedRef] = []
    for line in lines.splitlines():
        if not line.strip():
            continue
        fields = line.rsplit(maxsplit=3)
        if len(fields) != 4:
            raise UsageError(f"--pre-push: {printable(line)!r} on stdin is not a pre-push line "
                             "(<local ref> <local sha> <remote ref> <remote sha>)")
        local_ref, local_sha, remote_ref, remote_sha = fields
        refs.append(PushedRef(local_ref, local_sha, remote_ref, remote_sha, remote_name=remote_name))
    return refs


def _remote_tracking(ref: PushedRef) -> str:
    return f"refs/remotes/{ref.remote_name}/{ref.remote_ref.removeprefix('refs/heads/')}"


def plan_review(repo: Path, ref: PushedRef) -> ReviewPlan:
    """Against what the remote branch holds when it exists, else the default branch (what a
    pull request of a new branch would target); a skip with its reason otherwise."""
    if ref.deletes:
        return ReviewPlan(ref, None, "deletes the remote ref: nothing to review")
    if resolve_commit(repo, ref.local_sha) is None:
        raise UsageError(f"--pre-push: {printable(ref.local_sha)!r} (pushed as {ref.name()}) is not a commit here")
    updated = _updated_commit(repo, ref)
    try:
        base_ref, _ = default_base(repo)
    except UsageError:  # no default branch anywhere: the first push of a repository's only branch
        base_ref = None
    if updated is not None:
        tracking = _remote_tracking(ref).removeprefix("refs/remotes/")
        # The branch's own remote tip holds the branch's config: the default branch's policy judges it.
        policy = resolve_commit(repo, base_ref) if base_ref else None
        policy_note = f"; the policy is the default branch {printable(base_ref)}'s" if policy and base_ref else ""
        return ReviewPlan(ref, _name_if_same(repo, tracking, updated) or updated,
                          f"the commits it adds to {printable(ref.remote_ref)}{policy_note}", policy)
    new = f"is new on {printable(ref.remote_name)}"
    if base_ref is None:
        return ReviewPlan(ref, None, f"{new} and there is no default branch to compare it with: nothing was reviewed")
    if resolve_commit(repo, base_ref) == resolve_commit(repo, ref.local_sha):
        return ReviewPlan(ref, None, f"{new} and it is the default branch {printable(base_ref)} itself, so there is "
                                     "no other branch to compare it with: nothing was reviewed")
    # A default branch this clone lacks (a single-branch clone) is fetched by the review itself.
    return ReviewPlan(ref, base_ref, f"a new branch on {printable(ref.remote_name)}: against the default branch "
                                     f"{printable(base_ref)}")


def _name_if_same(repo: Path, name: str, sha: str) -> str | None:
    """`name` when it names commit `sha`, so a review's lines read `origin/main...feature`."""
    return name if resolve_commit(repo, name) == sha else None


def _updated_commit(repo: Path, ref: PushedRef) -> str | None:
    """What the remote branch holds now, when this clone has that commit; None for a new branch."""
    if ref.remote_sha is not None:  # git's own line says exactly
        if ref.remote_sha in NO_COMMIT:
            return None
        found = resolve_commit(repo, ref.remote_sha)
        return found if found is not None else resolve_commit(repo, _remote_tracking(ref))
    # pre-commit's from_ref is the remote's commit for an update, or (a new branch) the parent of
    # the first commit no remote branch has: only the remote-tracking branch tells them apart.
    if resolve_commit(repo, _remote_tracking(ref)) is None:
        return None
    return resolve_commit(repo, ref.pre_commit_from) if ref.pre_commit_from else None


def run_pre_push(options: RunOptions, refs: list[PushedRef], stdout: TextIO,
                 review: Callable[[RunOptions, TextIO], int]) -> int:
    """Each pushed ref reviewed in turn (`review` runs the gate); the worst exit code stops the push."""
    from reviewgate.freeze.bundle import workspace_root

    repo = workspace_root(options.start, False)
    if not refs:
        stdout.write("reviewgate: pre-push: nothing is pushed: nothing to review\n")
        return 0
    # The hook reviews commits, not the working tree: the verify (which runs the checkout) is CI's.
    options = options._replace(overrides=options.overrides._replace(no_verify=True))
    worst = 0
    for ref in refs:
        plan = plan_review(repo, ref)
        if plan.base is None:
            stdout.write(f"reviewgate: pre-push: {runner_line(ref.name())} {runner_line(plan.why)}\n")
            continue
        stdout.write(f"reviewgate: pre-push: reviewing {runner_line(ref.name())}: {runner_line(plan.why)}\n")
        stdout.flush()
        head = _name_if_same(repo, ref.local_ref, ref.local_sha) or ref.local_sha
        code = review(options._replace(base=plan.base, head=head, policy_base=plan.policy_base), stdout)
        stdout.write(f"reviewgate: pre-push: {runner_line(ref.name())}: exit {code}"
                     f"{'' if code == 0 else ' (the push is refused)'}\n")
        worst = max(worst, code)
    return worst


def pushed_refs(environ: Mapping[str, str], stdin: TextIO) -> list[PushedRef]:
    """pre-commit's variables when it set them, else git's lines on stdin; neither is a usage error."""
    if any(environ.get(name) for name in PRE_COMMIT_VARIABLES):
        return refs_from_pre_commit(environ)
    if stdin.isatty():
        raise UsageError("--pre-push: no pushed refs: run it as a pre-push hook (pre-commit sets PRE_COMMIT_TO_REF; "
                         "git writes the pushed refs on the hook's stdin)")
    return refs_from_git(stdin.read())


__all__ = ["PushedRef", "ReviewPlan", "plan_review", "pushed_refs", "refs_from_git",
           "refs_from_pre_commit", "run_pre_push"]
