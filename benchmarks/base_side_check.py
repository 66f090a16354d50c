"""Checks, on real history, that the base side's functions the tests lens tells from the head side
(python_insertions.inserts_only, shapes.base_side) are exactly those a parse of the base side gives.

For every merge (or, with --commits, every commit) of each repository, the diff of its first
parent against it, as the gate makes it (freeze.diff_between): each Python file changed there is
parsed at both sides, and where the change only inserts whole statements the derived base shapes
are compared field by field with the parsed ones. Any difference is printed and the exit code is 1.

    python benchmarks/base_side_check.py /tmp/repos/pallets+click /tmp/repos/encode+starlette
    python benchmarks/base_side_check.py --range main..appended-100k DJANGO_CHECKOUT
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.freeze.freeze import diff_between
from reviewgate.reviewers.builtin.changed_lines import only_inserts
from reviewgate.reviewers.builtin.languages.python_insertions import inserts_only
from reviewgate.reviewers.builtin.languages.python_shapes import python_shapes
from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes, base_side
from reviewgate.text import decode_text


def _shape_fields(shape: FunctionShape) -> tuple[object, ...]:
    return (
        shape.name, shape.line, shape.end_line, shape.text, shape.branches, shape.statements,
        shape.public, shape.trivial, shape.defaults, shape.body,
    )


def differences(derived: Shapes, parsed: Shapes) -> list[str]:
    """What tells the two apart: names in another order, or a field of one function."""
    if list(derived) != list(parsed):
        return [f"names: derived {list(derived)} != parsed {list(parsed)}"]
    return [
        f"{name}: derived {_shape_fields(derived[name])} != parsed {_shape_fields(parsed[name])}"
        for name in derived
        if _shape_fields(derived[name]) != _shape_fields(parsed[name])
    ]


class _Blobs:
    """File texts at commits, read by one `git cat-file --batch` process."""

    def __init__(self, repo: Path) -> None:
        self.process = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def text(self, commit: str, path: str) -> str | None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{commit}:{path}\n".encode())
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        data = self.process.stdout.read(int(header[2]) + 1)[:-1]
        return decode_text(data)


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def check_pair(blobs: _Blobs, base: str, head: str, repo: Path, tally: Counter[str]) -> list[str]:
    problems: list[str] = []
    for change in diff_between(repo, base, head):
        if not change.path.endswith(".py") or change.status in (ChangeStatus.ADDED, ChangeStatus.DELETED):
            continue
        if change.is_binary or change.is_submodule or not change.added_lines():
            continue
        problems += _check_file(blobs, base, head, change, tally)
    return problems


def _check_file(blobs: _Blobs, base: str, head: str, change: FileChange, tally: Counter[str]) -> list[str]:
    tally["files"] += 1
    head_text = blobs.text(head, change.path)
    base_text = blobs.text(base, change.old_path or change.path)
    head_tree = None if head_text is None else _parsed(head_text)
    if head_text is None or base_text is None or head_tree is None:
        tally["unreadable or unparsable at head"] += 1
        return []
    if not only_inserts(change):
        tally["removes lines: parsed"] += 1
        return []
    tally["inserts only"] += 1
    if not inserts_only(head_tree, head_text, change.added_lines()):
        tally["inserts only, not whole statements: parsed"] += 1
        return []
    tally["derived"] += 1
    base_tree = _parsed(base_text)
    where = f"{base}..{head} {change.path}"
    if base_tree is None:
        return [f"{where}: derived, but the base side does not parse"]
    derived = base_side(python_shapes(head_tree, head_text), change.added_line_numbers())
    parsed = python_shapes(base_tree, base_text)
    tally["functions compared"] += len(parsed)
    return [f"{where}: {problem}" for problem in differences(derived, parsed)]


def _pairs(repo: Path, commits: bool, revision_range: str | None) -> list[tuple[str, str]]:
    if revision_range is not None:
        base, _dots, head = revision_range.partition("..")
        return [(base, head)]
    listing = ["--no-merges"] if commits else ["--merges"]
    output = subprocess.run(
        ["git", "-C", str(repo), "log", *listing, "--format=%H %P"], capture_output=True, text=True, check=True
    ).stdout
    return [(line.split()[1], line.split()[0]) for line in output.splitlines() if len(line.split()) >= 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--commits", action="store_true", help="every non-merge commit against its parent")
    parser.add_argument("--range", dest="revision_range", help="one BASE..HEAD pair instead of the history")
    options = parser.parse_args()
    problems: list[str] = []
    for repo in options.repos:
        tally: Counter[str] = Counter()
        blobs = _Blobs(repo)
        pairs = _pairs(repo, options.commits, options.revision_range)
        for base, head in pairs:
            tally["changes"] += 1
            problems += check_pair(blobs, base, head, repo, tally)
        print(repo.name, dict(tally), flush=True)
    for problem in problems[:50]:
        print("DIFFERENT", problem)
    print(f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
