"""SZZ-style lift: is a gate block likelier on a PR whose lines a later fix deleted or changed?

Later fixes are first-parent commits after the PR whose subject or branch says fix, bug,
regression or revert (dependency bumps, branch syncs, text fixes and docs/test/tooling commits excluded). Each fix's deleted or modified lines in code
files are blamed at the fix's first parent (`git blame -w`), and the blamed commits are mapped
back to the PRs that brought them. The block rate of later-fixed PRs is compared with the rest,
raw and adjusted for size (Mantel-Haenszel risk ratio over quartiles of added lines), for every
block and for code-reading blocks (a rule that read the code, not one of the tests/ and process/
rules, which say what a PR lacks). Blocking findings near a later-fixed line are counted against
what chance would place there; the rate of a finding at any severity is compared the same way,
and so is the rate of a code-reading finding outside test files at any severity (what those
rules would block if every finding of theirs blocked), and later-fixed PRs with a finding of any severity whose lines (line to end_line) hold a line the
fix changed are counted, and among them those by a code-reading rule outside test files.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.history_prs import PullRequest, git_output, pull_request_commits, pull_request_from
from reviewgate.reviewers.builtin.file_kinds import is_test_file

NEAR_LINES = 10
# Rules that say what a PR lacks (a test, a reproduction) rather than what its code does.
NOT_CODE_READING_PREFIXES = ("tests/", "process/")
_FIX_TEXT = re.compile(r"(?:^|[^a-z])(?:fix(?:es|ed)?|bug(?:fix)?|hotfix|regression|revert)(?:$|[^a-z])",
                       re.IGNORECASE)
# Not fixes of code: dependency bumps, formatter runs, branch syncs, text fixes ("changelog and doc
# fixes", "fix typo in README"), conventional commits whose type says docs/tests/tooling.
_NOT_CODE_FIX = re.compile(
    r"\bbump\b|\(deps(?:-dev)?\)|\bdependabot\b|pre-commit|^Merge (?:branch|remote-tracking)\b"
    r"|\b(?:docs?|typos?|changelog|readme|comments?|docstrings?|jsdoc|grammar|spelling)\b"
    r"|^(?:docs|test|tests|chore|ci|style|build)(?:\([^)]*\))?!?:",
    re.IGNORECASE)
CODE_SUFFIXES = frozenset((
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs", ".java",
    ".kt", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala", ".sh",
))
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,(?P<count>\d+))? \+(?P<new_start>\d+)(?:,(?P<new_count>\d+))? @@")


@dataclass(frozen=True)
class SzzLimits:
    window: int = 300  # a fix counts for a PR only within this many first-parent commits after it
    budget_seconds: float = 600.0  # blame time per repository; fixes past it are not scanned


@dataclass
class SzzResult:
    repo: str
    bounds: list[str] = field(default_factory=list)
    fixes_found: int = 0
    fixes_scanned: int = 0
    hunks_blamed: int = 0
    # PR number -> path at the PR's head -> line numbers a later fix deleted or changed.
    fixed_lines: dict[int, dict[str, set[int]]] = field(default_factory=dict)
    fixed_by: dict[int, set[str]] = field(default_factory=dict)  # PR number -> the fix commits that blamed it
    rows: list[dict[str, Any]] = field(default_factory=list)  # per PR: fixed, blocked, size, near counts


def says_fix(text: str) -> bool:
    return bool(_FIX_TEXT.search(text)) and not _NOT_CODE_FIX.search(text)


def is_code(path: str) -> bool:
    return Path(path).suffix.lower() in CODE_SUFFIXES


def changed_old_lines(repo: Path, parent: str, commit: str) -> dict[str, list[tuple[int, int]]]:
    """Per old path in code files: (start, count) of the lines the commit deleted or modified."""
    diff = git_output(repo, "diff", "-U0", "-w", "--no-color", "--no-ext-diff", parent, commit)
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    path: str | None = None
    for line in diff.splitlines():
        if line.startswith("--- "):
            name = line[4:]
            path = name[2:] if name.startswith("a/") else None
        elif line.startswith("@@") and path is not None and is_code(path):
            hunk = _HUNK.match(line)
            count = int(hunk["count"]) if hunk and hunk["count"] is not None else 1
            if hunk and count > 0:
                ranges[path].append((int(hunk["start"]), count))
    return ranges


def blame_lines(repo: Path, revision: str, path: str, ranges: list[tuple[int, int]]) -> list[tuple[str, str, int]]:
    """(commit, path in that commit, line in that commit) for each blamed line."""
    arguments = [f"-L{start},+{count}" for start, count in ranges]
    output = git_output(repo, "blame", "-w", "--line-porcelain", *arguments, revision, "--", path)
    blamed: list[tuple[str, str, int]] = []
    commit, original_line = "", 0
    for line in output.splitlines():
        if re.match(r"^[0-9a-f]{40} \d+ \d+", line):
            commit, original, _ = line.split(" ", 2)
            original_line = int(original)
        elif line.startswith("filename "):
            blamed.append((commit, line[len("filename "):], original_line))
    return blamed


def map_line(repo: Path, source: str, target: str, path: str, line: int, cache: dict[tuple[str, str, str], str]
             ) -> int | None:
    """Where `line` of `path` at `source` sits at `target`, or None when a later commit changed it."""
    key = (source, target, path)
    if key not in cache:
        cache[key] = git_output(repo, "diff", "-U0", "--no-color", source, target, "--", path)
    shift = 0
    for text in cache[key].splitlines():
        hunk = _HUNK.match(text)
        if not hunk:
            continue
        start, count = int(hunk["start"]), int(hunk["count"] if hunk["count"] is not None else 1)
        new_count = int(hunk["new_count"] if hunk["new_count"] is not None else 1)
        old_first = start if count else start + 1  # a pure insertion sits after line `start`
        if line < old_first:
            break
        if count and line < start + count:
            return None
        shift += new_count - count
    return line + shift


def added_lines_at_head(repo: Path, request: PullRequest) -> dict[str, set[int]]:
    diff = git_output(repo, "diff", "-U0", "--no-color", f"{request.base}...{request.head}")
    added: dict[str, set[int]] = defaultdict(set)
    path: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        hunk = _HUNK.match(line)
        if hunk and path is not None:
            start = int(hunk["new_start"])
            count = int(hunk["new_count"] if hunk["new_count"] is not None else 1)
            added[path].update(range(start, start + count))
    return added


def _first_parent_history(repo: Path) -> list[tuple[str, str, str]]:
    """(commit, first parent, text that may say fix) oldest first."""
    log = git_output(repo, "log", "--first-parent", "--format=%H%x00%P%x00%s", "HEAD")
    history = []
    for line in reversed(log.splitlines()):
        commit, parents, subject = line.split("\x00", 2)
        parent_list = parents.split()
        if not parent_list:
            continue
        recorded = pull_request_from(commit, parent_list, subject)
        branch = recorded[1] if recorded and recorded[1] else ""
        text = subject if len(parent_list) == 1 or branch else git_output(
            repo, "log", "-1", "--format=%s", parent_list[-1]).strip()
        history.append((commit, parent_list[0], f"{text}\n{branch}"))
    return history


def _request(record: dict[str, Any]) -> PullRequest:
    return PullRequest(record["pr"], record["kind"], record["base"], record["head"], record.get("head_ref"),
                       record.get("subject") or "", record["merged_commit"])


def szz_lift(repo: Path, records: list[dict[str, Any]], limits: SzzLimits) -> SzzResult:
    result = SzzResult(repo.name)
    history = _first_parent_history(repo)
    position = {commit: index for index, (commit, _, _) in enumerate(history)}
    requests = {record["pr"]: _request(record) for record in records if record["merged_commit"] in position}
    owner: dict[str, int] = {}
    for number, request in requests.items():
        for commit in pull_request_commits(repo, request):
            owner.setdefault(commit, number)
    if not requests:
        return result
    oldest = min(position[request.merged_commit] for request in requests.values())
    newest = max(position[request.merged_commit] for request in requests.values())
    last = min(len(history) - 1, newest + limits.window)
    fixes = [(index, history[index]) for index in range(oldest + 1, last + 1) if says_fix(history[index][2])]
    result.fixes_found = len(fixes)
    result.bounds.append(f"fixes scanned: first-parent commits {oldest + 1}..{last} of {len(history)} "
                         f"(a fix counts for a PR up to {limits.window} commits after it)")
    deadline = time.monotonic() + limits.budget_seconds
    mapping_cache: dict[tuple[str, str, str], str] = {}
    for index, (commit, parent, _) in fixes:
        if time.monotonic() > deadline:
            result.bounds.append(f"time budget of {limits.budget_seconds:.0f}s spent: "
                                 f"{result.fixes_found - result.fixes_scanned} fixes not scanned")
            break
        result.fixes_scanned += 1
        for path, ranges in changed_old_lines(repo, parent, commit).items():
            result.hunks_blamed += len(ranges)
            try:
                blamed_lines = blame_lines(repo, parent, path, ranges)
            except subprocess.CalledProcessError as error:
                result.bounds.append(f"blame failed for {path} at {parent[:12]}: "
                                     f"{error.stderr.decode('utf-8', 'replace').strip()[:200]}")
                continue
            for blamed, blamed_path, line in blamed_lines:
                number = owner.get(blamed)
                if number is None or index - position[requests[number].merged_commit] > limits.window:
                    continue
                at_head = map_line(repo, blamed, requests[number].head, blamed_path, line, mapping_cache)
                result.fixed_by.setdefault(number, set()).add(commit)
                lines = result.fixed_lines.setdefault(number, {}).setdefault(blamed_path, set())
                if at_head is not None:
                    lines.add(at_head)
    result.rows = [_row(repo, record, requests.get(record["pr"]), result.fixed_lines) for record in records]
    return result


def _row(repo: Path, record: dict[str, Any], request: PullRequest | None,
         fixed_lines: dict[int, dict[str, set[int]]]) -> dict[str, Any]:
    fixed = fixed_lines.get(record["pr"], {})
    error = record.get("exit_code") not in (0, 1)
    # A run that errored (a checkout that failed on a blob the clone lacks) has no diff to read either.
    added = added_lines_at_head(repo, request) if request and not error else {}
    blocked = record.get("verdict") == "request_changes"
    # The code-reading rules' findings outside test files, any severity: what those rules would block
    # if every finding of theirs blocked (the ceiling of the code-reading blocks' lift), and the catch
    # power of the rules that report at minor until their records earn more.
    shipped = [item for item in record.get("located") or record.get("blocking") or []
               if is_code_reading(str(item.get("rule") or "")) and item.get("path") and not is_test_file(str(item["path"]))]
    row: dict[str, Any] = {
        "pr": record["pr"],
        "fixed": record["pr"] in fixed_lines,
        "blocked": blocked,
        "code_blocked": blocked and any(is_code_reading(str(item.get("rule") or ""))
                                        for item in record.get("blocking") or []),
        "found": bool(record.get("located") or record.get("blocking")),  # any finding with a place, any severity
        "code_rules": sorted({str(item["rule"]) for item in shipped}),
        "code_found": bool(shipped),
        # Of them, one of the class the gate blocks a bug on (correctness; duplicate code and
        # readability never block for one): near what would block if every bug rule's record had earned
        # its severity, less what stays minor for another reason (a move, a fallback said to be deliberate).
        "correctness_found": any(item.get("class") == "correctness" for item in shipped),
        "error": error,
        "added": sum(len(lines) for lines in added.values()),
        "near": 0,
        "chance": 0.0,
        "on_fixed_line": 0,
        "on_fixed_code": 0,
    }
    if fixed:
        near_added = sum(1 for path, lines in added.items() for line in lines
                         if _near(fixed.get(path, set()), line))
        fraction = near_added / row["added"] if row["added"] else 0.0
        located = [item for item in record.get("blocking") or [] if item.get("path") and item.get("line")]
        row["near"] = sum(1 for item in located if _near(fixed.get(item["path"], set()), int(item["line"])))
        row["chance"] = fraction * len(located)
        row["located_blocking"] = len(located)
        # Records written before every located finding was kept hold only the blocking ones.
        every = record.get("located", located)
        on_fixed = [item for item in every if _on_fixed_line(fixed.get(str(item.get("path")), set()), item)]
        row["on_fixed_line"] = len(on_fixed)
        # A rule that read the code, on shipped code: not a test a vet-driven fix rewrote.
        row["on_fixed_code"] = sum(1 for item in on_fixed if is_code_reading(str(item.get("rule") or ""))
                                   and not is_test_file(str(item["path"])))
        row["on_fixed_findings"] = [f"{item.get('rule')} {item.get('severity') or ''} {item['path']}:{item['line']}"
                                    for item in on_fixed]
    return row


def is_code_reading(rule: str) -> bool:
    return bool(rule) and not rule.startswith(NOT_CODE_READING_PREFIXES)


def _on_fixed_line(lines: set[int], finding: dict[str, Any]) -> bool:
    if not finding.get("line"):
        return False
    first = int(finding["line"])
    last = max(first, int(finding.get("end_line") or first))
    return any(first <= line <= last for line in lines)


def _near(lines: set[int], line: int) -> bool:
    return any(abs(line - other) <= NEAR_LINES for other in lines)
