"""What would the builtin reviewer's bug, security and secrets rules say about a whole project?
One command:

    python benchmarks/rule_scan.py PROJECT [PROJECT ...] --out findings.jsonl

Each PROJECT is a git clone (its HEAD's tree is scanned) or a plain directory, such as an
unpacked sdist (its files are committed into a scratch repository first). The scan is one gate
run, `reviewgate run --reviewer builtin --no-verify`, on a change from git's empty tree to that
tree: every file reads as added, and the gate's own exclusions (vendored, generated, lock files)
and size limits apply as on any pull request. Nothing in PROJECT changes: a git clone is cloned
with `--shared` into a scratch directory, and the two commits are made there.

It writes one JSON line per finding of the kept rules (project, rule, file, line, severity,
message, the source line) and prints per project and in total the findings per rule. A project
whose run outlives `--timeout`, or whose tree has more than `--max-files` files, is reported
and skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.history_gate import gate_environment_for_local_run, rule_of, run_bounded  # noqa: E402
from benchmarks.history_prs import git_output  # noqa: E402
from reviewgate.reviewers.builtin.rules import RULES  # noqa: E402
from testing.repo import GIT_IDENTITY  # noqa: E402

BASE_BRANCH = "scan-base"
HEAD_BRANCH = "scan-head"
SOURCE_LINE_LIMIT = 300
# Besides the bug rules (those that block by their record), every security rule: committed secrets included.
KEPT_PREFIXES = ("security/",)
# The manifests that declare the oldest runtime (lenses/target_manifest.py reads them at the base).
MANIFEST_NAMES = frozenset({"package.json", "pyproject.toml", "setup.cfg", "setup.py", "go.mod"})
BUG_RULES = frozenset(rule.id for rule in RULES if rule.by_record)


def kept_rule(rule: str, every_rule: bool) -> bool:
    return every_rule or rule in BUG_RULES or rule.startswith(KEPT_PREFIXES)


def _git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    completed = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True,
                               env={**os.environ, **GIT_IDENTITY, **(env or {})})
    return completed.stdout.decode("utf-8", "replace").strip()


def scan_repository(project: Path, scratch: Path, manifests_in_base: bool = False) -> Path:
    """A scratch repository whose `scan-base` is the empty tree (or, with `manifests_in_base`,
    the tree's runtime manifests alone) and `scan-head` the project's whole tree on top of it
    (a git clone's HEAD, or a plain directory's files)."""
    repo = scratch / "repo"
    if (project / ".git").exists():
        subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(project), str(repo)],
                       capture_output=True, check=True)
        tree = _git(repo, "rev-parse", "HEAD^{tree}")
    else:
        subprocess.run(["git", "init", "--quiet", str(repo)], capture_output=True, check=True)
        work_tree = {"GIT_WORK_TREE": str(project), "GIT_DIR": str(repo / ".git")}
        _git(repo, "add", "--all", "--force", ".", env=work_tree)
        tree = _git(repo, "write-tree", env=work_tree)
    base_tree = manifest_tree(repo, tree) if manifests_in_base else _git(repo, "hash-object", "-t", "tree", "-w", "--stdin")
    base = _git(repo, "commit-tree", base_tree, "-m", "Empty tree" if not manifests_in_base else "Manifests")
    head = _git(repo, "commit-tree", tree, "-p", base, "-m", "Add the whole tree")
    _git(repo, "branch", "--force", BASE_BRANCH, base)
    _git(repo, "branch", "--force", HEAD_BRANCH, head)
    return repo


def manifest_tree(repo: Path, tree: str) -> str:
    """A tree of `tree`'s runtime manifests alone (`package.json`, `pyproject.toml`, `setup.cfg`,
    `setup.py`, `go.mod` at any depth): the rules that read the declared runtime on the target side find them there, while
    every other file still reads as added."""
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "manifest-index")}
    _git(repo, "read-tree", "--empty", env=index)
    rows = [row for row in _git(repo, "ls-tree", "-r", "-z", tree).split("\0")
            if row and " blob " in row.split("\t", 1)[0] and row.rsplit("\t", 1)[-1].rsplit("/", 1)[-1] in MANIFEST_NAMES]
    subprocess.run(["git", "-C", str(repo), "update-index", "-z", "--index-info"], input="".join(f"{row}\0" for row in rows).encode(),
                   capture_output=True, check=True, env={**os.environ, **index})
    return _git(repo, "write-tree", env=index)


def source_line(repo: Path, path: str, line: int, files: dict[str, list[str]]) -> str:
    """The line's text at the scanned tree; `files` keeps each file read once."""
    if path not in files:
        try:
            files[path] = git_output(repo, "show", f"{HEAD_BRANCH}:{path}").splitlines()
        except subprocess.CalledProcessError:
            files[path] = []
    lines = files[path]
    return lines[line - 1].strip()[:SOURCE_LINE_LIMIT] if 0 < line <= len(lines) else ""


def finding_line(project: str, repo: Path, finding: Mapping[str, Any], files: dict[str, list[str]]
                 ) -> dict[str, Any]:
    path, line = str(finding.get("path") or ""), int(finding.get("line") or 0)
    return {
        "project": project,
        "rule": rule_of(finding),
        "file": path,
        "line": line,
        "severity": finding.get("severity"),
        "message": finding.get("title"),
        "body": finding.get("body"),
        "source": source_line(repo, path, line, files) if path and line else "",
    }


def scan_project(project: Path, options: argparse.Namespace) -> dict[str, Any]:
    """{"project", "seconds", "files", "error" or None, "findings": [...], "all_rules": Counter}."""
    result: dict[str, Any] = {"project": project.name, "findings": [], "all_rules": {}, "error": None}
    with tempfile.TemporaryDirectory(prefix="rule-scan-") as scratch_text:
        scratch = Path(scratch_text)
        repo = scan_repository(project, scratch, options.manifests_in_base)
        file_count = len(git_output(repo, "ls-tree", "-r", "--name-only", HEAD_BRANCH).splitlines())
        result["files"] = file_count
        if file_count > options.max_files:
            result["error"] = f"skipped: {file_count} files, more than --max-files {options.max_files}"
            return result
        output_dir = scratch / "out"
        command = [options.gate_python, "-m", "reviewgate", "run", "--repo", str(repo), "--base", BASE_BRANCH,
                   "--head", HEAD_BRANCH, "--reviewer", "builtin", "--no-verify",
                   "--output-dir", str(output_dir), "--cache-dir", str(scratch / "cache")]
        started = time.monotonic()
        exit_code = run_bounded(command, scratch, gate_environment_for_local_run(options.gate_path),
                                scratch / "stdout", scratch / "stderr", options.timeout)
        result["seconds"] = round(time.monotonic() - started, 2)
        report = output_dir / "report.json"
        if exit_code not in (0, 1) or not report.is_file():
            why = f"timed out after {options.timeout:.0f}s" if exit_code is None else f"exit {exit_code}"
            tail = (scratch / "stderr").read_bytes()[-400:].decode("utf-8", "replace").strip()
            result["error"] = f"{why}: {tail}"
            return result
        findings = json.loads(report.read_text(encoding="utf-8")).get("findings") or []
        result["all_rules"] = dict(Counter(rule_of(item) for item in findings))
        sources: dict[str, list[str]] = {}
        result["findings"] = [finding_line(project.name, repo, item, sources) for item in findings
                              if kept_rule(rule_of(item), options.every_rule)]
    return result


def count_lines(name: str, findings: Iterable[Mapping[str, Any]]) -> str:
    rules = Counter(str(item["rule"]) for item in findings)
    listed = ", ".join(f"{rule} {count}" for rule, count in sorted(rules.items())) or "no finding"
    return f"{name}: {sum(rules.values())} findings: {listed}"


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("projects", nargs="+", type=Path, metavar="PROJECT",
                        help="a git clone (its HEAD) or a plain directory such as an unpacked sdist")
    parser.add_argument("--out", type=Path, help="write one JSON line per kept finding here")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per project before it is skipped")
    parser.add_argument("--max-files", type=int, default=20_000, help="skip a project whose tree has more files")
    parser.add_argument("--every-rule", action="store_true",
                        help="keep every rule's findings, not only the bug, security and secrets rules")
    parser.add_argument("--manifests-in-base", action="store_true",
                        help="put the tree's package.json, pyproject.toml, setup.cfg, setup.py and go.mod files in the base, so the "
                             "rules that read the declared runtime on the target side see it (they are then "
                             "not reviewed as added)")
    parser.add_argument("--gate-python", default=sys.executable, help="the Python that runs reviewgate")
    parser.add_argument("--gate-path", type=Path, default=REPO_ROOT,
                        help="the reviewgate checkout to run (default: this one)")
    options = parser.parse_args(argv)
    for project in options.projects:
        if not project.is_dir():
            parser.error(f"{project}: not a directory")
    if options.timeout <= 0 or options.max_files < 1:
        parser.error(f"--timeout must be above 0 and --max-files at least 1 "
                     f"(got {options.timeout}, {options.max_files})")
    if not (options.gate_path / "reviewgate" / "__init__.py").is_file():
        parser.error(f"--gate-path {options.gate_path}: no reviewgate package there")
    options.gate_path = options.gate_path.resolve()
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_arguments(argv)
    everything: list[dict[str, Any]] = []
    out = options.out.open("w", encoding="utf-8") if options.out else None
    try:
        for project in options.projects:
            result = scan_project(project.resolve(), options)
            if result["error"]:
                print(f"{result['project']}: {result['error']}")
                continue
            for finding in result["findings"]:
                if out is not None:
                    out.write(json.dumps(finding, ensure_ascii=False) + "\n")
            everything.extend(result["findings"])
            print(count_lines(f"{result['project']} ({result['files']} files, {result['seconds']:.1f}s)",
                              result["findings"]))
    finally:
        if out is not None:
            out.close()
    if len(options.projects) > 1:
        print(count_lines("total", everything))
    return 0


if __name__ == "__main__":
    sys.exit(main())
