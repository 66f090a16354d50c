"""Document bundles (the standalone mode): freeze a set of plan, spec or documentation
files, not a diff, so the same reviewers, report and exit codes apply.

Each document becomes an ADDED FileChange whose every line is added, so reviewers and lenses
work unchanged. Order is deterministic (sorted by path, duplicates dropped) and the bundle
hash covers each path with the SHA-256 of its bytes. No git fixed point: head and merge base
are empty and `mode` is "bundle".
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from reviewgate.errors import UsageError
from reviewgate.freeze.binary import BINARY_SNIFF_BYTES
from reviewgate.freeze.diff import ChangeStatus, DiffLine, FileChange, Hunk, LineKind, line_text
from reviewgate.freeze.exclusions import ExcludedFile, ExclusionRules
from reviewgate.freeze.freeze import DocumentIdentity, FrozenTarget
from reviewgate.freeze.git import GitFailure, repository_root


def workspace_root(start: Path, bundle: bool) -> Path:
    """The repository root; for a bundle outside any repository, the start directory
    (documents need no git fixed point)."""
    if not bundle:
        return repository_root(start)
    try:
        return repository_root(start)
    except (UsageError, GitFailure):
        if not start.is_dir():
            raise UsageError(f"--repo: {start}: not a directory") from None
        return start.resolve()


def reject_with_bundle(base: str | None, head: str | None, include_dirty: bool) -> None:
    """A bundle has no git fixed point: flags that choose one would be silently ignored."""
    given = [
        flag
        for flag, value in (("--base", base), ("--head", head), ("--include-dirty", include_dirty))
        if value
    ]
    if given:
        raise UsageError(
            f"--bundle: reviews documents, not a diff; it cannot be combined with {', '.join(given)}"
        )


def _display_path(document: Path, workspace: Path) -> str:
    resolved = document.resolve()
    try:
        return resolved.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def document_change(path: str, data: bytes) -> FileChange:
    """A document as a file added whole: one hunk, every line added, CR bytes kept."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    is_binary = b"\0" in data[:BINARY_SNIFF_BYTES]
    hunks: tuple[Hunk, ...] = ()
    if lines and not is_binary:
        added = tuple(
            DiffLine(LineKind.ADDED, line_text(raw, first_line=number == 1), None, number)
            for number, raw in enumerate(lines, 1)
        )
        hunks = (Hunk(0, 0, 1, len(added), added),)
    return FileChange(
        path=path,
        old_path=None,
        status=ChangeStatus.ADDED,
        is_binary=is_binary,
        new_mode="100644",
        hunks=hunks,
    )


def bundle_hash(documents: Sequence[DocumentIdentity]) -> str:
    digest = hashlib.sha256()
    for document in documents:
        digest.update(
            document.path.encode("utf-8", "surrogateescape") + b"\0" + document.sha256.encode() + b"\n"
        )
    return digest.hexdigest()


def freeze_bundle(
    workspace: Path, paths: Sequence[Path], rules: ExclusionRules | None = None
) -> FrozenTarget:
    """Read every document once, in path order, and freeze them. A missing file or a
    directory is a usage error naming it; nothing is half-frozen."""
    if not paths:
        raise UsageError("--bundle: expected at least one document")
    limits = rules or ExclusionRules()
    contents: dict[str, bytes] = {}
    for document in paths:
        if not document.exists():
            raise UsageError(f"--bundle: {document}: no such file")
        if not document.is_file():
            raise UsageError(f"--bundle: {document}: expected a file, got a directory or special file")
        try:
            contents[_display_path(document, workspace)] = document.read_bytes()
        except OSError as error:
            raise UsageError(f"--bundle: {document}: cannot read: {error.strerror}") from None
    identities = tuple(
        DocumentIdentity(path, hashlib.sha256(data).hexdigest(), len(data))
        for path, data in sorted(contents.items())
    )
    files: list[FileChange] = []
    excluded: list[ExcludedFile] = []
    for identity in identities:
        change = document_change(identity.path, contents[identity.path])
        # The user chose these documents, so policy exclusions (lock files, generated) do not
        # apply; what cannot be reviewed at all (binary, over the size cap) is still listed.
        reason = limits.unreviewable_reason(change)
        if reason is None:
            files.append(change)
        else:
            excluded.append(ExcludedFile(identity.path, reason))
    return FrozenTarget(
        repo_root=str(workspace),
        base_ref="",
        base_sha="",
        merge_base="",
        head_ref="",
        head_sha="",
        base_source="bundle (no git fixed point)",
        patch_sha256=bundle_hash(identities),
        files=tuple(files),
        excluded=tuple(excluded),
        head_source="bundle (no git fixed point)",
        mode="bundle",
        documents=identities,
        snapshot=contents,
    )
