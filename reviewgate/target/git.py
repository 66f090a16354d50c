"""The one way reviewgate runs git: a fixed environment so output never depends on user config."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reviewgate.errors import UsageError
from reviewgate.workspace_owner import owner_to_inherit

# Settings that make git's output the same whatever the user's or the runner's config says.
# safe.directory: container actions mount a workspace owned by another user; this applies
# to our own calls only (command-line scope) and never touches anyone's config file.
# The diff settings also keep the canonical patch hash stable across user configs: the
# algorithm and inter-hunk context decide where hunks split (git-config(1), "diff.*").
_FIXED_CONFIG = (
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
)


# Variables that would point git at another repository, index or diff driver than the
# one being reviewed (git(1), ENVIRONMENT). GIT_CONFIG_COUNT/GIT_CONFIG_PARAMETERS stay:
# runners pass fetch credentials that way, and the fixed `-c` settings still win over them.
_UNSET_VARIABLES = (
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
    for name in _UNSET_VARIABLES:
        env.pop(name, None)
    return env


@dataclass  # not frozen: raising sets __traceback__ on it, which a frozen dataclass refuses
class GitFailure(Exception):
    """A git command that failed; keeps everything needed to explain it."""

    args_run: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes

    def __str__(self) -> str:
        message = self.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit code {self.returncode}"
        return f"git {' '.join(self.args_run)}: {detail}"


def run_git(
    repo: Path,
    *args: str,
    input_bytes: bytes | None = None,
    check: bool = True,
    extra_env: dict[str, str] | None = None,
    as_owner: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """`extra_env` is for variables reviewgate itself chooses (a temporary index), applied
    after the fixed environment removed the user's. `as_owner`: a command that writes into the
    repository (a fetch) runs as the repository's owner when the gate runs as root in someone
    else's checkout, so what it writes stays theirs (workspace_owner.py)."""
    command = ["git"]
    for setting in _FIXED_CONFIG:
        command += ["-c", setting]
    command += list(args)
    owner = owner_to_inherit(repo) if as_owner else None
    completed = subprocess.run(
        command,
        cwd=repo,
        env={**git_environment(), **(extra_env or {})},
        input=input_bytes,
        capture_output=True,
        check=False,
        user=owner.uid if owner else None,
        group=owner.gid if owner else None,
        extra_groups=[] if owner else None,
    )
    if check and completed.returncode != 0:
        raise GitFailure(tuple(args), completed.returncode, completed.stdout, completed.stderr)
    return completed


def stream_git(repo: Path, *args: str, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """The output of a git command in chunks as git writes it, so the caller works while git
    still computes (a large diff: parsing overlaps git's own time). Raises GitFailure after
    the last chunk when git failed; stops git when the caller stops early."""
    command = ["git"]
    for setting in _FIXED_CONFIG:
        command += ["-c", setting]
    command += list(args)
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, cwd=repo, env=git_environment(), stdout=subprocess.PIPE, stderr=errors
        )
        assert process.stdout is not None
        try:
            while chunk := os.read(process.stdout.fileno(), chunk_bytes):
                yield chunk
        finally:
            process.stdout.close()
            if process.poll() is None:
                process.kill()
            returncode = process.wait()
        if returncode != 0:
            errors.seek(0)
            raise GitFailure(tuple(args), returncode, b"", errors.read())


def git_text(repo: Path, *args: str) -> str:
    """Output of a git command that prints one value, such as a SHA."""
    return run_git(repo, *args).stdout.decode("utf-8", "surrogateescape").strip()


def repository_root(start: Path) -> Path:
    """The top of the work tree containing `start`, or a usage error saying it is not one."""
    if not start.is_dir():
        raise UsageError(f"{start}: not a directory")
    completed = run_git(start, "rev-parse", "--show-toplevel", check=False)
    if completed.returncode != 0:
        raise UsageError(f"{start}: not a git repository (run reviewgate inside a git checkout)")
    return Path(completed.stdout.decode("utf-8", "surrogateescape").strip())


def resolve_commit(repo: Path, ref: str) -> str | None:
    """The commit SHA a ref names, or None when it names no commit."""
    completed = run_git(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False
    )
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("ascii").strip()


class TreeReader:
    """Reads files as they are in one commit, whatever is checked out; cached per path."""

    def __init__(self, repo: Path, commit: str) -> None:
        self.repo = repo
        self.commit = commit
        self._cache: dict[str, bytes | None] = {}

    def read_bytes(self, path: str) -> bytes | None:
        if path not in self._cache:
            completed = run_git(self.repo, "cat-file", "blob", f"{self.commit}:{path}", check=False)
            self._cache[path] = completed.stdout if completed.returncode == 0 else None
        return self._cache[path]

    def read_text(self, path: str) -> str | None:
        data = self.read_bytes(path)
        return None if data is None else data.decode("utf-8", "replace")

    def prefetch(self, paths: list[str]) -> None:
        """Cache many files at once, as `read_bytes` would one by one: one `git cat-file`
        process instead of one per file (the builtin lenses read every changed code file).
        What is not a blob (missing, a submodule) is left for `read_bytes` to answer."""
        names = [path for path in paths if path not in self._cache and "\n" not in path]
        if not names:
            return
        # One `--batch` process: a missing name answers `<name> missing`, a tree or a submodule's
        # commit is not a blob, and both are left out.
        found = _read_names(self.repo, [f"{self.commit}:{path}" for path in names])
        for path in names:
            data = found.get(f"{self.commit}:{path}")
            if data is not None:
                self._cache[path] = data

    def is_directory(self, path: str) -> bool:
        completed = run_git(self.repo, "cat-file", "-t", f"{self.commit}:{path}", check=False)
        return completed.returncode == 0 and completed.stdout.strip() == b"tree"

    def list_files(self) -> list[str]:
        output = run_git(self.repo, "ls-tree", "-r", "-z", "--name-only", self.commit).stdout
        return [name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name]

    def read_many(self, paths: list[str], max_bytes: int | None = None) -> dict[str, bytes]:
        """Many files at this commit in one `git cat-file --batch` process instead of one process
        per file (a 500,000-line repository has thousands). Files larger than `max_bytes` and
        non-blobs (submodules) are left out; the result is not cached."""
        return self.read_blob_ids(self.blob_ids(paths, max_bytes))

    def blob_ids(self, paths: list[str] | None, max_bytes: int | None = None) -> dict[str, str]:
        """git's blob id of each of `paths` (None: every file) at this commit, from one `git ls-tree`
        (what is stored per file content is keyed by it). Left out as `read_many` leaves them out."""
        wanted = None if paths is None else set(paths)
        listing = run_git(self.repo, "ls-tree", "-r", "-z", "--long", self.commit).stdout
        blobs: dict[str, str] = {}
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, raw_name = entry.partition(b"\t")
            _mode, kind, sha, listed_size = meta.split()
            name = raw_name.decode("utf-8", "surrogateescape")
            if kind != b"blob" or (wanted is not None and name not in wanted):
                continue
            if max_bytes is not None and int(listed_size) > max_bytes:
                continue
            blobs[name] = sha.decode("ascii")
        return blobs

    def read_blob_ids(self, blobs: dict[str, str]) -> dict[str, bytes]:
        """The contents of the blobs `blob_ids` named, by path."""
        contents = read_blobs(self.repo, list(blobs.values()))
        return dict(zip(blobs, contents, strict=True))


class SnapshotReader(TreeReader):
    """Reads files from bytes frozen in memory (a document bundle has no commit to read)."""

    def __init__(self, repo: Path, contents: dict[str, bytes]) -> None:
        super().__init__(repo, "")
        self._contents = dict(contents)

    def read_bytes(self, path: str) -> bytes | None:
        return self._contents.get(path)

    def prefetch(self, paths: list[str]) -> None:
        """Everything is in memory already."""

    def is_directory(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return any(name.startswith(prefix) for name in self._contents)

    def list_files(self) -> list[str]:
        return sorted(self._contents)

    def blob_ids(self, paths: list[str] | None, max_bytes: int | None = None) -> dict[str, str]:
        """The ids git would give these contents (`git hash-object`)."""
        return {
            path: hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
            for path in (sorted(self._contents) if paths is None else paths)
            if (data := self._contents.get(path)) is not None and (max_bytes is None or len(data) <= max_bytes)
        }

    def read_blob_ids(self, blobs: dict[str, str]) -> dict[str, bytes]:
        return {path: self._contents[path] for path in blobs}


MAX_HEAD_BLOB_BYTES = 8 * 1024 * 1024


def read_file_heads(repo: Path, tree: str, paths: list[str], limit: int) -> dict[str, str]:
    """The first `limit` bytes of each path in `tree`, decoded with replacement, read with
    two `git cat-file` processes for all paths (one per file would dominate a large change).
    Paths git cannot take on a batch line (a newline in the name) and missing ones are left out."""
    names = [path for path in paths if "\n" not in path]
    if not names:
        return {}
    request = "".join(f"{tree}:{path}\n" for path in names).encode("utf-8", "surrogateescape")
    checked = run_git(
        repo, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", input_bytes=request
    )
    blobs: dict[str, str] = {}
    # --batch-check answers one line per request line, in order ("<name> missing" included).
    for path, line in zip(names, checked.stdout.decode("ascii", "replace").splitlines(), strict=True):
        fields = line.split()
        # Blobs over the cap are skipped: reading one whole to look at its first lines would
        # cost its full size in memory (the memory budget is 500 MB for the freeze).
        if len(fields) == 3 and fields[1] == "blob" and int(fields[2]) <= MAX_HEAD_BLOB_BYTES:
            blobs[path] = fields[0]
    if not blobs:
        return {}
    contents = read_blobs(repo, list(blobs.values()))
    return {path: data[:limit].decode("utf-8", "replace") for path, data in zip(blobs, contents, strict=True)}


def _read_names(repo: Path, names: list[str]) -> dict[str, bytes]:
    """`<commit>:<path>` names to the blobs they name, from one `git cat-file --batch` process
    (no `--batch-check` first: a missing name answers `<name> missing` and is left out)."""
    if not names:
        return {}
    request = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
    output = run_git(repo, "cat-file", "--batch", input_bytes=request).stdout
    found: dict[str, bytes] = {}
    offset = 0
    for name in names:
        header_end = output.index(b"\n", offset)
        fields = output[offset:header_end].split()
        offset = header_end + 1
        if len(fields) != 3 or not fields[2].isdigit():
            continue  # "<name> missing" (or ambiguous): no content follows
        size = int(fields[2])
        if fields[1] == b"blob":
            found[name] = output[offset : offset + size]
        offset += size + 1  # the batch format ends every object with a newline
    return found


def prefetch_sides(sides: list[tuple[TreeReader, list[str]]]) -> None:
    """Cache files of several commits of one repository (head and merge base) with one git
    process for all of them; what is not a blob there reads as None, as `read_bytes` answers.
    A reader that is not a commit's (a bundle's snapshot) prefetches its own way."""
    names: dict[str, tuple[TreeReader, str]] = {}
    for reader, paths in sides:
        if type(reader) is not TreeReader:
            reader.prefetch(paths)
            continue
        for path in paths:
            if path not in reader._cache and "\n" not in path:
                names[f"{reader.commit}:{path}"] = (reader, path)
    if not names:
        return
    repo = next(iter(names.values()))[0].repo
    found = _read_names(repo, list(names))
    for name, (reader, path) in names.items():
        reader._cache[path] = found.get(name)


def read_blobs(repo: Path, object_names: list[str]) -> list[bytes]:
    """The contents of many blobs, in order, from one `git cat-file --batch` process."""
    if not object_names:
        return []
    request = "".join(f"{name}\n" for name in object_names).encode("ascii")
    output = run_git(repo, "cat-file", "--batch", input_bytes=request).stdout
    contents: list[bytes] = []
    offset = 0
    for _ in object_names:
        header_end = output.index(b"\n", offset)
        size = int(output[offset:header_end].split()[2])
        start = header_end + 1
        contents.append(output[start : start + size])
        offset = start + size + 1  # the batch format ends every object with a newline
    return contents


def working_tree(repo: Path, leave_out: tuple[str, ...] = ()) -> str:
    """A tree object of the working tree as it is now (tracked changes and untracked files
    that are not ignored, less the `leave_out` directories, which keep their HEAD content),
    written through a copy of the index so the user's is untouched."""
    index = Path(git_text(repo, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    with tempfile.TemporaryDirectory(prefix="reviewgate-index-") as scratch:
        scratch_index = Path(scratch) / "index"
        if index.is_file():
            shutil.copyfile(index, scratch_index)  # keeps stat data: only changed files are hashed
        environment = {"GIT_INDEX_FILE": str(scratch_index)}
        run_git(repo, "add", "--all", "--", ".", extra_env=environment)
        if leave_out:
            # Back to HEAD's content there: an exclude pathspec would fail on an ignored directory.
            run_git(repo, "reset", "--quiet", "HEAD", "--", *(f":(top,literal){item}" for item in leave_out),
                    extra_env=environment)
        return run_git(repo, "write-tree", extra_env=environment).stdout.decode("ascii").strip()
