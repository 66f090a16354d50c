"""Write docs/lenses.md's rule pages and its record of the bug rules from the rule declarations
(each lens module's `RULES`, gathered by reviewgate/reviewers/builtin/rules.py):

    python tools/rule_docs.py           # rewrite the generated parts of docs/lenses.md
    python tools/rule_docs.py --check   # exit 1 if they are not what the declarations say

Only the text between each `<!-- generated: NAME ... -->` line and its `<!-- end: NAME -->` line
is written; the rest of the file is the writer's. tests/test_lens_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewgate.reviewers.builtin.rule import Example, File, Rule  # noqa: E402
from reviewgate.reviewers.builtin.rules import RULES  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lenses.md"
COMMAND = "python tools/rule_docs.py"


def _fence(code: str) -> str:
    return "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))


def _block(file: File) -> list[str]:
    code = file.code.rstrip("\n")
    fence = _fence(code)
    return [f"{fence}{file.language}", code, fence, ""]


def _files(intro: str, files: Iterable[File]) -> list[str]:
    lines: list[str] = []
    for file in files:
        lines += [f"{intro} `{file.path}`:", "", *_block(file)]
    return lines


def _example(verdict: str, example: Example, previous_base: tuple[File, ...]) -> list[str]:
    lines: list[str] = []
    if example.base and example.base == previous_base:
        lines += ["At the merge base, the same files as above.", ""]
    else:
        lines += _files("At the merge base,", example.base)
    lines += _files("The change also writes", example.branch)
    where = f"`{example.file.path}`"
    if example.branch_name != "feature":
        where += f", on a branch named `{example.branch_name}`"
    caption = f" {example.caption}" if example.caption else ""
    return [*lines, f"{verdict} ({where}):{caption}", "", *_block(example.file)]


def _severity(rule: Rule) -> str:
    if rule.by_record and not rule.earned:
        return f"{rule.finding_class.value}, minor until its record earns {rule.severity.value} (below)"
    return f"{rule.finding_class.value}, {rule.severity.value}"


def rule_page(rule: Rule) -> list[str]:
    lines = [f"### `{rule.id}`", "", f"**{rule.short}** ({_severity(rule)}). {rule.full}", ""]
    previous: tuple[File, ...] = ()
    for index in range(max(len(rule.fires), len(rule.does_not_fire))):
        for verdict, examples in (("Fires", rule.fires), ("Does not fire", rule.does_not_fire)):
            if index < len(examples):
                lines += _example(verdict, examples[index], previous)
                previous = examples[index].base
    return lines


def rule_pages(rules: Iterable[Rule]) -> list[str]:
    lines: list[str] = []
    for rule in rules:
        lines += rule_page(rule)
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def record_table(rules: Iterable[Rule]) -> list[str]:
    lines = ["| rule | findings | holding | severity | what was read |", "|---|---|---|---|---|"]
    for rule in rules:
        if not rule.by_record:
            continue
        record = rule.record
        counts = ("unmeasured", "unmeasured") if record is None else (str(record.findings), str(record.holding))
        where = "not measured yet" if record is None else _cell(record.where)
        lines.append(f"| `{rule.id}` | {counts[0]} | {counts[1]} | {rule.reported_severity.value} | {where} |")
    return [*lines, ""]


GENERATED = {"rule-pages": rule_pages, "bug-rule-records": record_table}
_REGION = re.compile(r"^(?P<start><!-- generated: (?P<name>[a-z-]+) .*-->\n)(?P<body>.*?)^(?P<end><!-- end: (?P=name) -->)$",
                     re.MULTILINE | re.DOTALL)


def render(text: str, rules: tuple[Rule, ...] = RULES) -> str:
    """`text` with each generated region written anew from `rules`."""
    found: set[str] = set()

    def write(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in GENERATED:
            raise SystemExit(f"{DOCS}: unknown generated region {name!r}")
        found.add(name)
        body = "\n".join(GENERATED[name](rules))
        return f"{match.group('start')}\n{body}\n{match.group('end')}"

    result = _REGION.sub(write, text)
    missing = sorted(set(GENERATED) - found)
    if missing:
        raise SystemExit(f"{DOCS}: no generated region {', '.join(missing)}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/lenses.md is not up to date")
    options = parser.parse_args(argv)
    text = DOCS.read_text(encoding="utf-8")
    fresh = render(text)
    if options.check:
        if fresh != text:
            print(f"{DOCS}: out of date with the rule declarations; run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    if fresh != text:
        DOCS.write_text(fresh, encoding="utf-8")
        print(f"wrote {DOCS}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
