"""A read-only export of the head tree for an agent CLI, and fingerprints that catch mutation.

The command reviewer "runs in a fresh read-only snapshot of the head tree ... from
which the files the reviewer may not read are removed; the snapshot and the real checkout
are hashed before and after, and any change is a reviewer mutation: verdict blocked".

The agent CLIs take their settings and top-priority instructions from the tree they run in
(`.claude/settings.json` hooks and `env`, `.mcp.json` servers, `CLAUDE.md`, `AGENTS.md`, ...): in
the snapshot every such path, and every file the base's instruction files import (`@path`), is
the merge base's version, or absent when the base has none, so the branch under review never
configures or instructs the agent that judges it.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import stat
import unicodedata
from collections.abc import Set as AbstractSet
from pathlib import Path

from reviewgate.freeze.git import read_blobs, run_git
from reviewgate.freeze.git_control import control_digests
from reviewgate.reviewers.model.withheld import withheld_reason

_READ_ONLY_FILE = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
_READ_ONLY_DIRECTORY = _READ_ONLY_FILE | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


# Where agent CLIs read project settings and instructions, at any level of the tree: a path with
# one of these names as any of its parts (compared without case: macOS and Windows runners).
# `.env`: Gemini CLI loads the first one up from its working directory into its environment.
AGENT_SETTINGS_NAMES = frozenset({
    ".claude", ".mcp.json", ".codex", ".agents", ".gemini", ".cursor", ".cursorrules", ".env",
    "claude.md", "claude.local.md", "agents.md", "agents.override.md", "agents.local.md",
    "gemini.md", "gemini.local.md",
})


def is_agent_settings(path: str) -> bool:
    """Whether `path` is (or lies inside) an agent CLI's project settings or instruction file."""
    return any(not AGENT_SETTINGS_NAMES.isdisjoint(_spellings(part)) for part in path.split("/"))


def _spellings(name: str) -> set[str]:
    """The lower-case ASCII names a case-insensitive file system takes `name` for: NTFS compares
    upper cases (`ı` is `I`), APFS Unicode case foldings (`ſ` is `s`); compatibility forms too."""
    return {unicodedata.normalize("NFKC", name).casefold(), name.upper().lower()}


def settings_above(directory: Path) -> list[str]:
    """Agent settings and instruction files in the directories above `directory`, and `.git`
    there (it makes that directory the project root Codex and Gemini CLI read AGENTS.md and
    GEMINI.md down from): Claude Code reads CLAUDE.md in every directory up to /, whatever its
    flags. The snapshot lies in the temp dir, which the verify, as any user, can write."""
    found: list[str] = []
    for parent in Path(os.path.realpath(directory)).parents:
        try:
            with os.scandir(parent) as entries:
                found += [os.path.join(parent, entry.name) for entry in entries
                          if not (AGENT_SETTINGS_NAMES | {".git"}).isdisjoint(_spellings(entry.name))]
        except OSError:  # a directory the gate cannot list: nor can the agent's uid
            continue
    return sorted(found)


def export_snapshot(repo: Path, commit: str, destination: Path, branch_paths: AbstractSet[str],
                    settings_base: str | None = None, replaced: list[str] | None = None) -> list[str]:
    """Write `commit`'s tree into `destination` from its blobs (no .git, nothing of the real
    checkout, no `export-ignore` or `export-subst` from the branch's .gitattributes), remove the
    withheld files, make it read-only; returns the paths left out.

    With `settings_base` (the merge base), every agent settings path (AGENT_SETTINGS_NAMES) is
    taken from that commit instead: the branch's own are left out (in the list returned) and the
    base's written; `replaced` receives the paths whose base version was used.

    A symbolic link is kept only when what it points to stays inside the snapshot: a committed
    `leak -> /etc/passwd` or `-> ../../secrets` is left out, so the agent cannot read a file of
    the machine through it."""
    destination.mkdir(parents=True)
    root = destination.resolve()
    files, links, left_out = _tree_entries(repo, commit)
    imported: set[str] = set()
    if settings_base is not None:
        files, links, own, imported = _with_base_settings(repo, settings_base, files, links, left_out)
        left_out["agent settings"] = own

    def from_base(path: str) -> bool:
        return settings_base is not None and (is_agent_settings(path) or path in imported)

    written_from_base: list[str] = []
    for batch in _batches(files):
        for (mode, path, _, _), data in zip(batch, read_blobs(repo, [sha for _, _, sha, _ in batch]), strict=True):
            target = root / path
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                # Every link is made after every file: nothing is written through one.
                handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o755 if mode == _EXECUTABLE else 0o644)
            except OSError:
                if not (is_agent_settings(path) or from_base(path)):
                    raise
                # The base's settings file under a directory the branch made a file: left out.
                left_out.setdefault("agent settings", []).append(path)
                continue
            with os.fdopen(handle, "wb") as output:
                output.write(data)
            if from_base(path):
                written_from_base.append(path)
    for submodule in left_out.pop(_SUBMODULE, []):
        (root / submodule).mkdir(parents=True, exist_ok=True)  # an empty directory, as git checks it out
    removed = [path for paths in left_out.values() for path in paths]
    targets = read_blobs(repo, [sha for sha, _ in links])
    for (_, path), data in zip(links, targets, strict=True):
        link_target = os.fsdecode(data)
        if _stays_inside(path, link_target) and _inside(root, (root / path).parent.resolve()):
            try:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                os.symlink(link_target, root / path)
            except OSError:
                # A base settings path and a link of the branch's in each other's way: left out.
                if not is_agent_settings(path) and not (settings_base is not None and os.path.lexists(root / path)):
                    raise
                removed.append(path)
                continue
            if from_base(path):
                written_from_base.append(path)
        else:
            removed.append(path)
    removed += _links_resolving_outside(root)
    for path in sorted(_walk(destination)):
        if withheld_reason(path, branch_paths) is not None:
            (destination / path).unlink()
            removed.append(path)
    for directory, _, names in os.walk(destination):
        for name in names:
            target = Path(directory) / name
            if not target.is_symlink():
                target.chmod(_READ_ONLY_FILE)
        Path(directory).chmod(_READ_ONLY_DIRECTORY)
    if replaced is not None:
        replaced += sorted(path for path in written_from_base if (destination / path).exists()
                           or (destination / path).is_symlink())
    return sorted(path for path in set(removed) if not os.path.lexists(destination / path))


def _with_base_settings(repo: Path, base: str, files: list[tuple[str, str, str, int]], links: list[tuple[str, str]],
                        left_out: dict[str, list[str]]) -> tuple[list[tuple[str, str, str, int]],
                                                                  list[tuple[str, str]], list[str], set[str]]:
    """The head's entries without its agent settings and the files the base's instructions
    import, plus the base's of both; the head's settings paths that were left out for it; and
    the imported paths."""
    base_files, base_links, base_left_out = _tree_entries(repo, base)
    imported = _imported(repo, base_files)

    def taken(path: str) -> bool:
        return is_agent_settings(path) or path in imported

    own = {path for _, path, _, _ in files if taken(path)} | {path for _, path in links if taken(path)}
    for paths in left_out.values():  # a submodule or an unsafe name that is a settings path
        own.update(path for path in paths if taken(path))
        paths[:] = [path for path in paths if not taken(path)]
    files = [entry for entry in files if not taken(entry[1])]
    files += [entry for entry in base_files if taken(entry[1])]
    links = [entry for entry in links if not taken(entry[1])]
    links += [entry for entry in base_links if taken(entry[1])]
    left_out[_UNSAFE] += [path for path in base_left_out[_UNSAFE] if taken(path)]
    return files, links, sorted(own), imported


# `@path` in an instruction file: Claude Code and Gemini CLI load the file it names as
# instructions too, and what that one imports, up to five levels.
_IMPORT = re.compile(r"(?:^|(?<=\s))@([^\s`'\"<>()\[\]{},;]+)")
_IMPORT_DEPTH = 5


def _imported(repo: Path, files: list[tuple[str, str, str, int]]) -> set[str]:
    """The paths the commit's instruction files import, followed five levels deep (over-read:
    every `@word` that could name a file in the tree counts, in a code span too)."""
    blobs = {path: sha for _, path, sha, _ in files}
    found: set[str] = set()
    reading = [path for path in blobs if is_agent_settings(path) and path.lower().endswith(".md")]
    for _ in range(_IMPORT_DEPTH):
        following: list[str] = []
        for path, data in zip(reading, read_blobs(repo, [blobs[path] for path in reading]), strict=True):
            for match in _IMPORT.finditer(data.decode("utf-8", "replace")):
                for target in _import_targets(path, match.group(1)):
                    if target not in found and not is_agent_settings(target):
                        found.add(target)
                        if target in blobs:
                            following.append(target)
        reading = following
    return found


def _import_targets(importer: str, written: str) -> list[str]:
    """Where `@written` in `importer` points in the tree: as written and without the punctuation a
    sentence ends with; none for a path in the home directory or outside the tree."""
    targets = []
    for candidate in {written, written.rstrip(".:!?")}:
        if not candidate or candidate.startswith(("~", "/")):
            continue
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), candidate))
        if joined not in (".", "..") and not joined.startswith("../"):
            targets.append(joined)
    return targets


_EXECUTABLE, _LINK, _SUBMODULE = "100755", "120000", "160000"
_UNSAFE = "unsafe name"
_BATCH_BYTES = 32 << 20  # blobs read per `git cat-file` process: a large tree is not held whole


def _tree_entries(repo: Path, commit: str) -> tuple[list[tuple[str, str, str, int]], list[tuple[str, str]],
                                                       dict[str, list[str]]]:
    """The commit's regular files (mode, path, blob, size), its links (blob, path), and the
    paths written otherwise or not at all (submodules; names git itself would not check out)."""
    files: list[tuple[str, str, str, int]] = []
    links: list[tuple[str, str]] = []
    left_out: dict[str, list[str]] = {_SUBMODULE: [], _UNSAFE: []}
    listing = run_git(repo, "ls-tree", "-r", "-l", "-z", "--full-tree", commit).stdout
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        header, _, raw_path = entry.partition(b"\t")
        mode, _, sha, size = header.decode("ascii").split()
        path = os.fsdecode(raw_path)
        if not _safe_name(path):
            left_out[_UNSAFE].append(path)
        elif mode == _LINK:
            links.append((sha, path))
        elif mode == _SUBMODULE:
            left_out[_SUBMODULE].append(path)
        else:
            files.append((mode, path, sha, int(size)))
    return files, links, left_out


def _safe_name(path: str) -> bool:
    """No empty, `.`, `..` or `.git` part, no absolute path: a crafted tree cannot write outside."""
    return not path.startswith("/") and all(
        part not in ("", ".", "..") and ".git" not in _spellings(part) for part in path.split("/"))


def _batches(files: list[tuple[str, str, str, int]]) -> list[list[tuple[str, str, str, int]]]:
    batches: list[list[tuple[str, str, str, int]]] = [[]]
    total = 0
    for item in files:
        if batches[-1] and total + item[3] > _BATCH_BYTES:
            batches.append([])
            total = 0
        batches[-1].append(item)
        total += item[3]
    return [batch for batch in batches if batch]


def _stays_inside(path: str, link_target: str) -> bool:
    """The link's target, read as written from the link's directory, is inside the tree."""
    if not link_target or posixpath.isabs(link_target):
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), link_target))
    return joined != ".." and not joined.startswith("../")


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def _links_resolving_outside(root: Path) -> list[str]:
    """Links whose target, followed through the other links, leaves the tree (`a -> b/../..`
    with `b` a link deeper down): removed until none is left, since each removal can change
    where another resolves."""
    removed: list[str] = []
    while True:
        links = [root / path for path in _walk(root) if (root / path).is_symlink()]
        outside = [path for path in links if not _inside(root, Path(os.path.realpath(path)))]
        if not outside:
            return removed
        for path in outside:
            path.unlink()
            removed.append(path.relative_to(root).as_posix())


def remove_snapshot(destination: Path) -> None:
    """Give write permission back first: rmtree cannot delete inside read-only directories."""
    for directory, _, _ in os.walk(destination):
        Path(directory).chmod(stat.S_IRWXU)
    shutil.rmtree(destination, ignore_errors=True)


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    for directory, directories, files in os.walk(root):
        for name in files + [entry for entry in directories if (Path(directory) / entry).is_symlink()]:
            found.append((Path(directory) / name).relative_to(root).as_posix())
    return found


def tree_fingerprint(root: Path) -> str:
    """Every path, mode and content (or link target) under `root`; a file's content by its status
    (size, times, inode: any write changes its change time), never read: the agent, run as the
    gate's user, could leave a sparse file of any size there."""
    digest = hashlib.sha256()
    for directory, directories, files in sorted(os.walk(root)):
        directories.sort()
        for name in sorted(files + directories):
            path = Path(directory) / name
            info = path.lstat()
            digest.update(
                f"{path.relative_to(root).as_posix()}\0{info.st_mode:o}\0".encode("utf-8", "surrogateescape")
            )
            if path.is_symlink():
                digest.update(os.readlink(path).encode("utf-8", "surrogateescape"))
            elif path.is_file():
                digest.update(_status(os.fsencode(path)))
    return digest.hexdigest()


def checkout_fingerprint(repo: Path) -> str:
    """The real checkout's state: HEAD, refs, the index's entries, each tracked file's status
    (mode, size, times, inode: any write changes its change time), untracked files with theirs
    (ignored files, such as our own outputs, are left out), and the repository's own
    control files (config, hooks, info/: where an agent would plant a filter, a hook or an
    fsmonitor for the gate's later git calls to run).

    Read without any git command that opens the work tree's files: `git diff` against the work
    tree would run the clean filter a changed config names, before the change is seen."""
    digest = hashlib.sha256()
    for control, value in sorted(control_digests(repo).items()):
        digest.update(f"{control}\0{value}\0".encode("utf-8", "surrogateescape"))
    for args in (("rev-parse", "HEAD"), ("for-each-ref", "--format=%(refname) %(objectname)")):
        digest.update(run_git(repo, *args, check=False).stdout)
    # The index's entries (mode, blob, stage, path), and each tracked file's status in the work tree.
    for entry in run_git(repo, "ls-files", "-z", "--stage").stdout.split(b"\0"):
        if entry:
            name = entry.partition(b"\t")[2]
            digest.update(entry + b"\0" + _status(os.path.join(os.fsencode(repo), name)))
    untracked = run_git(repo, "ls-files", "-z", "--others", "--exclude-standard").stdout
    for name in sorted(untracked.split(b"\0")):
        if name:
            # By status, never read: the verify or the agent, as the gate's user, could leave a
            # sparse file of any size here.
            digest.update(name + b"\0" + _status(os.path.join(os.fsencode(repo), name)))
    return digest.hexdigest()


def _status(path: bytes) -> bytes:
    try:
        info = os.lstat(path)
    except OSError:
        return b"missing"
    return f"{info.st_mode:o} {info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino}".encode()
