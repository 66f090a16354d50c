"""How often does the gate's builtin reviewer block real merged pull requests, and is a block
likelier on a PR that a later fix had to touch? One command:

    python benchmarks/history_benchmark.py REPO_DIR [REPO_DIR ...] --count 100 --out runs.jsonl --szz

For each full clone it walks `git log --first-parent` of HEAD for the last N merged PRs (merge
commits naming a PR: base M^1, head M^2, branch from `Merge pull request #N from owner/branch`;
squash merges `... (#N)`: base C^, head C), runs the gate on each as a GitHub pull_request run
would (benchmarks/history_gate.py), and prints per repository and in total: PRs reviewed,
blocking rate, runs blocked by an error, blocking findings per rule, median and max seconds.
`--szz` adds the lift over later fixes (benchmarks/history_szz.py). `--gate-path` points at
another checkout of reviewgate, so the same command measures before and after a change.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.history_gate import review_pull_request, shared_clone  # noqa: E402
from benchmarks.history_lift import print_szz  # noqa: E402
from benchmarks.history_prs import list_pull_requests  # noqa: E402
from benchmarks.history_szz import SzzLimits, szz_lift  # noqa: E402

TOP_RULES = 12


def is_error(record: dict[str, Any]) -> bool:
    """Exit 3 (the review could not be done), a crash, or a timeout."""
    return record.get("verdict") in ("error", "blocked") or record.get("exit_code") not in (0, 1)


def error_summary(error: str) -> str:
    """The error's first line, and for a stack dump its innermost frame (faulthandler prints it first)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    frame = next((line for line in lines if line.startswith("File ")), None)
    first = lines[0][:200] if lines else "(no message)"
    return f"{first} ... {frame}" if frame else first


def summary_lines(name: str, records: list[dict[str, Any]]) -> list[str]:
    reviewed = len(records)
    if reviewed == 0:
        return [f"{name}: no merged pull requests found"]
    blocked = sum(1 for item in records if item.get("verdict") == "request_changes")
    errors = sum(1 for item in records if is_error(item))
    seconds = [float(item.get("seconds") or 0.0) for item in records]
    rules = Counter(finding["rule"] for item in records for finding in item.get("blocking") or [])
    lines = [
        f"{name}: {reviewed} PRs, blocked {blocked} ({100.0 * blocked / reviewed:.1f}%), "
        f"errors {errors}, seconds median {statistics.median(seconds):.2f} max {max(seconds):.2f}",
    ]
    if rules:
        lines.append("  blocking findings by rule: " + ", ".join(
            f"{rule} {count}" for rule, count in rules.most_common(TOP_RULES)))
    for item in records:
        if is_error(item):
            lines.append(f"  error on #{item['pr']}: {error_summary(str(item.get('error') or ''))}")
    return lines


def review_repository(repo: Path, options: argparse.Namespace) -> list[dict[str, Any]]:
    requests = list_pull_requests(repo, options.count, options.skip)
    with tempfile.TemporaryDirectory(prefix="history-clone-") as scratch:
        clone = shared_clone(repo, Path(scratch))
        with ThreadPoolExecutor(max_workers=options.jobs) as pool:
            futures = [pool.submit(review_pull_request, clone, repo.name, request, options.gate_python,
                                   options.gate_path, options.timeout) for request in requests]
            records = []
            for number, future in enumerate(futures, 1):
                record = future.result()
                records.append(record)
                print(f"  [{repo.name} {number}/{len(requests)}] #{record['pr']} exit {record['exit_code']} "
                      f"{record['verdict']} {record['seconds']:.1f}s", file=sys.stderr, flush=True)
    return records


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_records(path: Path, records: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("repos", nargs="+", type=Path, metavar="REPO_DIR", help="full clones to measure")
    parser.add_argument("--count", type=int, default=100, help="last N merged PRs of HEAD's first-parent history")
    parser.add_argument("--skip", type=int, default=0,
                        help="start this many merged PRs back from HEAD (so later fixes have had time)")
    parser.add_argument("--out", type=Path, help="write one JSON line per PR here")
    parser.add_argument("--jobs", type=int, default=2, help="gate runs at once (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per gate run before it is an error")
    parser.add_argument("--gate-python", default=sys.executable, help="the Python that runs reviewgate")
    parser.add_argument("--gate-path", type=Path, default=REPO_ROOT,
                        help="the reviewgate checkout to run (default: this one)")
    parser.add_argument("--records", type=Path,
                        help="read the gate results from an earlier --out instead of running the gate")
    parser.add_argument("--szz", action="store_true", help="also measure the lift over PRs a later fix touched")
    parser.add_argument("--szz-window", type=int, default=300,
                        help="fixes count for a PR within this many first-parent commits after it")
    parser.add_argument("--szz-budget", type=float, default=600.0, help="seconds of blame per repository")
    options = parser.parse_args(argv)
    for repo in options.repos:
        if not (repo / ".git").exists():
            parser.error(f"{repo}: not a git clone (no .git)")
    if options.count < 1 or options.jobs < 1 or options.skip < 0:
        parser.error(f"--count and --jobs must be at least 1, --skip at least 0 "
                     f"(got {options.count}, {options.jobs}, {options.skip})")
    if not (options.gate_path / "reviewgate" / "__init__.py").is_file():
        parser.error(f"--gate-path {options.gate_path}: no reviewgate package there")
    if options.records is not None and not options.records.is_file():
        parser.error(f"--records {options.records}: no such file")
    if options.records is not None and options.out is not None:
        parser.error(f"--out {options.out} with --records {options.records}: no gate runs to write")
    options.gate_path = options.gate_path.resolve()
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_arguments(argv)
    earlier = read_records(options.records) if options.records else []
    everything: list[dict[str, Any]] = []
    per_repo: dict[str, list[dict[str, Any]]] = {}
    for repo in options.repos:
        repo = repo.resolve()
        if options.records:
            records = [item for item in earlier if item["repo"] == repo.name][: options.count]
        else:
            records = review_repository(repo, options)
        per_repo[repo.name] = records
        everything.extend(records)
    if options.out:
        write_records(options.out, everything)
    print(f"gate: {options.gate_path} (python {options.gate_python})")
    for name, records in per_repo.items():
        print("\n".join(summary_lines(name, records)))
    if len(per_repo) > 1:
        print("\n".join(summary_lines("total", everything)))
    if options.szz:
        limits = SzzLimits(window=options.szz_window, budget_seconds=options.szz_budget)
        lifts = [szz_lift(repo.resolve(), per_repo[repo.resolve().name], limits) for repo in options.repos]
        print_szz(lifts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
