"""How many of the call sites a change touches does the model reviewer read? One command:

    python benchmarks/context_benchmark.py --repo CLONE [--repo CLONE ...] [--prs 12]
        [--context-chars 8000] [--ref HEAD] [--tools]

For each `--repo` (a git repository; a bare one is cloned to a scratch directory first) it takes
the newest `--prs` merged pull requests on the first-parent history of `--ref` that change
Python code: a squash-merged PR is a commit whose subject ends in `(#N)` (base: its parent), a
merge commit `Merge pull request #N` is the PR's second parent against the first. Each is frozen
as the gate freezes a change, split into the model reviewer's chunks, and each chunk's context
is collected with `context_chars` as a run would (context_collector.py); with `--tools` as a run
with the read-only tool loop on collects it (a few sites of each symbol inline, the rest named),
its chunks holding one unchanged line either side of their changes.

The call sites of a chunk are the uses at the head of every symbol it touches (symbols.py: the
names its changed lines define or remove, and the functions whose bodies it edits), imports,
definitions and documents left out, the first 200 per symbol. One is *shown* when the
request's diff shows its line (a line of a chunk's hunk, as sent) or the chunk's context holds
it; *named* when shown, or when the context's `not shown` entry names its place (with the tools:
its file); *reachable*
when shown, or when the `callers` tool of the read-only tool loop (tools.py) returns or names it.
It prints, per project and in all, the sites and the shares shown, shown or named, and shown or
reachable.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))

from reviewgate.context import ReviewRequest  # noqa: E402
from reviewgate.freeze.freeze import freeze  # noqa: E402
from reviewgate.freeze.git import TreeReader  # noqa: E402
from reviewgate.reviewers.model.chunk_work import context_budget_for  # noqa: E402
from reviewgate.reviewers.model.chunking import DIFF_CONTEXT_LINES_WITH_TOOLS, plan_chunks  # noqa: E402
from reviewgate.reviewers.model.context_collector import INLINE_SITES_WITH_TOOLS, collect_context  # noqa: E402
from reviewgate.reviewers.model.context_items import NOT_SHOWN, ContextItem  # noqa: E402
from reviewgate.reviewers.model.prompt import ToolCall  # noqa: E402
from reviewgate.reviewers.model.symbols import UseReader, touched_symbols  # noqa: E402
from reviewgate.reviewers.model.tools import ReadTools  # noqa: E402
from reviewgate.reviewers.model.withheld import withheld_reason  # noqa: E402

DIFF_BUDGET_TOKENS = 90_000  # about what max_input_tokens' default leaves a chunk's diff
_SQUASHED = re.compile(r"\(#(\d+)\)\s*$")
_MERGED = re.compile(r"^Merge pull request #(\d+)")
_HEADING = re.compile(r"^=== (\S+) lines (\d+)-(\d+) ")
_NAMED_FILE = re.compile(r" \(\d+\)$")  # a named file's count of sites


@dataclass
class Count:
    sites: int = 0
    shown: int = 0
    named: int = 0
    reachable: int = 0
    prs: int = 0

    def add(self, other: Count) -> None:
        self.sites += other.sites
        self.shown += other.shown
        self.named += other.named
        self.reachable += other.reachable
        self.prs += other.prs

    def row(self, name: str) -> str:
        def share(part: int) -> str:
            return f"{100 * part / self.sites:.1f}%" if self.sites else "-"

        return (f"{name:<28} {self.prs:>4} {self.sites:>7} {share(self.shown):>8} {share(self.named):>8} "
                f"{share(self.reachable):>10}")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _clone(source: Path, scratch: Path) -> Path:
    target = scratch / source.resolve().parent.name.replace("+", "-") / source.name
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(target)], check=True)
    return target


def merged_prs(repo: Path, ref: str, count: int) -> list[tuple[str, str, str]]:
    """(name, base, head) of the newest merged PRs on the first-parent history that change Python
    code outside tests."""
    found: list[tuple[str, str, str]] = []
    log = _git(repo, "log", "--first-parent", "--format=%H %P%x00%s", "-n", "3000", ref)
    for line in log.splitlines():
        shas, _, subject = line.partition("\0")
        commit, *parents = shas.split()
        squashed, merged = _SQUASHED.search(subject), _MERGED.match(subject)
        if squashed and len(parents) == 1:
            name, base, head = f"#{squashed.group(1)}", parents[0], commit
        elif merged and len(parents) == 2:
            name, base, head = f"#{merged.group(1)}", parents[0], parents[1]
        else:
            continue
        changed = _git(repo, "diff", "--name-only", f"{base}...{head}").split()
        if any(path.endswith(".py") and "test" not in path and not path.startswith("docs/") for path in changed):
            found.append((name, base, head))
        if len(found) >= count:
            break
    return found


def _callers_output(tools: ReadTools, symbol: str) -> set[tuple[str, int]]:
    """The (path, line) sites the `callers` tool returns or names."""
    text = tools.run(ToolCall("0", "callers", {"symbol": symbol}))
    places: set[tuple[str, int]] = set()
    named = False
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            places.update((heading.group(1), number)
                          for number in range(int(heading.group(2)), int(heading.group(3)) + 1))
        named = named or line.startswith("not shown:")
        if named and line.startswith("  ") and ": " in line:
            path, _, numbers = line.strip().partition(": ")
            places.update((path, int(number)) for number in numbers.split(", ") if number.isdigit())
    return places


def _named_places(items: tuple[ContextItem, ...]) -> tuple[set[tuple[str, int]], set[str]]:
    """The (path, line) sites the context's `not shown` entry names, and the files it names
    without their lines (with the tools: `N call site(s) of S in: a.py (3), b.py`)."""
    places: set[tuple[str, int]] = set()
    files: set[str] = set()
    for item in items:
        if item.path != NOT_SHOWN:
            continue
        for line in item.lines:
            path, _, numbers = line.strip().partition(": ")
            if line.startswith("  ") and numbers:
                places.update((path, int(number)) for number in numbers.split(", ") if number.isdigit())
            elif " in: " in line:
                files.update(_NAMED_FILE.sub("", name) for name in line.split(" in: ", 1)[1].split(", "))
    return places, files


def measure_pr(repo: Path, base: str, head: str, context_chars: int, tools: bool = False) -> Count:
    target = freeze(repo, base=base, head=head)
    request = ReviewRequest(target=target, head=TreeReader(repo, target.head_sha))
    branch_paths = {change.path for change in target.files}
    shown_files = [change for change in target.files if withheld_reason(change.path, branch_paths) is None]
    # With the tools a chunk's diff holds fewer unchanged lines: the lines its hunks show, as sent.
    chunks = plan_chunks(shown_files, DIFF_BUDGET_TOKENS, DIFF_CONTEXT_LINES_WITH_TOOLS if tools else None).chunks
    in_diff = {(change.path, line) for chunk in chunks for change in chunk.files for hunk in change.hunks
               for line in range(hunk.new_start, hunk.new_end + 1)}
    uses = UseReader(request.head)
    reader = ReadTools(request)
    count = Count(prs=1)
    for chunk in chunks:
        context = collect_context(request, chunk.files, context_budget_for(chunk, context_chars), branch_paths,
                                  context_chars, INLINE_SITES_WITH_TOOLS if tools else None)
        named, named_files = _named_places(context.items)
        in_context = {(item.path, item.first_line + index) for item in context.items if item.first_line is not None
                      for index in range(len(item.lines))}
        for symbol in touched_symbols(request, chunk.files).changed:
            sites = {(site.path, site.line) for site in uses.sites(request, symbol)
                     if not site.defines(symbol) and not site.is_document}
            if not sites:
                continue
            shown = {site for site in sites if site in in_diff or site in in_context}
            reachable = shown | (sites & _callers_output(reader, symbol))
            count.sites += len(sites)
            count.shown += len(shown)
            count.named += len(shown | (sites & named) | {site for site in sites if site[0] in named_files})
            count.reachable += len(reachable)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repo", action="append", type=Path, required=True, help="a git repository (repeatable)")
    parser.add_argument("--prs", type=int, default=12, help="merged PRs per repository (default 12)")
    parser.add_argument("--context-chars", type=int, default=8000, help="the reviewer's context_chars")
    parser.add_argument("--ref", default="HEAD", help="where the first-parent history starts (default HEAD)")
    parser.add_argument("--tools", action="store_true",
                        help="collect the context as with the read-only tool loop on (default: off)")
    arguments = parser.parse_args(argv)
    total = Count()
    print(f"tools {'on' if arguments.tools else 'off'}")
    print(f"{'project / PR':<28} {'PRs':>4} {'sites':>7} {'shown':>8} {'named':>8} {'reachable':>10}")
    with tempfile.TemporaryDirectory(prefix="reviewgate-context-benchmark-") as scratch:
        for source in arguments.repo:
            if not source.is_dir():
                print(f"context_benchmark: --repo {source}: not a directory", file=sys.stderr)
                return 2
            repo = _clone(source, Path(scratch))
            project = Count()
            for name, base, head in merged_prs(repo, arguments.ref, arguments.prs):
                counted = measure_pr(repo, base, head, arguments.context_chars, arguments.tools)
                print(counted.row(f"  {name}"))
                project.add(counted)
            print(project.row(source.resolve().parent.name if source.name == "repo" else source.name))
            total.add(project)
    print(total.row("all"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
