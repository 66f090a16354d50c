"""What the checkout's HEAD and the refs a run is given name, each with as few git processes as
can answer: the branch checked out (from the HEAD file when the git directory is known), and the
commits of several refs from one process, whose subjects are kept for the fix marker, and files
at those refs read ahead in it (the policy's, for the readers of those commits)."""

from __future__ import annotations

from pathlib import Path

from reviewgate.freeze.git import known_git_directory, resolve_commit, run_git, shared_tree_reader
from reviewgate.freeze.git_objects import checked_blob


def checked_out_branch(repo: Path) -> str | None:
    """The branch HEAD names, None when it is detached: `git symbolic-ref --short HEAD`, read from
    the HEAD file of the git directory repository_root learned (a git process fewer). The name is
    the branch's own, never git's `heads/` form for a name a tag shares. A HEAD file of another
    form (a reftable repository's placeholder) or an unknown git directory asks git."""
    git_directory = known_git_directory(repo)
    if git_directory is not None:
        try:
            content = (Path(git_directory) / "HEAD").read_bytes()
        except OSError:
            content = b""
        if content.startswith(b"ref: refs/heads/") and content.endswith(b"\n") and content.count(b"\n") == 1:
            name = content.removeprefix(b"ref: refs/heads/").removesuffix(b"\n")
            if name and name != b".invalid":
                return name.decode("utf-8", "surrogateescape")
        elif len(content) in (41, 65) and content.endswith(b"\n") and not content[:-1].strip(b"0123456789abcdef"):
            return None  # a commit's name, SHA-1 or SHA-256: detached
    completed = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return completed.stdout.decode("utf-8", "surrogateescape").strip() or None


def resolve_commits(repo: Path, refs: list[str], read_ahead: tuple[str, ...] = ()) -> list[str | None]:
    """The commit SHA each ref names, or None where it names none, as `resolve_commit` answers,
    from one git process for all of them (each call is a process). `cat-file --batch` resolves a
    name as `rev-parse --verify` does and answers `<name> missing` for one that names nothing; the
    commits it prints are small, and their subjects are kept for `commit_subject`. A ref holding a
    newline cannot be a batch line and is asked alone.

    `read_ahead`: paths read at every ref in the same process and kept by the commit's shared
    reader (git.shared_tree_reader), misses included, as its `prefetch_sides` would keep them: the
    policy's files, read at the merge base next, which is the base for a branch on top of it. Each
    ref is resolved again after them, and what was read is kept only if no ref moved meanwhile."""
    batched = [ref for ref in refs if "\n" not in ref]
    paths = [path for path in read_ahead if "\n" not in path]
    found: dict[str, str | None] = {}
    if batched:
        resolved = [f"{ref}^{{commit}}" for ref in batched]
        names = [*resolved, *(f"{ref}:{path}" for ref in batched for path in paths), *(resolved if paths else [])]
        request = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
        checked = run_git(repo, "cat-file", "--batch=%(objectname) %(objecttype) %(objectsize)", input_bytes=request,
                          check=False)
        answers = _batch_answers(len(names), checked.stdout) if checked.returncode == 0 else None
        if answers is not None:
            found = _commits(batched, answers[:len(batched)])
            if paths and answers[-len(batched):] == answers[:len(batched)]:
                _keep_read_ahead(repo, batched, paths, found, answers[len(batched):-len(batched)])
    return [found[ref] if ref in found else resolve_commit(repo, ref) for ref in refs]


def _batch_answers(count: int, output: bytes) -> list[tuple[str, str, bytes] | None] | None:
    """The `count` answers of `cat-file --batch=%(objectname) %(objecttype) %(objectsize)`, each
    (object name, type, content) or None for `<name> missing`; None when the output cannot be read
    answer for answer (each ref is then asked alone)."""
    answers: list[tuple[str, str, bytes] | None] = []
    offset = 0
    for _ in range(count):
        header_end = output.find(b"\n", offset)
        if header_end < 0:
            return None
        fields = output[offset:header_end].decode("ascii", "replace").split(" ")
        offset = header_end + 1
        if len(fields) == 3 and _is_object_name(fields[0]) and fields[2].isdigit():
            body = output[offset : offset + int(fields[2])]
            offset += int(fields[2]) + 1  # the batch format ends every object with a newline
            if offset > len(output):
                return None
            answers.append((fields[0], fields[1], body))
        else:
            answers.append(None)  # `<name> missing`, `ambiguous`: no content follows
    return answers if offset == len(output) else None


def _commits(refs: list[str], answers: list[tuple[str, str, bytes] | None]) -> dict[str, str | None]:
    """Each ref's commit, its subject kept."""
    found: dict[str, str | None] = {}
    for ref, answer in zip(refs, answers, strict=True):
        found[ref] = None if answer is None else answer[0]
        if answer is not None:
            _remember_subject(answer[0], answer[2])
    return found


def _keep_read_ahead(repo: Path, refs: list[str], paths: list[str], commits: dict[str, str | None],
                     answers: list[tuple[str, str, bytes] | None]) -> None:
    """Each ref's files kept by its commit's shared reader: a blob's bytes (checked against its
    name), None for what is not a blob there."""
    for index, ref in enumerate(refs):
        commit = commits[ref]
        if commit is None:
            continue
        reader = shared_tree_reader(str(repo), commit)
        for path, answer in zip(paths, answers[index * len(paths) : (index + 1) * len(paths)], strict=True):
            if answer is not None and answer[1] == "blob":
                reader.keep(path, checked_blob(answer[0].encode("ascii"), answer[2]))
            else:
                reader.keep(path, None)


# The subjects of the commits resolve_commits printed, the newest last: the fix marker asks for
# the head's, which would otherwise be a `git log` process of its own.
_SUBJECTS: dict[str, str] = {}
_SUBJECTS_KEPT = 16


def _remember_subject(commit: str, body: bytes) -> None:
    _SUBJECTS.pop(commit, None)
    _SUBJECTS[commit] = _subject(body.partition(b"\n\n")[2])
    while len(_SUBJECTS) > _SUBJECTS_KEPT:
        del _SUBJECTS[next(iter(_SUBJECTS))]


def _subject(message: bytes) -> str:
    """What `git log --format=%s` prints of a commit message: its first paragraph, past any blank
    lines, each line without its trailing blanks, joined by spaces (read as UTF-8, where git would
    convert a message that declares another encoding)."""
    lines = message.decode("utf-8", "replace").split("\n")
    start = next((number for number, line in enumerate(lines) if line.strip()), len(lines))
    paragraph: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            break
        paragraph.append(line.rstrip())
    return " ".join(paragraph)


def commit_subject(repo: Path, commit: str) -> str:
    """A commit's subject (`git log -1 --format=%s`), from resolve_commits when it printed the commit."""
    if commit in _SUBJECTS:
        return _SUBJECTS[commit]
    return run_git(repo, "log", "-1", "--format=%s", commit).stdout.decode("utf-8", "replace").strip()


def _is_object_name(text: str) -> bool:
    return len(text) in (40, 64) and all(char in "0123456789abcdef" for char in text)
