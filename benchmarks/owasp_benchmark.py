"""How the shell and SQL rules score on the OWASP Benchmark (Java), a labelled set of servlets: one
command over `rule_scan.py`'s findings for a copy of the Benchmark's `src/main/java`:

    python benchmarks/rule_scan.py BENCHMARK_SOURCES --max-files 100000 --out findings.jsonl
    python benchmarks/owasp_benchmark.py BenchmarkJava/expectedresults-1.2.csv findings.jsonl

Each test case is one servlet (`BenchmarkTestNNNNN.java`) of one category, a real vulnerability or
not. Per category it prints the true and false cases a finding of the category's rule lands in,
blocking (major) and at any severity: the true positive rate, the false positive rate and their
difference, the Benchmark's own score.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

# The Benchmark's categories the rules read, and the rule of each.
RULES = {"sqli": "security/sql-injection", "cmdi": "security/shell-injection"}
_TEST_NAME = re.compile(r"(BenchmarkTest\d{5})\.java$")


def expected_results(path: Path) -> dict[str, tuple[str, bool]]:
    """Each test case's category and whether it is a real vulnerability."""
    with path.open(newline="") as handle:
        return {row[0]: (row[1], row[2] == "true") for row in csv.reader(handle) if row and not row[0].startswith("#")}


def found_in(path: Path, expected: dict[str, tuple[str, bool]]) -> dict[str, bool]:
    """Test case -> whether a finding of its category's rule there blocks."""
    found: dict[str, bool] = {}
    with path.open() as handle:
        for line in handle:
            finding = json.loads(line)
            name = _TEST_NAME.search(finding["file"])
            if name is None or finding["rule"] != RULES.get(expected.get(name.group(1), ("",))[0]):
                continue
            blocks = finding["severity"] in ("major", "blocker")
            found[name.group(1)] = found.get(name.group(1), False) or blocks
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expected", type=Path, help="the Benchmark's expectedresults-*.csv")
    parser.add_argument("findings", type=Path, nargs="+", help="rule_scan.py --out files to score")
    args = parser.parse_args(argv)
    for path in (args.expected, *args.findings):
        if not path.is_file():
            parser.error(f"{path}: no such file")
    expected = expected_results(args.expected)
    for path in args.findings:
        found = found_in(path, expected)
        print(path)
        for category in RULES:
            true = [name for name, (kind, real) in expected.items() if kind == category and real]
            false = [name for name, (kind, real) in expected.items() if kind == category and not real]
            if not true or not false:
                print(f"  {category}: no cases in {args.expected}")
                continue
            blocked = (sum(found.get(name, False) for name in true), sum(found.get(name, False) for name in false))
            reported = (sum(name in found for name in true), sum(name in found for name in false))
            print(f"  {category}: {len(true)} true, {len(false)} false; "
                  f"blocking: TPR {blocked[0] / len(true):.1%}, FPR {blocked[1] / len(false):.1%}, "
                  f"score {blocked[0] / len(true) - blocked[1] / len(false):+.1%}; "
                  f"any severity: TPR {reported[0] / len(true):.1%}, FPR {reported[1] / len(false):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
