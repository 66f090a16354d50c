"""The one way reviewgate runs git: a fixed environment so output never depends on user config."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reviewgate.errors import UsageError
from reviewgate.freeze.git_environment import FIXED_CONFIG, NO_ATTRIBUTES_CONFIG, git_environment, git_program
from reviewgate.freeze.git_objects import answer_batch, blob_id, checked_blob
from reviewgate.text import decode_text
from reviewgate.workspace_owner import owner_to_inherit

if TYPE_CHECKING:
    from reviewgate.freeze.checkout import CheckoutReader


class GitFailure(Exception):
    """A git command that failed; keeps everything needed to explain it. (A plain class: a
    dataclass costs every start about 0.4 ms compiling its generated methods.)"""

    def __init__(self, args_run: tuple[str, ...], returncode: int, stdout: bytes, stderr: bytes) -> None:
        super().__init__(args_run, returncode, stdout, stderr)
        self.args_run = args_run
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __str__(self) -> str:
        message = self.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit code {self.returncode}"
        return f"git {' '.join(self.args_run)}: {detail}"


# The git directories of the work trees this process has looked at, the newest last: a tree-only
# command needs one, and repository_root learns it in its own git call (each call is a process).
_GIT_DIRECTORIES: dict[Path, str] = {}
_GIT_DIRECTORIES_KEPT = 16


def _remember_git_directory(repo: Path, git_directory: str) -> None:
    _GIT_DIRECTORIES.pop(repo, None)
    _GIT_DIRECTORIES[repo] = git_directory
    while len(_GIT_DIRECTORIES) > _GIT_DIRECTORIES_KEPT:
        del _GIT_DIRECTORIES[next(iter(_GIT_DIRECTORIES))]


def known_git_directory(repo: Path) -> str | None:
    """The git directory of the work tree at `repo` when repository_root learned it, else None."""
    return _GIT_DIRECTORIES.get(repo)


def _git_directory(repo: Path) -> str:
    if repo not in _GIT_DIRECTORIES:
        output = run_git(repo, "rev-parse", "--absolute-git-dir").stdout
        _remember_git_directory(repo, output.decode("utf-8", "surrogateescape").strip())
    return _GIT_DIRECTORIES[repo]


@contextlib.contextmanager
def _prepared(repo: Path, args: tuple[str, ...], tree_only: bool) -> Iterator[tuple[list[str], Path, dict[str, str]]]:
    """The command line, working directory and environment of one git call.

    A tree-only call reads only objects and refs (a diff of two commits, a grep of a tree): it
    runs in an empty work tree with an empty index, so no `.gitattributes` of the checkout (the
    branch's own: `-diff`, `binary`, `filter=`, `diff=` drivers) applies, nor the user's or the
    system's attributes and config. git then tells a binary file by its bytes alone (a NUL in
    the first 8000) and has no driver to run."""
    if not tree_only:
        yield [git_program(), *_config_options(FIXED_CONFIG), *args], repo, git_environment()
        return
    git_directory = _git_directory(repo)
    with tempfile.TemporaryDirectory(prefix="reviewgate-no-tree-") as empty:
        command = [git_program(), f"--git-dir={git_directory}", f"--work-tree={empty}",
                   *_config_options((*FIXED_CONFIG, *NO_ATTRIBUTES_CONFIG)), *args]
        environment = {
            **git_environment(),
            "GIT_INDEX_FILE": str(Path(empty) / "index"),  # never written: tree-only commands
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
        # The empty directory is the working directory too: run from inside the checkout, git
        # still reads the checkout's .gitattributes.
        yield command, Path(empty), environment


def _config_options(settings: tuple[str, ...]) -> list[str]:
    return [option for setting in settings for option in ("-c", setting)]


def run_git(
    repo: Path,
    *args: str,
    input_bytes: bytes | None = None,
    check: bool = True,
    extra_env: dict[str, str] | None = None,
    tree_only: bool = False,
    as_owner: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """`extra_env` is for variables reviewgate itself chooses (a temporary index), applied
    after the fixed environment removed the user's. `tree_only`: see _prepared. `as_owner`: a
    command that writes into the repository (a fetch) runs as the repository's owner when the
    gate runs as root in someone else's checkout, so what it writes stays theirs
    (workspace_owner.py)."""
    owner = owner_to_inherit(repo) if as_owner else None
    with _prepared(repo, args, tree_only) as (command, directory, environment):
        completed = subprocess.run(
            command,
            cwd=directory,
            env={**environment, **(extra_env or {})},
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


def stream_git(repo: Path, *args: str, chunk_bytes: int = 1 << 20, tree_only: bool = False) -> Iterator[bytes]:
    """The output of a git command in chunks as git writes it, so the caller works while git
    still computes (a large diff: parsing overlaps git's own time). Raises GitFailure after
    the last chunk when git failed; stops git when the caller stops early."""
    with _prepared(repo, args, tree_only) as (command, directory, environment), \
            tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, cwd=directory, env=environment, stdout=subprocess.PIPE, stderr=errors
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
    # The git directory too, in the same call: the freeze's tree-only commands need it.
    completed = run_git(start, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False)
    if completed.returncode != 0:
        raise UsageError(f"{start}: not a git repository (run reviewgate inside a git checkout)")
    lines = completed.stdout.decode("utf-8", "surrogateescape").removesuffix("\n").split("\n")
    if len(lines) != 2:  # a newline in either path: the lines cannot be told apart, asked one by one
        return Path(git_text(start, "rev-parse", "--show-toplevel"))
    root = Path(lines[0].strip())
    _remember_git_directory(root, lines[1].strip())
    return root


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
        self._blob_sizes: dict[str, int] = {}  # by blob id, as `blob_ids` listed them
        self._checkout: CheckoutReader | None = None

    def read_bytes(self, path: str) -> bytes | None:
        if path not in self._cache:
            name = f"{self.commit}:{path}"
            # Through --batch, which names the object it answers with: its bytes are checked against it.
            if "\n" not in path:
                self._cache[path] = _read_names(self.repo, [name]).get(name)
            else:  # a batch line cannot hold the name: asked alone, and checked against its blob id
                completed = run_git(self.repo, "cat-file", "blob", name, check=False)
                object_id = run_git(self.repo, "rev-parse", name, check=False).stdout.strip()
                self._cache[path] = (checked_blob(object_id, completed.stdout)
                                     if completed.returncode == 0 else None)
        return self._cache[path]

    def read_text(self, path: str) -> str | None:
        data = self.read_bytes(path)
        return None if data is None else decode_text(data)

    def keep(self, path: str, data: bytes | None) -> None:
        """Cache a file read another way at this commit (its blob's bytes, checked against its id;
        None: no blob there)."""
        self._cache[path] = data

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
            self._blob_sizes[blobs[name]] = int(listed_size)
        return blobs

    def read_blob_ids(self, blobs: dict[str, str]) -> dict[str, bytes]:
        """The contents of the blobs `blob_ids` named, by path: from the checkout where its file
        holds exactly the blob (checkout.py checks), from git for the rest."""
        if self._checkout is None:
            from reviewgate.freeze.checkout import CheckoutReader  # only a read of whole files loads it

            self._checkout = CheckoutReader(self.repo)
        sized = {path: (blob, self._blob_sizes[blob]) for path, blob in blobs.items() if blob in self._blob_sizes}
        found = self._checkout.read(sized)
        rest = {path: blob for path, blob in blobs.items() if path not in found}
        found.update(zip(rest, read_blobs(self.repo, list(rest.values())), strict=True))
        return {path: found[path] for path in blobs}


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
            path: blob_id(data)
            for path in (sorted(self._contents) if paths is None else paths)
            if (data := self._contents.get(path)) is not None and (max_bytes is None or len(data) <= max_bytes)
        }

    def read_blob_ids(self, blobs: dict[str, str]) -> dict[str, bytes]:
        return {path: self._contents[path] for path in blobs}


MAX_HEAD_BLOB_BYTES = 8 * 1024 * 1024



@functools.lru_cache(maxsize=4)
def shared_tree_reader(repo_root: str, commit: str) -> TreeReader:
    """One reader (and its cache) per commit for one run: the policy's read of the merge base
    (its config and tooling files, `.gitattributes` among them) is the lenses' read too."""
    return TreeReader(Path(repo_root), commit)

def read_file_heads(repo: Path, tree: str, paths: list[str], limit: int, keep_in: TreeReader | None = None,
                    whole: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """The first `limit` bytes of each path in `tree`, decoded (text.decode_text). Paths git
    cannot take on a batch line (a newline in the name) and missing ones are left out.
    `keep_in`: a reader of `tree` that keeps the whole files read, so it need not read them again.
    `whole`: the files read already (`read_whole_files` of `paths`, freeze/head_reads.py)."""
    found = read_whole_files(repo, tree, paths) if whole is None else whole
    if keep_in is not None:
        for path, data in found.items():
            keep_in.keep(path, data)
    return {path: decode_text(data[:limit]) for path, data in found.items()}


def read_whole_files(repo: Path, tree: str, paths: list[str]) -> dict[str, bytes]:
    """Each path's whole file in `tree`, in order, left out as `read_object_starts` leaves out."""
    names = {f"{tree}:{path}": path for path in paths}
    return {names[name]: data for name, data in _read_whole_objects(repo, list(names)).items()}


def read_object_starts(repo: Path, names: list[str], limit: int) -> dict[str, bytes]:
    """The first `limit` bytes of each blob that a `<tree>:<path>` name names, read with one
    `git cat-file` process for all of them (one per file would dominate a large change).
    Names git cannot take on a batch line (a newline in the path), missing ones, non-blobs and
    blobs over MAX_HEAD_BLOB_BYTES are left out."""
    return {name: data[:limit] for name, data in _read_whole_objects(repo, names).items()}


def _read_whole_objects(repo: Path, names: list[str]) -> dict[str, bytes]:
    """What `read_object_starts` reads, whole, from one `git cat-file --batch` read as it streams:
    a blob over MAX_HEAD_BLOB_BYTES is passed over unkept (reading one whole to look at its first
    lines would cost its size in memory; the freeze's budget is 500 MB), so no `--batch-check`
    process asks the sizes first."""
    names = [name for name in names if "\n" not in name]
    if not names:
        return {}
    with _prepared(repo, ("cat-file", "--batch"), False) as (command, directory, environment), \
            tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, cwd=directory, env=environment, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=errors)
        found = answer_batch(process, names, MAX_HEAD_BLOB_BYTES)
        if process.wait() != 0 or found is None:
            errors.seek(0)
            raise GitFailure(("cat-file", "--batch"), process.returncode, b"", errors.read())
    return found


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
            found[name] = checked_blob(fields[0], output[offset : offset + size])
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
        object_id, _kind, size_text = output[offset:header_end].split()
        size = int(size_text)
        start = header_end + 1
        contents.append(checked_blob(object_id, output[start : start + size]))
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
