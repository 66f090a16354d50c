"""Where the review policy comes from: the config as the target side holds it.

Like GitHub's CODEOWNERS, the config (`.reviewgate.toml`, `[tool.reviewgate]` in pyproject.toml,
or the `--config` path when it lies inside the repository) is read at the merge base with
`git cat-file`, never from the working tree: the branch under review cannot relax the policy
that judges it. Its edits to the config are shown to people (policy/changes.py) and take effect
after merge. One exception: a repository whose target side has no config at all uses the
config the branch adds, and says so.

A file the workflow names outside the repository is the workflow's (it controls flags and
secrets too) and is read from disk; so is an in-repository `--config` path no commit tracks
(a file an earlier workflow step wrote). A document bundle has no base: its config is the
working tree's.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from reviewgate.config import CONFIG_FILE, PYPROJECT_FILE, Config, config_from_document, load_config
from reviewgate.errors import ConfigError
from reviewgate.freeze.git import TreeReader, prefetch_sides, shared_tree_reader
from reviewgate.freeze.tooling import TOOLING_FILES
from reviewgate.text import printable, short_sha
from reviewgate.tomlfile import may_name_key, parse_toml

# Where the config in force was read.
BASE_SIDE = "base"  # the merge base: the normal case
BRANCH_FIRST = "branch"  # no config at the base side: the branch's first config is used
WORKFLOW = "workflow"  # a --config file outside the repository, or one no commit tracks
WORKING_TREE = "working-tree"  # a document bundle (or doctor without a base): nothing to read at
DEFAULTS = "defaults"  # no config anywhere


class Side(NamedTuple):
    """One side of the change that config files can be read from."""

    label: str  # "merge base 1a2b3c4", "head 5d6e7f8", "working tree"
    read: Callable[[str], bytes | None]
    commit: str | None = None  # None: the working tree
    reader: TreeReader | None = None  # a commit's side: its files can be read in one batch


def commit_side(repo: Path, commit: str, role: str) -> Side:
    reader = shared_tree_reader(str(repo), commit)
    return Side(f"{role} {short_sha(commit)}", reader.read_bytes, commit, reader)


def disk_side(repo: Path) -> Side:
    def read(path: str) -> bytes | None:
        candidate = repo / path
        return candidate.read_bytes() if candidate.is_file() else None

    return Side("working tree", read)


class FoundConfig(NamedTuple):
    """The config one side of the change holds, and the file it was read from."""

    path: str  # repository-relative
    config: Config


def _document(side: Side, path: str, explicit: bool) -> Mapping[str, Any] | None:
    data = side.read(path)
    if data is None:
        return None
    if path == PYPROJECT_FILE and not explicit and not may_name_key(data, (b"reviewgate",)):
        return None  # no [tool.reviewgate] however written: not a config file, and left unparsed
    try:
        return _parsed(data)
    except ConfigError:
        return parse_toml(data, f"{printable(path)} at {side.label}")  # raises, naming the file and the side


@functools.lru_cache(maxsize=8)
def _parsed(data: bytes) -> Mapping[str, Any]:
    """A config file's document, parsed once for all the places that hold the same bytes: a change
    that leaves pyproject.toml alone has it at the merge base, at head and in the working tree
    (a millisecond a parse of Django's). Nothing changes a parsed document."""
    return parse_toml(data, "config")


def find_config(side: Side, explicit: str | None) -> FoundConfig | None:
    """The config one side holds: the explicit path, else `.reviewgate.toml`, else a
    pyproject.toml with a [tool.reviewgate] table. A malformed one is a ConfigError naming
    the file and the side."""
    for path in (explicit,) if explicit else (CONFIG_FILE, PYPROJECT_FILE):
        document = _document(side, path, explicit is not None)
        if document is None:
            continue
        if explicit is None and path == PYPROJECT_FILE and "reviewgate" not in document.get("tool", {}):
            continue
        where = f"{printable(path)} at {side.label}"
        return FoundConfig(path, config_from_document(document, path, where))
    return None


class PolicyOrigin(NamedTuple):
    """Where the config in force was read: which kind of source, which file, at which commit."""

    kind: str  # BASE_SIDE | BRANCH_FIRST | WORKFLOW | WORKING_TREE | DEFAULTS
    path: str | None = None
    commit: str | None = None
    explicit: bool = False  # the path came from --config (else the usual file names)

    def describe(self) -> str:
        """One line for `reviewgate freeze`, doctor and the summary."""
        where = f" at {short_sha(self.commit)}" if self.commit else ""
        name = printable(self.path or "")
        return {
            BASE_SIDE: f"review policy: {name}{where} (the merge base, the target side)",
            BRANCH_FIRST: (f"review policy: {name}{where}, the first config, added by this change "
                           "(the target side has none)"),
            WORKFLOW: f"review policy: {name} (named by the workflow, read from disk)",
            WORKING_TREE: f"review policy: {name} in the working tree (there is no target side to read it at)",
            DEFAULTS: "review policy: the defaults (no config at the target side or in the change)",
        }[self.kind]

    def to_json(self) -> dict[str, Any]:
        return {"origin": self.kind, "path": printable(self.path) if self.path else None, "commit": self.commit}


def inside_repository(repo: Path, explicit: Path) -> str | None:
    """The repository-relative path of a --config file inside the repository, else None."""
    try:
        relative = explicit.resolve().relative_to(repo.resolve())
    except ValueError:
        return None
    return relative.as_posix()


def policy_files(repo: Path, explicit: Path | None) -> tuple[str, ...]:
    """The files `policy_at` reads at the target side: the config's candidates and the tooling
    files (freeze/tooling.py: generated files, test input); none for a --config file outside the
    repository. The refs' resolution reads them ahead (run_options.load_policy)."""
    relative = inside_repository(repo, explicit) if explicit is not None else None
    if explicit is not None and relative is None:
        return ()
    return (*_candidates(relative), *TOOLING_FILES)


def _candidates(relative: str | None) -> list[str]:
    return [relative] if relative is not None else [CONFIG_FILE, PYPROJECT_FILE]


def policy_at(repo: Path, explicit: Path | None, base: Side, head: Side) -> tuple[Config, PolicyOrigin]:
    """The config in force for a change from `base` to `head`, and where it was read."""
    relative = inside_repository(repo, explicit) if explicit is not None else None
    if explicit is not None and relative is None:
        return load_config(repo, explicit), PolicyOrigin(WORKFLOW, str(explicit))
    named = relative is not None
    # The candidates of both sides in one git process, not one per file and side (none when the
    # refs' resolution read them already).
    candidates = _candidates(relative)
    # The base side's tooling files too (freeze/tooling.py: generated files, test input), read
    # with the policy and, like it, at the target side.
    prefetch_sides([(side.reader, [*candidates, *(TOOLING_FILES if side is base else ())])
                    for side in (base, head) if side.reader is not None])
    found = find_config(base, relative)
    if found is not None:
        return found.config, PolicyOrigin(BASE_SIDE, found.path, base.commit, named)
    found = find_config(head, relative)
    if found is not None:
        return found.config, PolicyOrigin(BRANCH_FIRST, found.path, head.commit, named)
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"--config: {explicit}: config file not found")
        return load_config(repo, explicit), PolicyOrigin(WORKFLOW, relative, None, named)
    return Config(), PolicyOrigin(DEFAULTS)


def uncommitted_config(repo: Path, explicit: Path | None, base: Side, origin: PolicyOrigin, target: str) -> str | None:
    """A config file the working tree holds and the merge base does not is not the policy in force
    (a new user writes `.reviewgate.toml` and runs the gate): the line that says so, what the run
    uses instead, and when the file takes effect. None when there is nothing to say."""
    if explicit is not None or base.commit is None:
        return None  # a --config path is read as named; a bundle has no merge base
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its unknown keys are for the run that reads it
            found = find_config(disk_side(repo), None)
        path = found.path if found is not None else None
    except ConfigError:  # it does not parse: still the file a user expects to be read
        path = CONFIG_FILE if (repo / CONFIG_FILE).is_file() else PYPROJECT_FILE
    if path is None or base.read(path) is not None:
        return None
    if origin.kind == BRANCH_FIRST and origin.path == path:
        return None  # the branch's first config, in force and said so (policy/changes.py)
    uses = {
        BASE_SIDE: f"{printable(origin.path or '')} at the merge base",
        BRANCH_FIRST: f"{printable(origin.path or '')} as the change's head commit holds it",
    }.get(origin.kind, "the defaults")
    return (f"{printable(path)} is in the working tree but not committed at the merge base "
            f"{short_sha(base.commit)}: this run uses {uses}; it takes effect once committed to {printable(target)}")


def bundle_policy(repo: Path, explicit: Path | None) -> tuple[Config, PolicyOrigin]:
    config = load_config(repo, explicit)
    if config.source is None:
        return config, PolicyOrigin(DEFAULTS)
    return config, PolicyOrigin(WORKING_TREE, str(explicit) if explicit else config.source.split(" ")[0])
