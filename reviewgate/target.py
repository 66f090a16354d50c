"""Freeze what is reviewed: base, merge-base, head, the filtered diff and its canonical hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewgate.ci.context import CiContext
from reviewgate.diff import FileChange, parse_diff
from reviewgate.errors import UsageError
from reviewgate.exclusions import ExcludedFile, ExclusionRules, split_files
from reviewgate.git import GitFailure, git_text, resolve_commit, run_git

# Fixed context so the canonical patch does not depend on the user's diff.context.
DIFF_CONTEXT_LINES = 3


@dataclass(frozen=True)
class FrozenTarget:
    repo_root: str
    base_ref: str
    base_sha: str
    merge_base: str
    head_ref: str
    head_sha: str
    base_source: str
    patch_sha256: str
    files: tuple[FileChange, ...] = field(default_factory=tuple)
    excluded: tuple[ExcludedFile, ...] = field(default_factory=tuple)

    @property
    def is_empty(self) -> bool:
        return not self.files and not self.excluded

    def file(self, path: str) -> FileChange | None:
        for change in self.files:
            if change.path == path:
                return change
        return None

    def identity(self) -> dict[str, Any]:
        return {
            "base_ref": self.base_ref,
            "base_sha": self.base_sha,
            "merge_base": self.merge_base,
            "head_ref": self.head_ref,
            "head_sha": self.head_sha,
            "base_source": self.base_source,
            "patch_sha256": self.patch_sha256,
        }


def default_base(repo: Path) -> tuple[str, str]:
    """origin/HEAD's branch when the clone knows it, else `main`; with where it came from."""
    completed = run_git(repo, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False)
    if completed.returncode == 0:
        ref = completed.stdout.decode().strip().removeprefix("refs/remotes/")
        return ref, "origin/HEAD"
    return "main", "default (main)"


def resolve_base(repo: Path, explicit: str | None, ci: CiContext) -> tuple[str, str]:
    """The base ref and the reason it was chosen: an explicit flag always wins."""
    if explicit:
        return explicit, "--base"
    if ci.base_sha:
        return ci.base_sha, ci.base_source or ci.provider
    return default_base(repo)


def canonical_patch_hash(files: list[FileChange]) -> str:
    """A hash of the change itself, independent of git version, index lines and base position:
    files sorted by path, each with status, paths, modes and its hunk bodies."""
    digest = hashlib.sha256()
    for change in sorted(files, key=lambda item: item.path):
        header = [change.path, change.status.value, change.old_path or "", change.old_mode or "",
                  change.new_mode or "", "binary" if change.is_binary else "text"]
        digest.update("\0".join(header).encode("utf-8", "surrogateescape") + b"\n")
        for hunk in change.hunks:
            digest.update(b"@@\n")
            for line in hunk.lines:
                digest.update(line.kind.value.encode() + line.text.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def diff_between(repo: Path, merge_base: str, head_sha: str) -> list[FileChange]:
    patch = run_git(
        repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--find-copies",
        f"--unified={DIFF_CONTEXT_LINES}", "--full-index", "--submodule=short", merge_base, head_sha, "--",
    ).stdout
    return parse_diff(patch)


def freeze(
    repo: Path,
    *,
    base: str | None,
    head: str = "HEAD",
    ci: CiContext | None = None,
    rules: ExclusionRules | None = None,
) -> FrozenTarget:
    context = ci or CiContext(provider="local")
    base_ref, base_source = resolve_base(repo, base, context)
    head_sha = resolve_commit(repo, head)
    if head_sha is None:
        raise UsageError(f"--head: {head!r} does not name a commit in {repo}")
    base_sha = resolve_commit(repo, base_ref)
    if base_sha is None:
        raise UsageError(f"base {base_ref!r} (from {base_source}) does not name a commit; fetch it or pass --base REF")
    try:
        merge_base = git_text(repo, "merge-base", base_sha, head_sha)
    except GitFailure:
        raise UsageError(
            f"base {base_ref!r} and head {head!r} share no history (no merge base); "
            "check the base branch, or fetch full history (fetch-depth: 0)"
        ) from None
    every_file = diff_between(repo, merge_base, head_sha)
    reviewed, excluded = split_files(every_file, rules or ExclusionRules())
    return FrozenTarget(
        repo_root=str(repo),
        base_ref=base_ref,
        base_sha=base_sha,
        merge_base=merge_base,
        head_ref=head,
        head_sha=head_sha,
        base_source=base_source,
        patch_sha256=canonical_patch_hash(every_file),
        files=tuple(reviewed),
        excluded=tuple(excluded),
    )
