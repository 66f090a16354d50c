"""The numbers of the SZZ lift: block rates of later-fixed and not-fixed PRs, the Mantel-Haenszel
risk ratio over size strata (for every block, and for code-reading blocks alone), blocking findings
near fixed lines against chance, and the later-fixed PRs with a finding on a line the fix changed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from benchmarks.history_szz import SzzResult

BUCKETS = 4  # quartiles of added lines, within each repository


def size_strata(rows: Sequence[dict[str, Any]], prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Rows split into BUCKETS groups of (nearly) equal size by added-line count."""
    ordered = sorted(rows, key=lambda row: row["added"])
    strata: dict[str, list[dict[str, Any]]] = {}
    for rank, row in enumerate(ordered):
        bucket = rank * BUCKETS // len(ordered)
        strata.setdefault(f"{prefix}q{bucket + 1}", []).append(row)
    return strata


def _tables(strata: dict[str, list[dict[str, Any]]], outcome: str) -> list[tuple[int, int, int, int]]:
    """Per stratum: (fixed with the outcome, fixed, not fixed with the outcome, not fixed)."""
    tables = []
    for rows in strata.values():
        fixed = [row for row in rows if row["fixed"]]
        unfixed = [row for row in rows if not row["fixed"]]
        tables.append((sum(bool(row.get(outcome)) for row in fixed), len(fixed),
                       sum(bool(row.get(outcome)) for row in unfixed), len(unfixed)))
    return tables


def mantel_haenszel(strata: dict[str, list[dict[str, Any]]], outcome: str = "blocked") -> float | None:
    """Risk ratio of the outcome (a block), later-fixed vs not fixed, adjusted for the strata; None when undefined."""
    tables = _tables(strata, outcome)
    numerator = sum(a * n0 / (n1 + n0) for a, n1, c, n0 in tables if n1 + n0)
    denominator = sum(c * n1 / (n1 + n0) for a, n1, c, n0 in tables if n1 + n0)
    return numerator / denominator if numerator and denominator else None


def mantel_haenszel_interval(strata: dict[str, list[dict[str, Any]]], outcome: str = "blocked"
                             ) -> tuple[float, float] | None:
    """The 95% confidence interval of the Mantel-Haenszel risk ratio (Greenland-Robins variance)."""
    ratio = mantel_haenszel(strata, outcome)
    if ratio is None:
        return None
    tables = [table for table in _tables(strata, outcome) if table[1] + table[3]]
    numerator = sum(a * n0 / (n1 + n0) for a, n1, c, n0 in tables)
    denominator = sum(c * n1 / (n1 + n0) for a, n1, c, n0 in tables)
    spread = sum((n1 * n0 * (a + c) - a * c * (n1 + n0)) / (n1 + n0) ** 2 for a, n1, c, n0 in tables)
    half_width = 1.96 * math.sqrt(max(spread, 0.0) / (numerator * denominator))
    return ratio * math.exp(-half_width), ratio * math.exp(half_width)


def _rate(rows: Sequence[dict[str, Any]], outcome: str = "blocked") -> str:
    count = sum(bool(row.get(outcome)) for row in rows)
    return f"{count}/{len(rows)} ({100.0 * count / len(rows):.1f}%)" if rows else "0/0"


def _ratio(strata: dict[str, list[dict[str, Any]]], outcome: str = "blocked") -> str:
    value, interval = mantel_haenszel(strata, outcome), mantel_haenszel_interval(strata, outcome)
    if value is None or interval is None:
        return "undefined (none among later-fixed or among not-fixed PRs)"
    return f"{value:.2f} (95% CI {interval[0]:.2f}-{interval[1]:.2f})"


def lift_lines(name: str, rows: Sequence[dict[str, Any]], strata: dict[str, list[dict[str, Any]]]) -> list[str]:
    fixed = [row for row in rows if row["fixed"]]
    unfixed = [row for row in rows if not row["fixed"]]
    lines = [f"{name}: later-fixed PRs blocked {_rate(fixed)} vs not fixed {_rate(unfixed)}"]
    lines.append(f"  risk ratio raw {_ratio({'all': list(rows)})}, "
                 f"size-adjusted (Mantel-Haenszel) {_ratio(strata)}")
    for label, members in strata.items():
        sizes = [row["added"] for row in members]
        lines.append(f"  {label} added {min(sizes)}..{max(sizes)}: fixed {_rate([r for r in members if r['fixed']])}"
                     f", not fixed {_rate([r for r in members if not r['fixed']])}")
    located = sum(row.get("located_blocking", 0) for row in fixed)
    near = sum(row["near"] for row in fixed)
    chance = sum(row["chance"] for row in fixed)
    lines.append(f"  blocking findings on later-fixed PRs within +-10 lines of a fixed line: {near} of {located}"
                 f" (chance {chance:.1f})")
    lines.append(f"  code-reading blocks (not tests/, process/): later-fixed {_rate(fixed, 'code_blocked')} "
                 f"vs not fixed {_rate(unfixed, 'code_blocked')}; risk ratio raw "
                 f"{_ratio({'all': list(rows)}, 'code_blocked')}, size-adjusted {_ratio(strata, 'code_blocked')}")
    lines.append(f"  a finding at any severity: later-fixed {_rate(fixed, 'found')} vs not fixed "
                 f"{_rate(unfixed, 'found')}; size-adjusted risk ratio {_ratio(strata, 'found')}")
    lines.append(f"  a code-reading finding outside test files, any severity: later-fixed "
                 f"{_rate(fixed, 'code_found')} vs not fixed {_rate(unfixed, 'code_found')}; "
                 f"size-adjusted risk ratio {_ratio(strata, 'code_found')}")
    lines.append(f"    of class correctness (the class a bug blocks on), outside test files: later-fixed "
                 f"{_rate(fixed, 'correctness_found')} vs not fixed {_rate(unfixed, 'correctness_found')}; "
                 f"size-adjusted risk ratio {_ratio(strata, 'correctness_found')}")
    on_fixed = sum(1 for row in fixed if row.get("on_fixed_line"))
    share = f"{100.0 * on_fixed / len(fixed):.1f}%" if fixed else "n/a"
    lines.append(f"  later-fixed PRs with a finding (any severity) on a line the fix changed: "
                 f"{on_fixed} of {len(fixed)} ({share})")
    on_code = sum(1 for row in fixed if row.get("on_fixed_code"))
    lines.append(f"    of them by a code-reading rule (not tests/, process/) outside test files: {on_code}")
    lines += [f"    #{row['pr']}: {', '.join(row.get('on_fixed_findings') or [])}"
              for row in fixed if row.get("on_fixed_line")]
    return lines


def print_szz(results: Sequence[SzzResult]) -> None:
    print("\nSZZ lift (errors left out; a PR is later-fixed when a later fix's blamed line came from it)")
    every_row: list[dict[str, Any]] = []
    every_stratum: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        rows = [row for row in result.rows if not row["error"]]
        strata = size_strata(rows, f"{result.repo}:") if rows else {}
        print(f"{result.repo}: fixes found {result.fixes_found}, scanned {result.fixes_scanned}, "
              f"hunks blamed {result.hunks_blamed}, later-fixed PRs {len(result.fixed_lines)}")
        for bound in result.bounds:
            print(f"  bounded: {bound}")
        if result.fixed_by:
            print("  later-fixed: " + ", ".join(
                f"#{number} by {' '.join(sorted(commit[:10] for commit in commits))}"
                for number, commits in sorted(result.fixed_by.items())))
        if rows:
            print("\n".join(lift_lines(result.repo, rows, strata)))
        every_row.extend(rows)
        every_stratum.update(strata)
    if len(results) > 1 and every_row:
        print("\n".join(lift_lines("total (strata: repository x size quartile)", every_row, every_stratum)))
    if every_row:
        print("\n".join(rule_lift_lines(every_row, every_stratum)))


def rule_lift_lines(rows: Sequence[dict[str, Any]], strata: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Per code-reading rule: the PRs with a finding of it outside test files, later-fixed against not
    fixed, size-adjusted; what the rule would add to the block's lift if each of its findings blocked."""
    rules = sorted({rule for row in rows for rule in row.get("code_rules") or ()})
    lines = ["by code-reading rule (a finding outside test files, any severity): later-fixed vs not fixed"]
    for rule in rules:
        outcome = f"rule:{rule}"
        marked = {name: [{**row, outcome: rule in (row.get("code_rules") or ())} for row in members]
                  for name, members in strata.items()}
        every = [row for members in marked.values() for row in members]
        lines.append(f"  {rule}: {_rate([row for row in every if row['fixed']], outcome)} vs "
                     f"{_rate([row for row in every if not row['fixed']], outcome)}; size-adjusted "
                     f"{_ratio(marked, outcome)}")
    return lines if rules else [*lines, "  none"]
