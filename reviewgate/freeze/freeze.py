"""Freeze what is reviewed: base, merge-base, head, the filtered diff and its canonical hash."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from reviewgate.ci.context import CiContext
from reviewgate.ci.local import check_repository, default_base
from reviewgate.errors import BlockedError, UsageError
from reviewgate.freeze.binary import binary_by_attributes, text_paths, with_text_diffs
from reviewgate.freeze.commit_names import resolve_commits
from reviewgate.freeze.diff import OPENING_LINES, ChangeStatus, FileChange
from reviewgate.freeze.diff_files import iter_diff_stream
from reviewgate.freeze.exclusions import (
    ExcludedFile,
    ExclusionRules,
    is_oversized_text,
    needs_header,
    read_for_secrets,
    split_files,
)
from reviewgate.freeze.git import (
    SnapshotReader,
    TreeReader,
    read_file_heads,
    resolve_commit,
    shared_tree_reader,
    stream_git,
    working_tree,
)
from reviewgate.freeze.head_reads import HeadReads
from reviewgate.freeze.shallow import (
    FetchLog,
    RemoteUnreachable,
    ensure_commit,
    ensure_remote_branch,
    find_merge_base,
)
from reviewgate.text import printable

# Fixed context so the canonical patch does not depend on the user's diff.context.
DIFF_CONTEXT_LINES = 3
# A ref the user typed that names nothing is a usage error (exit 2); a commit CI names that
# cannot be fetched means the review could not be done (exit 3, never approval).
EXPLICIT_SOURCES = ("--base", "--head")
# Enough of a file's start to hold a generated-code header (diff.OPENING_LINES lines).
HEADER_BYTES = 2048


class DocumentIdentity(NamedTuple):
    """One document of a bundle: where it is and what its bytes hash to (ordered file
    identities; the frozen record never embeds the raw bytes)."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class FrozenTarget:
    """The change as it is reviewed: refs and commits resolved once, the patch hash and its files."""

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
    head_source: str = "HEAD"
    mode: str = "diff"  # diff | bundle
    # Local runs with --include-dirty: the tree reviewed (head plus uncommitted changes) and
    # the hash of the uncommitted part; with head_sha it is the dirty tree's identity.
    head_tree: str | None = None
    dirty_sha256: str | None = None
    shallow_fetches: tuple[str, ...] = field(default_factory=tuple)
    documents: tuple[DocumentIdentity, ...] = field(default_factory=tuple)
    # A bundle's frozen bytes, for the reviewers' reader; kept out of every record.
    snapshot: Mapping[str, bytes] = field(default_factory=dict, compare=False, repr=False)
    # Text files over the per-file cap (also listed in `excluded`): kept from the model reviewers
    # and the structural lenses, read by the builtin line lenses (reviewers/builtin/lenses/oversized.py).
    oversized: tuple[FileChange, ...] = field(default_factory=tuple, compare=False, repr=False)
    # Text files left out by a built-in exclusion the change can bring on itself (also listed in
    # `excluded`): only the secrets lens reads them (exclusions.read_for_secrets).
    left_out: tuple[FileChange, ...] = field(default_factory=tuple, compare=False, repr=False)
    # Gitignore-style patterns of test input outside the usual test places, from the target side's
    # tooling files (freeze/tooling.py): read by the lenses as tests, not as product code.
    test_inputs: tuple[str, ...] = field(default_factory=tuple, compare=False, repr=False)
    # The files the target side's package.json `bin` installs: a top-level `bin/` file it does not
    # name is the repository's own tooling (reviewers/builtin/repository_tooling.py).
    shipped_programs: tuple[str, ...] = field(default_factory=tuple, compare=False, repr=False)

    @property
    def is_empty(self) -> bool:
        return not self.files and not self.excluded

    def file(self, path: str) -> FileChange | None:
        for change in self.files:
            if change.path == path:
                return change
        return None

    def identity(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "mode": self.mode,
            "base_ref": self.base_ref,
            "base_sha": self.base_sha,
            "merge_base": self.merge_base,
            "head_ref": self.head_ref,
            "head_sha": self.head_sha,
            "base_source": self.base_source,
            "head_source": self.head_source,
            "patch_sha256": self.patch_sha256,
            "dirty_sha256": self.dirty_sha256,
            "shallow_fetches": list(self.shallow_fetches),
        }
        if self.mode == "bundle":
            data["bundle_sha256"] = self.patch_sha256
            data["documents"] = [
                {"path": printable(item.path), "sha256": item.sha256, "size": item.size}
                for item in self.documents
            ]
        return data


def reader_for(target: FrozenTarget) -> TreeReader:
    """What reviewers read files through: the bundle's frozen bytes, the dirty tree, or head."""
    repo = Path(target.repo_root)
    if target.mode == "bundle":
        return SnapshotReader(repo, dict(target.snapshot))
    return shared_tree_reader(target.repo_root, target.head_tree or target.head_sha)


def base_reader_for(target: FrozenTarget) -> TreeReader | None:
    """The files as they were at the merge base (what the branch changed them from); None for a
    bundle, which has no base side."""
    if target.mode == "bundle" or not target.merge_base:
        return None
    return shared_tree_reader(target.repo_root, target.merge_base)


def _named(ref: str, sha: str) -> str:
    return sha if ref == sha else f"{printable(ref)} = {sha}"


def describe(target: FrozenTarget) -> list[str]:
    """What was resolved and why, one line each, for `reviewgate freeze` to print."""
    if target.mode == "bundle":
        return [f"bundle of {len(target.documents)} document(s), bundle hash {target.patch_sha256}"]
    lines = [
        f"base {_named(target.base_ref, target.base_sha)} (from {target.base_source})",
        f"head {_named(target.head_ref, target.head_sha)} (from {target.head_source})",
        f"merge base {target.merge_base}; {len(target.files)} file(s) reviewed, "
        f"{len(target.excluded)} not reviewed",
    ]
    if target.dirty_sha256:
        lines.append(
            f"uncommitted changes included: tree {target.head_tree}, dirty hash {target.dirty_sha256}"
        )
    lines += [f"fetched: {item}" for item in target.shallow_fetches]
    return lines


def resolve_base(repo: Path, explicit: str | None, ci: CiContext) -> tuple[str, str]:
    """The base ref and the reason it was chosen: an explicit flag always wins, then the CI
    event's commit, then its branch (merge-base with it), then the local default."""
    if explicit:
        return explicit, "--base"
    if ci.base_sha:
        return ci.base_sha, ci.base_source or ci.provider
    if ci.base_branch and ci.provider != "local":
        return ci.base_branch, ci.base_source or f"{ci.provider}: default branch"
    return default_base(repo)


def _commit_for(repo: Path, ref: str, source: str, log: FetchLog, *, branch_fallback: bool,
                resolved: str | None = None) -> str:
    """The commit a ref names, fetching a full SHA or (for a base) a branch from origin when the
    shallow checkout lacks it. `resolved`: the commit the caller already found it names."""
    sha = resolved or resolve_commit(repo, ref)
    if sha is not None:
        return sha
    try:
        if _looks_like_sha(ref):
            ensure_commit(repo, ref.lower(), source, log)
            return ref.lower()
        if branch_fallback and not ref.startswith("-"):
            remote_ref = ensure_remote_branch(repo, ref, source, log)
            found = resolve_commit(repo, remote_ref)
            if found is not None:
                return found
    except BlockedError as error:
        if source in EXPLICIT_SOURCES and not isinstance(error, RemoteUnreachable):
            raise UsageError(str(error)) from None  # the user's own flag names nothing: exit 2
        raise
    raise UsageError(
        f"{source}: {ref!r} does not name a commit in {repo}; fetch it or pass --base/--head REF"
    )


def _looks_like_sha(ref: str) -> bool:
    return len(ref) in (40, 64) and all(char in "0123456789abcdefABCDEF" for char in ref)


def canonical_patch_hash(files: list[FileChange]) -> str:
    """A hash of the change itself, independent of git version, index lines and base position:
    files sorted by path, each with status, paths, modes and its hunk bodies (no line numbers)."""
    digest = hashlib.sha256()
    for change in sorted(files, key=lambda item: item.path):
        digest.update(change.canonical_digest)
    return digest.hexdigest()


def diff_between(
    repo: Path,
    merge_base: str,
    head: str,
    as_text: tuple[str, ...] = (),
    read_ahead: Callable[[FileChange], bool] | None = None,
    arrived: Callable[[FileChange], None] | None = None,
) -> list[FileChange]:
    """Three-dot semantics: the caller passes the merge base. `-O/dev/null` cancels a user's
    diff.orderFile; the hash sorts by path anyway. `as_text`: only these paths, with `--text`
    (freeze/binary.py). `read_ahead`: the files whose added lines are decoded as they arrive.
    `arrived`: told of each file as it arrives (not of the re-read ones, freeze/binary.py)."""
    files: list[FileChange] = []
    chunks = stream_git(
        repo,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--find-renames",
        "--find-copies",
        f"--unified={DIFF_CONTEXT_LINES}",
        "--full-index",
        "--submodule=short",
        "-O/dev/null",
        *(["--text"] if as_text else []),
        merge_base,
        head,
        "--",
        *(f":(top,literal){path}" for path in as_text),
        tree_only=True,  # no attribute of the checkout decides what is text (git.py, _prepared)
    )
    for change in iter_diff_stream(chunks):
        # Hashed and sized now, while git is still writing the rest of the diff.
        change.canonical_digest  # noqa: B018 - computes and caches the property
        change.stats  # noqa: B018
        # Every lens asks for the added lines of every file it reviews: decoded here, this process
        # would otherwise wait for git, rather than alone after the freeze (0.15 s at +300k lines).
        if read_ahead is not None and read_ahead(change):
            change.added_line_count()
        if arrived is not None:
            arrived(change)
        files.append(change)
    misread = [] if as_text else binary_by_attributes(repo, merge_base, head, files)
    if misread:
        files = with_text_diffs(files, misread, diff_between(repo, merge_base, head, text_paths(misread)))
    return files


def _reviewed_by_path(rules: ExclusionRules, change: FileChange) -> bool:
    """Whether the file is reviewed as far as its diff tells (split_files decides, with its header)."""
    return rules.unreviewable_reason(change) is None and rules.reason_for(change) is None


def _wants_header(rules: ExclusionRules, change: FileChange) -> bool:
    return needs_header(change) and rules.unreviewable_reason(change) is None and rules.reason_for(change) is None


def _header_asked(rules: ExclusionRules, reads: HeadReads, change: FileChange) -> None:
    """A file of the diff, just arrived: its head side is read now when its header will be wanted."""
    if _wants_header(rules, change):
        reads.ask(change.path)


def _headers(
    repo: Path, tree: str, files: list[FileChange], rules: ExclusionRules, for_review: bool, reads: HeadReads
) -> dict[str, str]:
    """First bytes at head of the files whose generated-code header decides their fate (those the
    diff stream asked `reads` for already, read while it streamed)."""
    wanted = [change.path for change in files if _wants_header(rules, change)]
    # The whole files come back from git anyway: kept for the reviewers, who read them at head next.
    keep_in = shared_tree_reader(str(repo), tree) if for_review else None
    heads = read_file_heads(repo, tree, wanted, HEADER_BYTES, keep_in, reads.whole_files(wanted)) if wanted else {}
    # The same opening the diff would show: the first lines, not every line in the bytes read.
    return {path: "\n".join(text.split("\n", OPENING_LINES)[:OPENING_LINES]) for path, text in heads.items()}


class ResolvedRefs(NamedTuple):
    """Base, merge base and head as commits, before any diff: the policy is read at the merge
    base (the target side) before the diff is split by that policy's exclusions."""

    base_ref: str
    base_sha: str
    base_source: str
    head_ref: str
    head_sha: str
    head_source: str
    merge_base: str
    shallow_fetches: tuple[str, ...] = ()


def resolve_refs(repo: Path, *, base: str | None, head: str | None = None, ci: CiContext | None = None,
                 read_ahead: tuple[str, ...] = ()) -> ResolvedRefs:
    """Base, merge base and head (flags win, then CI, then local defaults), fetching what a
    shallow checkout lacks. `head` None means the CI's head, else HEAD. `read_ahead`: files read
    at HEAD and the named base with them (commit_names.resolve_commits)."""
    context = ci or CiContext(provider="local")
    # HEAD and a base named up front (the flag, the CI's commit) in one git process.
    named_base = base or context.base_sha
    if named_base:
        checked_out, named_base_sha = resolve_commits(repo, ["HEAD", named_base], read_ahead)
    else:
        checked_out, named_base_sha = resolve_commit(repo, "HEAD"), None
    check_repository(repo, base, checked_out)
    log = FetchLog(provider=context.provider)
    if head:
        head_ref, head_source = head, "--head"
    elif context.head_sha:
        head_ref, head_source = context.head_sha, context.head_source or context.provider
    else:
        head_ref, head_source = "HEAD", "checked-out HEAD"
    if head_ref == "HEAD" and checked_out is not None:
        head_sha = checked_out
    else:
        head_sha = _commit_for(repo, head_ref, head_source, log, branch_fallback=False)
    base_ref, base_source = resolve_base(repo, base, context)
    if (
        not base
        and not context.base_sha
        and base_ref == context.base_branch
        and not _looks_like_sha(base_ref)
    ):
        # A branch CI names: origin's copy, never a stale local branch of that name.
        base_ref = ensure_remote_branch(repo, base_ref, base_source, log)
    base_sha = _commit_for(repo, base_ref, base_source, log, branch_fallback=True,
                           resolved=named_base_sha if base_ref == named_base else None)
    merge_base = find_merge_base(repo, base_sha, head_sha, f"base {base_ref!r} and head {head_ref!r}", log)
    return ResolvedRefs(base_ref, base_sha, base_source, head_ref, head_sha, head_source, merge_base,
                        tuple(log.fetches))


def freeze(
    repo: Path,
    *,
    base: str | None,
    head: str | None = None,
    ci: CiContext | None = None,
    rules: ExclusionRules | None = None,
    include_dirty: bool = False,
    refs: ResolvedRefs | None = None,
    test_inputs: tuple[str, ...] = (),
    shipped_programs: tuple[str, ...] = (),
    for_review: bool = False,
) -> FrozenTarget:
    """Freeze the diff between the refs (resolved here unless `refs` already holds them).
    `for_review`: a review follows, so the freeze keeps what it read and decodes what it will read."""
    rules = rules or ExclusionRules()
    refs = refs or resolve_refs(repo, base=base, head=head, ci=ci)
    head_sha, merge_base = refs.head_sha, refs.merge_base
    head_tree: str | None = None
    dirty_sha256: str | None = None
    if include_dirty:
        if resolve_commit(repo, "HEAD") != head_sha:
            raise UsageError(
                "--include-dirty: the working tree sits on HEAD; it cannot be combined with another --head"
            )
        tree = working_tree(repo, rules.own_directories)
        dirty_files = diff_between(repo, head_sha, tree)
        if dirty_files:
            head_tree, dirty_sha256 = tree, canonical_patch_hash(dirty_files)
    # Reviewed next (`for_review`): what every reviewer reads is made now, while git is at work.
    read_ahead = partial(_reviewed_by_path, rules) if for_review else None
    reads = HeadReads(repo, head_tree or head_sha)
    try:
        every_file = diff_between(repo, merge_base, head_tree or head_sha, read_ahead=read_ahead,
                                  arrived=partial(_header_asked, rules, reads))
        headers = _headers(repo, head_tree or head_sha, every_file, rules, for_review, reads)
    finally:
        reads.stop()
    reviewed, excluded = split_files(every_file, rules, headers)
    return FrozenTarget(
        repo_root=str(repo),
        base_ref=refs.base_ref,
        base_sha=refs.base_sha,
        merge_base=merge_base,
        head_ref=refs.head_ref,
        head_sha=head_sha,
        base_source=refs.base_source,
        patch_sha256=canonical_patch_hash(every_file),
        files=tuple(reviewed),
        excluded=tuple(excluded),
        head_source=refs.head_source,
        head_tree=head_tree,
        dirty_sha256=dirty_sha256,
        shallow_fetches=refs.shallow_fetches,
        oversized=tuple(change for change in every_file if is_oversized_text(change, rules)),
        left_out=_read_for_secrets(every_file, excluded),
        test_inputs=test_inputs,
        shipped_programs=shipped_programs,
    )


def _read_for_secrets(files: list[FileChange], excluded: list[ExcludedFile]) -> tuple[FileChange, ...]:
    reasons = {item.path: item.reason for item in excluded}
    return tuple(
        change
        for change in files
        if change.status is not ChangeStatus.DELETED
        and not change.is_binary
        and read_for_secrets(reasons.get(change.path, ""))
    )


__all__ = ["DocumentIdentity", "FrozenTarget", "ResolvedRefs", "default_base", "describe", "freeze", "reader_for",
           "resolve_refs"]
