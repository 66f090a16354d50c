"""How many known injection points do the security rules block, and how many safe look-alikes?
One command, over what benchmarks/rule_scan.py wrote for the applications a ground truth covers:

    python benchmarks/injection_truth.py findings.jsonl TRUTH [TRUTH ...] [--list]

A TRUTH is either a hand-read table (markdown: `| app | file:line | kind | source | how |
exploitable | note |`, kind sql/shell/eval, exploitable yes/no/conditional; the app is the
project name rule_scan printed) or Brakeman's own test expectations reduced to a table (TSV with
columns app, path, line, warning_type, confidence, assert, request_input, scan; `assert` is
`warning` or `no_warning`, `request_input` yes/no/unclear as read in the code). A Brakeman row
counts as a place request input reaches (a positive) where Brakeman asserts a warning there and the
value comes from the request (for redirects: at high confidence), and as a look-alike where it
asserts no warning; rows of a rescan after a config change are left out, the tree being scanned as
it is. A place blocks where a major or blocker finding of its kind's rule is on its line.

Prints per truth and kind the positives that block and the look-alikes that block; `--list` names
each positive that does not, each look-alike that does, and each blocking finding on a line no
row names.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path
from typing import NamedTuple

RULES = {
    "sql": "security/sql-injection", "shell": "security/shell-injection", "eval": "security/eval",
    "SQL Injection": "security/sql-injection", "Command Injection": "security/shell-injection",
    "Dangerous Eval": "security/eval", "Redirect": "security/open-redirect",
}


class Place(NamedTuple):
    app: str
    path: str
    line: int
    rule: str
    positive: bool  # request input reaches it (else a look-alike that must not block)
    note: str


def hand_read(path: Path) -> list[Place]:
    """The rows of a markdown ground truth: exploitable `yes` is a positive, `no` a look-alike."""
    places = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 7 or cells[2] not in ("sql", "shell", "eval") or cells[5] not in ("yes", "no"):
            continue
        file, _, number = cells[1].rpartition(":")
        places.append(Place(cells[0], file, int(number), RULES[cells[2]], cells[5] == "yes", cells[4]))
    return places


def brakeman(path: Path) -> list[Place]:
    """The rows of Brakeman's expectations: a warning on request input is a positive, an asserted
    absence a look-alike."""
    places = []
    with path.open(encoding="utf-8") as table:
        for row in csv.DictReader(table, delimiter="\t"):
            if row["scan"] != "run_scan" or row["warning_type"] not in RULES or not row["line"]:
                continue
            redirect = row["warning_type"] == "Redirect"
            if row["assert"] == "warning":
                positive = row["confidence"] == "High" if redirect else row["request_input"] == "yes"
                if not positive:
                    continue
            for file in row["path"].split(";"):
                places.append(Place(row["app"], file, int(row["line"]), RULES[row["warning_type"]],
                                    row["assert"] == "warning", row["warning_type"]))
    return places


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("findings", type=Path, help="what rule_scan.py wrote")
    parser.add_argument("truths", type=Path, nargs="+", help="a markdown table read by hand, or a Brakeman TSV")
    parser.add_argument("--list", action="store_true", help="name each miss and each wrong block")
    arguments = parser.parse_args()
    blocking = {(item["project"], item["file"], item["line"], item["rule"])
                for item in map(json.loads, arguments.findings.read_text(encoding="utf-8").splitlines())
                if item["severity"] in ("major", "blocker")}
    named = set()
    for truth in arguments.truths:
        places = brakeman(truth) if truth.suffix == ".tsv" else hand_read(truth)
        tally: Counter[tuple[str, bool, bool]] = Counter()
        for place in places:
            key = (place.app, place.path, place.line, place.rule)
            named.add(key)
            blocked = key in blocking
            tally[(place.rule, place.positive, blocked)] += 1
            if arguments.list and blocked != place.positive:
                print(f"  {'missed' if place.positive else 'wrong block'}: {place.app} {place.path}:{place.line} "
                      f"{place.rule} ({place.note})")
        print(f"{truth.name}:")
        for rule in sorted({rule for rule, _, _ in tally}):
            positives = tally[(rule, True, True)] + tally[(rule, True, False)]
            look_alikes = tally[(rule, False, True)] + tally[(rule, False, False)]
            print(f"  {rule}: {tally[(rule, True, True)]} of {positives} places block; "
                  f"{tally[(rule, False, True)]} of {look_alikes} look-alikes block")
    apps = {place[0] for place in named}
    if arguments.list:
        for key in sorted(blocking - named):
            if key[0] in apps and key[3] in RULES.values():
                print(f"  blocks where no row is: {key[0]} {key[1]}:{key[2]} {key[3]}")


if __name__ == "__main__":
    main()
